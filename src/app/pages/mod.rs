pub mod next_token;
