//! GPT-2's next-word distributions: the Monte Carlo sampler ([`sampler`]) and the exact word
//! scorer ([`wordprob`]), both walking token trees over one shared KV cache ([`tree`]);
//! decoding strategies ([`decoding`]) and the sampler's draws on the CPU backend's device
//! ([`inverse_cdf`]; a GPU's are one kernel, `model::kernels::draw_tokens`);
//! progress reports and cancellation ([`progress`]).

pub mod decoding;
pub mod inverse_cdf;
pub mod progress;
pub mod sampler;
pub mod tree;
pub mod wordprob;
