pub mod backend_status;
pub mod completion;
pub mod consent;
pub mod distribution_chart;
pub mod header;
pub mod model_loader;
pub mod outcome;
pub mod word_bars;
