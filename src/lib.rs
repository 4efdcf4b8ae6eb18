//! clozelab: human next-word guesses against GPT-2's, computed on the user's own machine.
//!
//! Read it top-down, by purpose:
//! - [`model`]: GPT-2 in burn (config, modules with a shareable KV cache, checkpoint loader,
//!   the random test model);
//! - [`text`]: the GPT-2 tokenizer and the rules for words (first word, normalisation);
//! - [`runtime`]: devices (burn-wgpu or the CPU), a loaded engine, next-token inference and
//!   the typed protocol between the page and the inference worker;
//! - [`estimators`]: GPT-2's word distributions (Monte Carlo sampler, exact scorer) over one
//!   shared tree walk, decoding strategies, progress and cancellation;
//! - [`analysis`]: metrics (TVD, ECE, W1, …) and Table 1 of Ilia & Aziz (2024);
//! - [`data`]: import and export formats (Provo norms, long format, JSON Lines);
//! - [`game`]: the cloze game's state machine, studies, storage trait and exports;
//! - `app` (wasm32): the Leptos pages and the inference worker; `cli` (native): the command
//!   line and its benchmarks.
//!
//! Dependencies point one way, with no cycles: `rng`, `text` ← `model`, `data` ← `analysis` ←
//! `estimators` ← `runtime` ← `app`/`cli`, and `game` ← `app` (`game` uses `analysis` and
//! `data`). [`rng`] is the one seeded generator everything random uses.

pub mod analysis;
pub mod data;
pub mod estimators;
pub mod game;
pub mod model;
pub mod rng;
pub mod runtime;
pub mod text;

#[cfg(target_arch = "wasm32")]
pub mod app;
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
