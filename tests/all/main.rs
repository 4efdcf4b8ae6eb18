//! clozelab's integration tests, one module per area, linked into one test binary: each
//! binary links every dependency, so one link instead of twelve is most of what keeps the test
//! command's build short and the shared target directory small.
//!
//! Run one area with `cargo test --test all table1::`, one test by its full name.

mod common;

mod cli;
mod data;
mod estimators;
mod figures;
mod game;
mod gguf;
mod gpt_neox_golden;
mod gpu_kernels;
mod half_precision;
mod jatos_batch;
mod joined_contexts;
mod llama_golden;
mod loader;
mod model_golden;
mod norming;
mod norming_state;
mod op_bodies;
mod op_references;
mod package;
mod panel_product;
mod participant;
mod participant_texts;
mod predictors;
mod replayed_steps;
mod results;
mod robustness;
mod runs;
mod serve;
mod serve_faults;
mod sharded_jobs;
mod simulated_study;
mod slurm;
mod speed;
mod study_config;
mod study_data;
mod surprisal;
mod table1;
mod threaded_product;
mod token_games;
mod tokenizer;
