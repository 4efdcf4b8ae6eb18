pub mod game;
pub mod next_token;
