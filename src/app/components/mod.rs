//! Components more than one page uses: the header and backend line (with the weights'
//! precision, [`precision_line`]), the model loader and the model switch ([`model_switch`]: a folder URL or a hub model and revision) (and on the first screen, [`get_model`], the ways to a model when none is loaded), consent and completion screens, attention
//! checks ([`attention_check`]), a study's questions ([`questionnaire`], asked by [`question_block`], ending a run early in [`screening`]), declining and withdrawing ([`withdrawal`]), a study already full ([`study_full`]), the progress bar,
//! where the answers are kept when not in lasting storage ([`storage_warning`]), the charts of word and token distributions, the participants of imported results, and
//! [`outcome`] for every asynchronous result's loading and error states.

pub mod attention_check;
pub mod backend_status;
pub mod completion;
pub mod consent;
pub mod distribution_chart;
pub mod error_note;
pub mod get_model;
pub mod header;
pub mod model_loader;
pub mod model_switch;
pub mod outcome;
pub mod participant_runs;
pub mod precision_line;
pub mod progress_bar;
pub mod question_block;
pub mod questionnaire;
pub mod run_stop;
pub mod screening;
pub mod storage_warning;
pub mod study_full;
pub mod with_model;
pub mod withdrawal;
pub mod word_bars;
