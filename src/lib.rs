//! clozelab: human next-word guesses against GPT-2's, computed on the user's own machine.
//!
//! The core (model, tokenizer, inference) is plain Rust that compiles and tests natively;
//! the browser app (`app`, wasm32 only) wires it to Leptos signals.

#[cfg(target_arch = "wasm32")]
pub mod app;
pub mod backend;
pub mod data;
pub mod engine;
pub mod game;
pub mod inference;
pub mod metrics;
pub mod model;
pub mod progress;
pub mod provo;
pub mod sampling;
pub mod table1;
pub mod testmodel;
pub mod tokenizer;
pub mod wordprob;
pub mod words;
pub mod wordsampler;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(not(target_arch = "wasm32"))]
pub mod bench;
#[cfg(not(target_arch = "wasm32"))]
pub mod modeldir;
