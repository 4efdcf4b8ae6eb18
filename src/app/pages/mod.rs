//! One module per route: Play at `/` and `/play/:passage` (and a study's run) ([`play`]), the
//! next-token games at `/tokens/:game/:passage` ([`tokens`]), Next token ([`next_token`]),
//! Model ([`model`]), Analysis ([`analysis`]) and the Study page at `/study` ([`study`]).

pub mod analysis;
pub mod model;
pub mod next_token;
pub mod play;
pub mod study;
pub mod tokens;
