//! Norming that stops when it knows: each context's precision after the answers so far and a
//! target a researcher states on it ([`precision`]), the simulation on real responses that
//! shows what adaptive assignment saves against a fixed N ([`simulation`]) and its seeds' runs
//! as a table a sharded job merges ([`seed_runs`]), and a study's
//! progress towards its target ([`progress`]).

pub mod precision;
pub mod progress;
pub mod seed_runs;
pub mod simulation;
