//! A loaded model and tokenizer, built from raw bytes wherever they came from (disk, fetch,
//! Cache Storage, a file picker). The browser and the CLI both go through here.

use burn::tensor::Device;

use crate::model::{
    LoadError, Precision, PrecisionError, Transformer, TransformerConfig, load_transformer,
};
use crate::runtime::distributions::{InferenceError, TokenLogProb, next_tokens};
use crate::text::tokenizer::{BpeTokenizer, TokenizerError, VOCAB_AND_MERGES_FILES};

pub use crate::model::testmodel::RANDOM_TEST_MODEL_KEY;

/// Where the tokenizer comes from.
#[derive(Debug)]
pub enum TokenizerFiles {
    /// A Hugging Face `tokenizer.json`.
    TokenizerJson(Vec<u8>),
    /// `vocab.json` (= `encoder.json`) and `merges.txt` (= `vocab.bpe`).
    VocabAndMerges {
        vocab_json: String,
        merges_txt: String,
    },
}

impl TokenizerFiles {
    /// The files' names, as an export's manifest records where the tokenizer came from.
    pub fn file_names(&self) -> &'static str {
        match self {
            Self::TokenizerJson(_) => "tokenizer.json",
            Self::VocabAndMerges { .. } => "vocab.json + merges.txt",
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EngineError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error(transparent)]
    Precision(#[from] PrecisionError),
    #[error("the tokenizer has {tokenizer} tokens but the model's vocabulary has {model}")]
    VocabularyMismatch { tokenizer: usize, model: usize },
}

/// Model + tokenizer, ready for inference.
pub struct Engine {
    pub config: TransformerConfig,
    pub model: Transformer,
    pub tokenizer: BpeTokenizer,
    /// True for weights made by `clozelab make-test-model` (random: predictions are noise).
    pub random_test_model: bool,
}

/// `tokenizer` reading texts after the model's `bos_token_id` (its `config.json`'s; GPT-2's and
/// Pythia's name `<|endoftext|>`, SmolLM2-Instruct's `<|im_start|>`), as minicons reads them
/// after the tokenizer's `bos_token`; unchanged where the config names none.
pub fn with_models_start(
    tokenizer: BpeTokenizer,
    config_json: &str,
) -> Result<BpeTokenizer, TokenizerError> {
    let config: serde_json::Value =
        serde_json::from_str(config_json).unwrap_or(serde_json::Value::Null);
    match config
        .get("bos_token_id")
        .and_then(serde_json::Value::as_u64)
    {
        Some(id) => tokenizer.with_begin_of_text(u32::try_from(id).unwrap_or(u32::MAX)),
        None => Ok(tokenizer),
    }
}

/// Whether a safetensors file carries the test-model marker (false for anything unreadable).
pub fn is_random_test_model(weights: &[u8]) -> bool {
    safetensors::SafeTensors::read_metadata(weights)
        .ok()
        .and_then(|(_, meta)| {
            meta.metadata()
                .as_ref()
                .map(|m| m.contains_key(RANDOM_TEST_MODEL_KEY))
        })
        .unwrap_or(false)
}

impl Engine {
    pub fn load(
        config_json: &str,
        weights: &[u8],
        tokenizer: TokenizerFiles,
        device: &Device,
    ) -> Result<Self, EngineError> {
        let tokenizer = match tokenizer {
            TokenizerFiles::TokenizerJson(bytes) => BpeTokenizer::from_tokenizer_json(&bytes)?,
            TokenizerFiles::VocabAndMerges {
                vocab_json,
                merges_txt,
            } => BpeTokenizer::from_vocab_and_merges(&vocab_json, &merges_txt)?,
        };
        Self::with_tokenizer(config_json, weights, tokenizer, device)
    }

    /// As [`Engine::load`] with a tokenizer already built (the CLI reads it from a folder).
    pub fn with_tokenizer(
        config_json: &str,
        weights: &[u8],
        tokenizer: BpeTokenizer,
        device: &Device,
    ) -> Result<Self, EngineError> {
        let (config, model) = load_transformer(config_json, weights, device)?;
        let tokenizer = with_models_start(tokenizer, config_json)?;
        if tokenizer.vocab_size() > config.vocab_size {
            return Err(EngineError::VocabularyMismatch {
                tokenizer: tokenizer.vocab_size(),
                model: config.vocab_size,
            });
        }
        Ok(Self {
            config,
            model,
            tokenizer,
            random_test_model: is_random_test_model(weights),
        })
    }

    /// Shares the model's packed weights out among `helpers` (the browser's CPU backend on
    /// several cores): how many weights were shared.
    pub fn share_products(
        &mut self,
        helpers: &std::sync::Arc<dyn crate::model::ops::product_helpers::ProductHelpers>,
    ) -> Result<usize, crate::model::ops::product_helpers::HelperError> {
        self.model.share_products(helpers)
    }

    /// The engine with its model's weights in `precision` (see [`Precision`]).
    pub fn with_precision(self, precision: Precision) -> Result<Self, EngineError> {
        Ok(Self {
            model: self.model.with_precision(precision)?,
            ..self
        })
    }

    /// The `k` most likely next tokens after `context`.
    pub async fn next_tokens(
        &self,
        context: &str,
        k: usize,
    ) -> Result<Vec<TokenLogProb>, InferenceError> {
        next_tokens(&self.model, &self.tokenizer, context, k).await
    }

