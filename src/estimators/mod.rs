//! GPT-2's next-word distributions: the Monte Carlo sampler ([`sampler`]) and the exact word
//! scorer ([`wordprob`]), both walking token trees over one shared KV cache ([`tree`]);
//! decoding strategies ([`decoding`]); progress reports and cancellation ([`progress`]); the
//! per-word surprisal and entropy of a text that reading-time analyses regress on ([`surprisal`]),
//! read in overlapping windows where it is longer than the model reads at once ([`windows`]).

pub mod decoding;
pub mod progress;
pub mod sampler;
pub mod surprisal;
pub mod tree;
pub mod windows;
pub mod wordprob;
