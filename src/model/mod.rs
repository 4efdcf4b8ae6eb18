//! GPT-2: configuration, burn modules with a shareable KV cache, the checkpoint loader, and the
//! deterministic random test model (real vocabulary, random weights).

pub mod config;
pub mod gpt2;
pub mod loader;
pub mod readback;
pub mod testmodel;

pub use config::{ConfigError, Gpt2Config};
pub use gpt2::{Gpt2, KvCache, ModelError, READBACK_FAILED, SharedPrefix};
pub use loader::{LoadError, load_gpt2};
