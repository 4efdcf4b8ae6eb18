//! GPT-2: configuration ([`config`]), its errors ([`error`]), the burn modules ([`gpt2`]) with
//! the chunked token embedding ([`embedding`]) and a shareable KV cache ([`kv_cache`]), on a GPU
//! the layer norm, a step's attention, each projection's bias with what follows it, the token
//! embedding's lookup and the sampler's draw as kernels of our own ([`kernels`]), async reads
//! from the device ([`readback`]), the checkpoint loader ([`loader`]), the
//! deterministic random test model ([`testmodel`]: real vocabulary, random weights), the
//! weights' number format ([`precision`]: f32, or f16 on GPUs with `shader-f16`), and
//! on the CPU, products with few rows split over the threads ([`threaded_product`]) and gemm told
//! to pack the weights ([`gemm_packing`]), and in the browser's CPU backend the blocks' weights
//! packed once into column panels ([`panel_product`]).

pub mod config;
pub mod embedding;
pub mod error;
pub mod gemm_packing;
pub mod gpt2;
pub mod kernels;
pub mod kv_cache;
pub mod loader;
pub mod panel_product;
pub mod precision;
pub mod readback;
pub mod testmodel;
pub mod threaded_product;

pub use config::{ConfigError, Gpt2Config};
pub use error::{ModelError, READBACK_FAILED};
pub use gpt2::Gpt2;
pub use kv_cache::{KvCache, SharedPrefix};
pub use loader::{LoadError, load_gpt2};
pub use precision::{Precision, PrecisionError};
