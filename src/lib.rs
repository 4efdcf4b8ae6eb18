//! clozelab: human next-word guesses against language models' (GPT-2, Pythia, SmolLM2),
//! computed on the user's own machine.
//!
//! Read it top-down, by purpose:
//! - [`model`]: the GPT-2, GPT-NeoX and Llama families in burn (config, modules with a shareable
//!   KV cache, checkpoint loader, the random test models);
//! - [`text`]: the byte-level BPE tokenizer of every family and the rules for words (first word,
//!   normalisation);
//! - [`runtime`]: devices (burn-wgpu or the CPU), a loaded engine, next-token distributions,
//!   the production probes' runs and the typed protocol between the page and the worker;
//! - [`estimators`]: a model's word distributions (Monte Carlo sampler, exact scorer) over one
//!   shared tree walk, decoding strategies, progress and cancellation;
//! - [`analysis`]: metrics (TVD, ECE, W1, …), Table 1 of Ilia & Aziz (2024) and its companions,
//!   human perplexity, the production probes and the papers' figures;
//! - [`data`]: import and export formats, one file per format (delimited text, the OSF norms,
//!   the long format, the Provo JSON Lines), and what a web host's answer for a file is;
//! - [`game`]: a study's design, playing a run (state machines, storage and sending, JATOS),
//!   results read back into the tables for the paper, and the packages a study goes out in;
//! - `server` (native): `clozelab serve`, a study's own server (its site, and its answers in
//!   SQLite);
//! - `app` (wasm32): the Leptos pages and the inference worker; `cli` (native): the command
//!   line and its benchmarks.
//!
//! Dependencies point one way, with no cycles (`scripts/check_layers.py` checks every import
//! against the table in `docs/architecture.md`): `rng` ← `model`; `text` ← `data` ← `analysis`;
//! `analysis` and `model` ← `estimators` ← `runtime` ← `app`/`cli`; `game` uses `analysis`,
//! `data`, `text` and `rng`, and `runtime` (for the exclusion rules its protocol carries),
//! `app` and `cli` use `game`. [`rng`] is the one seeded generator everything random uses.

// Autotune would time candidate kernels on a participant's GPU in the middle of a study.
#[cfg(all(target_arch = "wasm32", feature = "autotune"))]
compile_error!(
    "the `autotune` feature is native only: build the browser's wasm with --no-default-features (index.html does)"
);

pub mod analysis;
pub mod data;
pub mod estimators;
pub mod game;
pub mod model;
pub mod rng;
pub mod runtime;
#[cfg(not(target_arch = "wasm32"))]
pub mod server;
pub mod text;

#[cfg(target_arch = "wasm32")]
pub mod app;
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