    /// [`Self::word_embeddings`] of many words, `batch` at a time (one read back each), as a
    /// table word → vector (blank words left out). `on_batch(done, total)` after each batch;
    /// returning `false` stops (`Ok(None)`).
    pub async fn embedding_table(
        &self,
        words: &[&str],
        batch: usize,
        mut on_batch: impl FnMut(usize, usize) -> bool,
    ) -> Result<Option<std::collections::HashMap<String, Vec<f64>>>, InferenceError> {
        let mut table = std::collections::HashMap::with_capacity(words.len());
        let mut done = 0;
        for chunk in words.chunks(batch.max(1)) {
            let vectors = self.word_embeddings(chunk).await?;
            for (word, vector) in chunk.iter().zip(vectors) {
                if let Some(v) = vector {
                    table.insert(word.to_string(), v.into_iter().map(f64::from).collect());
                }
            }
            done += chunk.len();
            if !on_batch(done, words.len()) {
                return Ok(None);
            }
        }
        Ok(Some(table))
    }

    /// GPT-2's own type-level representation of each word, for meaning clusters and the
    /// semantic probe: the mean of the input embeddings (`wte` rows) of the tokens of
    /// `" " + word` — the word as it appears after other words. Context-free like the paper's
    /// word2vec vectors (a word gets the same vector in every context) and it needs no forward
    /// pass; a last hidden state would mostly encode the prediction of the *next* token. `None`
    /// for a blank word. All words are looked up at once: one read back from the device.
    ///
    /// # Shapes
    /// - returns one `[n_embd]` vector per word
    pub async fn word_embeddings(
        &self,
        words: &[&str],
    ) -> Result<Vec<Option<Vec<f32>>>, InferenceError> {
        let mut spans = Vec::with_capacity(words.len());
        let mut ids = Vec::new();
        for word in words {
            let word = word.trim();
            let tokens = if word.is_empty() {
                Vec::new()
            } else {
                self.tokenizer.encode(&format!(" {word}"))?
            };
            spans.push(ids.len()..ids.len() + tokens.len());
            ids.extend(tokens);
        }
        if ids.is_empty() {
            return Ok(vec![None; words.len()]);
        }
        let n_embd = self.config.n_embd;
        let rows = self
            .model
            .token_embeddings(self.model.token_tensor(&[ids])?)?;
        let values = crate::model::readback::read_f32(rows).await?;
        Ok(spans
            .into_iter()
            .map(|span| {
                let n = span.len();
                (n > 0).then(|| {
                    let mut mean = vec![0f32; n_embd];
                    for row in values[span.start * n_embd..span.end * n_embd].chunks(n_embd) {
                        mean.iter_mut()
                            .zip(row)
                            .for_each(|(m, v)| *m += v / n as f32);
                    }
                    mean
                })
            })
            .collect())
    }
}

/// The parts of a model folder, picked out of files by name.
#[derive(Debug)]
pub struct ModelParts {
    pub config_json: String,
    pub weights: Vec<u8>,
    pub tokenizer: TokenizerFiles,
}

/// What is wrong with the files a user chose as a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChosenFilesError {
    #[error("more than one .safetensors file chosen; choose one model")]
    SeveralWeightFiles,
    #[error("{0} is missing")]
    Missing(&'static str),
    #[error("the tokenizer is missing: add tokenizer.json, or vocab.json and merges.txt")]
    NoTokenizer,
    #[error("{0} is not UTF-8 text")]
    NotUtf8(&'static str),
}

/// Picks `config.json`, the `.safetensors` file and the tokenizer out of files the user chose
/// (any order, extra files ignored). Names are matched case-insensitively on the base name.
pub fn model_parts_from_files(
    files: Vec<(String, Vec<u8>)>,
) -> Result<ModelParts, ChosenFilesError> {
    let mut config = None;
    let mut weights = None;
    let mut tokenizer_json = None;
    let mut vocab = None;
    let mut merges = None;
    for (name, bytes) in files {
        let base = name
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(&name)
            .to_lowercase();
        match base.as_str() {
            "config.json" => config = Some(bytes),
            "tokenizer.json" => tokenizer_json = Some(bytes),
            b if VOCAB_AND_MERGES_FILES.iter().any(|(v, _)| *v == b) => vocab = Some(bytes),
            b if VOCAB_AND_MERGES_FILES.iter().any(|(_, m)| *m == b) => merges = Some(bytes),
            b if b.ends_with(".safetensors") => {
                if weights.is_some() {
                    return Err(ChosenFilesError::SeveralWeightFiles);
                }
                weights = Some(bytes)
            }
            _ => {}
        }
    }
    let text = |bytes: Vec<u8>, what: &'static str| {
        String::from_utf8(bytes).map_err(|_| ChosenFilesError::NotUtf8(what))
    };
    let config_json = text(
        config.ok_or(ChosenFilesError::Missing("config.json"))?,
        "config.json",
    )?;
    let weights = weights.ok_or(ChosenFilesError::Missing("the .safetensors weights file"))?;
    let tokenizer = match (tokenizer_json, vocab, merges) {
        (Some(json), _, _) => TokenizerFiles::TokenizerJson(json),
        (None, Some(v), Some(m)) => TokenizerFiles::VocabAndMerges {
            vocab_json: text(v, "vocab.json")?,
            merges_txt: text(m, "merges.txt")?,
        },
        _ => return Err(ChosenFilesError::NoTokenizer),
    };
    Ok(ModelParts {
        config_json,
        weights,
        tokenizer,
    })
}
