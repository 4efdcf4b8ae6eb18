//! Models in llama.cpp's GGUF format: the container ([`container`]: header, metadata, tensor
//! entries, all checked against the file's length), GGML's tensor types and their decoding
//! ([`blocks`]: F32, F16, BF16 and the Q8_0, Q4_0, Q4_1, Q4_K, Q5_K and Q6_K blocks), the
//! model as the Hugging Face checkpoint it came from ([`hf`]: `config.json` from the metadata,
//! tensors under transformers' names and layouts) and a GGUF file written ([`writer`]).
//! The tokenizer's metadata is read by `runtime::gguf_model`, where the text layer is in reach.

pub mod blocks;
pub mod container;
pub mod hf;
pub mod writer;

pub use blocks::GgmlType;
pub use container::{GgufError, GgufFile, MAGIC, Value};
