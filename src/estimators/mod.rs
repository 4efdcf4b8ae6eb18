//! GPT-2's next-word distributions: the Monte Carlo sampler ([`sampler`]) and the exact word
//! scorer ([`wordprob`]), both walking token trees over one shared KV cache ([`tree`]);
//! decoding strategies ([`decoding`]); progress reports and cancellation ([`progress`]).

pub mod decoding;
pub mod progress;
pub mod sampler;
pub mod tree;
pub mod wordprob;
