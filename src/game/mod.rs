//! The games and the studies around them: passages, study configs, the next-word game's
//! per-participant state machine, storage and exports, the next-token games (`tokens`), and a
//! study on JATOS (`jatos`: the run inside JATOS; `jatos_archive`: the study archive JATOS
//! imports). Pure Rust; the Leptos pages only wire it to the DOM.

pub mod export;
pub mod humans;
pub mod imports;
pub mod jatos_archive;
pub mod jatos_run;
pub mod outbox;
pub mod passages;
pub mod score;
pub mod session;
pub mod store;
pub mod study;
pub mod tokens;
