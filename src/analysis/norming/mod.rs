//! Norming that stops when it knows: each context's precision after the answers so far and a
//! target a researcher states on it ([`precision`]), and the simulation on real responses that
//! shows what adaptive assignment saves against a fixed N ([`simulation`]).

pub mod precision;
pub mod simulation;
