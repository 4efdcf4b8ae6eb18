//! Running a model: the compute device ([`backend`]), a loaded model + tokenizer ([`engine`]), a
//! GGUF file read as a model's parts ([`gguf_model`]) and written ([`gguf_export`]), a
//! model folder read from a host whatever its tokenizer's layout ([`model_folder`]) and where
//! it is, from a URL or a Hugging Face id and revision ([`model_source`]),
//! next-token distributions and log-probabilities ([`distributions`]), the production probes'
//! runs ([`productions`], shared by the CLI and the worker), the speed check of the loaded model
//! on its device ([`speed`]), decode steps timed one by one for the host-cost benchmark
//! ([`decode_steps`]), the surprisal of every context's target word
//! ([`target_predictors`]), every word's predictors over a corpus ([`corpus_predictors`]), a
//! model's word samples for every context of the norms ([`context_samples`]) and the typed
//! messages between the
//! page and the inference worker ([`protocol`]). Natively, [`modeldir`] reads a model folder
//! from disk and [`hub_cache`] finds a Hugging Face id's revision in the local cache.

pub mod backend;
pub mod context_samples;
pub mod corpus_predictors;
pub mod decode_steps;
pub mod distributions;
pub mod engine;
pub mod gguf_export;
pub mod gguf_model;
pub mod model_folder;
pub mod model_source;
pub mod productions;
pub mod protocol;
pub mod quantization_cost;
/// Test support: sample values of every variant of the protocol's enums.
#[cfg(test)]
pub(crate) mod sample_values;
pub mod speed;
pub mod target_predictors;

#[cfg(not(target_arch = "wasm32"))]
pub mod hub_cache;
#[cfg(not(target_arch = "wasm32"))]
pub mod modeldir;
