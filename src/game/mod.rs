//! The next-word cloze game (issue 5): passages, studies, the per-participant state machine,
//! storage and exports. Pure Rust; the Leptos pages only wire it to the DOM.

pub mod export;
pub mod humans;
pub mod imports;
pub mod jatos;
pub mod outbox;
pub mod passages;
pub mod score;
pub mod session;
pub mod store;
pub mod study;
pub mod tokens;
