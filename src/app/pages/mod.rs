pub mod analysis;
pub mod model;
pub mod next_token;
pub mod play;
pub mod tokens;
