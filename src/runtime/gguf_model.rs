//! A GGUF file (llama.cpp's format: one file with the weights, the architecture and the
//! tokenizer) as the parts every model is loaded from: the Hugging Face `config.json` its
//! metadata implies, its tokenizer as a `tokenizer.json`, and the file itself as the weights,
//! which the checkpoint reader recognises by their magic. Here because it needs both the model
//! layer (the container) and the text layer (the tokenizer).

use crate::model::gguf::{GgufError, GgufFile, MAGIC, hf};
use crate::runtime::engine::{ModelParts, TokenizerFiles};
use crate::text::gguf_vocab;
use crate::text::tokenizer::TokenizerError;

/// Why a GGUF file is not a model clozelab runs.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum GgufModelError {
    #[error(transparent)]
    File(#[from] GgufError),
    #[error("the GGUF file's tokenizer: {0}")]
    Tokenizer(#[from] TokenizerError),
}

/// Whether `bytes` begin as a GGUF file does.
pub fn is_gguf(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The tokenizer the file's `tokenizer.ggml.*` metadata describes, as a `tokenizer.json`.
pub fn tokenizer_json(file: &GgufFile) -> Result<Vec<u8>, GgufModelError> {
    let tokens = file.strings("tokenizer.ggml.tokens")?;
    let merges = file.strings("tokenizer.ggml.merges")?;
    let types = file.ints("tokenizer.ggml.token_type")?;
    let pre = match file.metadata.contains_key("tokenizer.ggml.pre") {
        true => file.string("tokenizer.ggml.pre")?,
        false => "default",
    };
    Ok(gguf_vocab::tokenizer_json(
        file.string("tokenizer.ggml.model")?,
        &tokens,
        types.as_deref(),
        &merges,
        pre,
    )?)
}

/// The parts of the model in the GGUF file `bytes` (which become its weights).
pub fn model_parts(bytes: Vec<u8>) -> Result<ModelParts, GgufModelError> {
    let file = GgufFile::parse(&bytes)?;
    Ok(ModelParts {
        config_json: hf::config_json(&file)?,
        tokenizer: TokenizerFiles::TokenizerJson(tokenizer_json(&file)?),
        weights: bytes,
    })
}
