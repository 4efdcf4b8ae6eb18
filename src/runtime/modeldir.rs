//! Reading a Hugging Face model folder, or a GGUF file, from disk (native only; the browser gets the same bytes
//! through fetch or a file picker).

use std::path::{Path, PathBuf};

use crate::text::tokenizer::{BpeTokenizer, TokenizerError};

#[derive(Debug, thiserror::Error)]
pub enum ModelDirError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid UTF-8")]
    NotUtf8 { path: PathBuf },
    #[error(
        "no tokenizer in {0}: expected tokenizer.json, vocab.json + merges.txt, or encoder.json + vocab.bpe"
    )]
    NoTokenizer(PathBuf),
    #[error("tokenizer in {path}: {source}")]
    Tokenizer {
        path: PathBuf,
        source: TokenizerError,
    },
    #[error("{path}: {source}")]
    Gguf {
        path: PathBuf,
        source: crate::runtime::gguf_model::GgufModelError,
    },
}

/// The raw contents of a model folder.
pub struct ModelFiles {
    pub config_json: String,
    pub weights: Vec<u8>,
    pub tokenizer: BpeTokenizer,
}

pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ModelDirError> {
    std::fs::read(path).map_err(|source| ModelDirError::Io {
        path: path.to_path_buf(),
        source,
    })
}

pub fn read_text(path: &Path) -> Result<String, ModelDirError> {
    String::from_utf8(read_bytes(path)?).map_err(|_| ModelDirError::NotUtf8 {
        path: path.to_path_buf(),
    })
}

/// The vocabulary and merges files of a folder, under either naming (Hugging Face's
/// `vocab.json`/`merges.txt` or OpenAI's `encoder.json`/`vocab.bpe`), if present.
pub fn vocab_and_merges_paths(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    crate::text::tokenizer::VOCAB_AND_MERGES_FILES
        .into_iter()
        .map(|(v, m)| (dir.join(v), dir.join(m)))
        .find(|(v, m)| v.is_file() && m.is_file())
}

/// Loads the tokenizer of a folder: `tokenizer.json` if present, else vocab + merges.
pub fn read_tokenizer(dir: &Path) -> Result<BpeTokenizer, ModelDirError> {
    let tokenizer_json = dir.join("tokenizer.json");
    if tokenizer_json.is_file() {
        let bytes = read_bytes(&tokenizer_json)?;
        return BpeTokenizer::from_tokenizer_json(&bytes).map_err(|source| {
            ModelDirError::Tokenizer {
                path: tokenizer_json,
                source,
            }
        });
    }
    let (vocab, merges) =
        vocab_and_merges_paths(dir).ok_or_else(|| ModelDirError::NoTokenizer(dir.to_path_buf()))?;
    BpeTokenizer::from_vocab_and_merges(&read_text(&vocab)?, &read_text(&merges)?).map_err(
        |source| ModelDirError::Tokenizer {
            path: dir.to_path_buf(),
            source,
        },
    )
}

/// Reads `config.json`, `model.safetensors` and the tokenizer of a model folder, or, where
/// `dir` is a file, the GGUF file it is (weights, architecture and tokenizer in one).
pub fn read_model_dir(dir: &Path) -> Result<ModelFiles, ModelDirError> {
    let files = if dir.is_file() {
        read_gguf(dir)?
    } else {
        ModelFiles {
            config_json: read_text(&dir.join("config.json"))?,
            weights: read_bytes(&dir.join("model.safetensors"))?,
            tokenizer: read_tokenizer(dir)?,
        }
    };
    // The start token the engine would give it (see `engine::with_models_start`).
    let tokenizer = crate::runtime::engine::with_models_start(files.tokenizer, &files.config_json)
        .map_err(|source| ModelDirError::Tokenizer {
            path: dir.to_path_buf(),
            source,
        })?;
    Ok(ModelFiles { tokenizer, ..files })
}

/// Reads a GGUF file as a model's files.
pub fn read_gguf(path: &Path) -> Result<ModelFiles, ModelDirError> {
    use crate::runtime::gguf_model::{GgufModelError, tokenizer_json};
    let gguf = |source| ModelDirError::Gguf {
        path: path.to_path_buf(),
        source,
    };
    let weights = read_bytes(path)?;
    let file =
        crate::model::gguf::GgufFile::parse(&weights).map_err(|e| gguf(GgufModelError::File(e)))?;
    let config_json =
        crate::model::gguf::hf::config_json(&file).map_err(|e| gguf(GgufModelError::File(e)))?;
    let tokenizer = BpeTokenizer::from_tokenizer_json(&tokenizer_json(&file).map_err(gguf)?)
        .map_err(|source| ModelDirError::Tokenizer {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(ModelFiles {
        config_json,
        weights,
        tokenizer,
    })
}
