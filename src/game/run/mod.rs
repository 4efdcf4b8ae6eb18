//! Playing a run: the next-word game's per-participant state machine ([`session`]) with its running
//! score ([`score`]); which run an answer belongs to ([`crate::game::design::run_scope`]); where answers are stored
//! ([`store`]) and sent ([`outbox`]); a participant declining or withdrawing ([`withdrawal`]);
//! people's answers per context for feedback ([`humans`]); exports ([`export`]); a run inside JATOS
//! ([`crate::game::design::jatos_run`]) with its batch session as the lists' ledger ([`jatos_batch`]) and adaptive
//! norming's answer counts ([`norming_state`]).

pub mod export;
pub mod humans;
pub mod jatos_batch;
pub mod json_pointer;
pub mod norming_state;
pub mod outbox;
pub mod score;
pub mod session;
pub mod store;
pub mod withdrawal;
