//! GPT-2, GPT-NeoX (Pythia) and Llama (SmolLM2): configuration ([`config`],
//! [`gpt_neox_config`], [`llama_config`], read by `model_type` in [`hf_config`]) and the family
//! that sets them apart ([`family`]), its errors ([`error`]), the model ([`transformer`]: init and the
//! forward passes) and the blocks every family shares ([`block`]), a shareable KV cache
//! ([`kv_cache`]), decode steps recorded once and replayed ([`replayed_steps`]), the operations the modules call ([`ops`]: norms, activations, projection,
//! rotary embeddings, attention, embedding and the sampler's draw, each with a body per backend
//! and a reference, the GPU bodies in [`ops::kernels`]), async reads from the device
//! ([`readback`]), the checkpoint loader ([`loader`], with the safetensors file read by
//! [`checkpoint`], and llama.cpp's GGUF files by [`gguf`]), the deterministic random test model ([`testmodel`]: real vocabulary, random
//! weights), the weights' number format ([`precision`]: f32, or f16 on GPUs with `shader-f16`)
//! and the model re-stored in another precision or packed ([`weight_layout`]).

pub mod block;
pub mod checkpoint;
pub mod config;
pub mod error;
pub mod family;
pub mod gguf;
pub mod gpt_neox_config;
mod gpt_neox_loader;
pub mod hf_config;
pub mod kv_cache;
pub mod llama_config;
mod llama_loader;
pub mod loader;
pub mod ops;
pub mod precision;
pub mod readback;
pub mod replayed_steps;
pub mod testmodel;
pub mod transformer;
pub mod weight_layout;

pub use config::{ConfigError, TransformerConfig};
pub use error::{ModelError, READBACK_FAILED, UNTRUSTED_RESULTS};
pub use family::Family;
pub use kv_cache::{KvCache, SharedPrefix};
pub use loader::{LoadError, load_transformer};
pub use precision::{Precision, PrecisionError};
pub use transformer::Transformer;
