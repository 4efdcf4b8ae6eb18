//! GPT-2 hyper-parameters, read from a Hugging Face `config.json`.

use burn::config::Config;
use serde::Deserialize;

use super::family::Family;

/// Hyper-parameters of a GPT-2 model (the fields of Hugging Face's `GPT2Config` that change the
/// computation; everything else in a `config.json` is ignored or rejected, see [`Gpt2Config::from_hf_json`]).
#[derive(Config, Debug, PartialEq)]
pub struct Gpt2Config {
    /// Number of transformer blocks (`n_layer`).
    pub n_layer: usize,
    /// Number of attention heads per block (`n_head`); must divide `n_embd`.
    pub n_head: usize,
    /// Width of the residual stream (`n_embd`).
    pub n_embd: usize,
    /// Vocabulary size (`vocab_size`): 50257 for every released GPT-2.
    pub vocab_size: usize,
    /// Longest sequence the position embedding covers (`n_positions`).
    pub n_positions: usize,
    /// Width of the MLP's hidden layer (`n_inner`; Hugging Face's `null` means 4 × `n_embd`).
    pub n_inner: usize,
    /// Epsilon added to the variance in every LayerNorm (`layer_norm_epsilon`).
    #[config(default = 1e-5)]
    pub layer_norm_epsilon: f64,
    /// The architecture (`model_type`) and what sets it apart from GPT-2.
    #[config(default = "Family::Gpt2")]
    pub family: Family,
}

/// Why a `config.json` cannot describe a GPT-2 clozelab can run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    #[error("config.json is not valid JSON: {0}")]
    Json(String),
    #[error("config.json lacks the required field `{0}`")]
    MissingField(&'static str),
    #[error("config.json field `{field}` is invalid: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error(
        "config.json: unsupported activation_function {0:?} (clozelab implements GPT-2's tanh GELU, `gelu_new`)"
    )]
    UnsupportedActivation(String),
    #[error("unsupported option `{0}` in config.json")]
    UnsupportedOption(&'static str),
}

/// A `config.json` count that must be present and positive.
pub(super) fn positive(value: Option<usize>, field: &'static str) -> Result<usize, ConfigError> {
    match value {
        None => Err(ConfigError::MissingField(field)),
        Some(0) => Err(ConfigError::Invalid {
            field,
            reason: "must be positive".into(),
        }),
        Some(v) => Ok(v),
    }
}

/// The subset of Hugging Face's `GPT2Config` JSON that matters, all optional so that a missing
/// field becomes a named error instead of serde's generic message.
#[derive(Deserialize)]
struct HfGpt2Json {
    n_layer: Option<usize>,
    n_head: Option<usize>,
    n_embd: Option<usize>,
    vocab_size: Option<usize>,
    n_positions: Option<usize>,
    n_inner: Option<usize>,
    layer_norm_epsilon: Option<f64>,
    activation_function: Option<String>,
    scale_attn_by_inverse_layer_idx: Option<bool>,
    reorder_and_upcast_attn: Option<bool>,
    add_cross_attention: Option<bool>,
    scale_attn_weights: Option<bool>,
}

impl Gpt2Config {
    /// Parses a Hugging Face GPT-2 `config.json` (see [`Gpt2Config::from_hf_json`], which reads
    /// any family's).
    ///
    /// Required: `n_layer`, `n_head`, `n_embd`, `vocab_size`, `n_positions`,
    /// `layer_norm_epsilon`. `activation_function` may be absent (Hugging Face's default is
    /// `gelu_new`) but any other value than the tanh GELU is rejected, as are options that
    /// change attention in ways this implementation does not follow.
    pub fn from_gpt2_json(text: &str) -> Result<Self, ConfigError> {
        let raw: HfGpt2Json =
            serde_json::from_str(text).map_err(|e| ConfigError::Json(e.to_string()))?;
        match raw.activation_function.as_deref() {
            None | Some("gelu_new") | Some("gelu_pytorch_tanh") => {}
            Some(other) => return Err(ConfigError::UnsupportedActivation(other.to_string())),
        }
        if raw.scale_attn_by_inverse_layer_idx == Some(true) {
            return Err(ConfigError::UnsupportedOption(
                "scale_attn_by_inverse_layer_idx",
            ));
        }
        if raw.reorder_and_upcast_attn == Some(true) {
            return Err(ConfigError::UnsupportedOption("reorder_and_upcast_attn"));
        }
        if raw.add_cross_attention == Some(true) {
            return Err(ConfigError::UnsupportedOption("add_cross_attention"));
        }
        if raw.scale_attn_weights == Some(false) {
            return Err(ConfigError::UnsupportedOption("scale_attn_weights = false"));
        }
        let n_layer = positive(raw.n_layer, "n_layer")?;
        let n_head = positive(raw.n_head, "n_head")?;
        let n_embd = positive(raw.n_embd, "n_embd")?;
        let vocab_size = positive(raw.vocab_size, "vocab_size")?;
        let n_positions = positive(raw.n_positions, "n_positions")?;
        let epsilon = raw
            .layer_norm_epsilon
            .ok_or(ConfigError::MissingField("layer_norm_epsilon"))?;
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(ConfigError::Invalid {
                field: "layer_norm_epsilon",
                reason: format!("must be a positive number, found {epsilon}"),
            });
        }
        if n_embd % n_head != 0 {
            return Err(ConfigError::Invalid {
                field: "n_head",
                reason: format!("{n_head} heads do not divide n_embd = {n_embd}"),
            });
        }
        let n_inner = match raw.n_inner {
            None => 4 * n_embd,
            Some(0) => {
                return Err(ConfigError::Invalid {
                    field: "n_inner",
                    reason: "must be positive".into(),
                });
            }
            Some(v) => v,
        };
        Ok(
            Gpt2Config::new(n_layer, n_head, n_embd, vocab_size, n_positions, n_inner)
                .with_layer_norm_epsilon(epsilon),
        )
    }

    /// Writes the config as a Hugging Face `config.json` that `transformers` loads as
    /// `GPT2Config`, or `GPTNeoXConfig` for [`Family::GptNeox`].
    pub fn to_hf_json(&self) -> String {
        let value = match &self.family {
            Family::Gpt2 => self.gpt2_json(),
            Family::GptNeox {
                rotary_dims,
                rotary_base,
                parallel_residual,
            } => serde_json::json!({
                "architectures": ["GPTNeoXForCausalLM"],
                "model_type": "gpt_neox",
                "hidden_act": "gelu",
                "hidden_size": self.n_embd,
                "num_attention_heads": self.n_head,
                "num_hidden_layers": self.n_layer,
                "intermediate_size": self.n_inner,
                "vocab_size": self.vocab_size,
                "max_position_embeddings": self.n_positions,
                "layer_norm_eps": self.layer_norm_epsilon,
                "rotary_pct": *rotary_dims as f64 / self.head_dim() as f64,
                "rotary_emb_base": rotary_base,
                "use_parallel_residual": parallel_residual,
                "attention_bias": true,
                "tie_word_embeddings": false,
                "bos_token_id": 50256,
                "eos_token_id": 50256,
                "attention_dropout": 0.0,
                "hidden_dropout": 0.0,
            }),
        };
        // Serialising a `json!` literal cannot fail.
        serde_json::to_string_pretty(&value).unwrap_or_default()
    }

    fn gpt2_json(&self) -> serde_json::Value {
        serde_json::json!({
            "architectures": ["GPT2LMHeadModel"],
            "model_type": "gpt2",
            "activation_function": "gelu_new",
            "n_layer": self.n_layer,
            "n_head": self.n_head,
            "n_embd": self.n_embd,
            "n_inner": self.n_inner,
            "vocab_size": self.vocab_size,
            "n_positions": self.n_positions,
            "n_ctx": self.n_positions,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "bos_token_id": 50256,
            "eos_token_id": 50256,
            "attn_pdrop": 0.0,
            "embd_pdrop": 0.0,
            "resid_pdrop": 0.0,
            "tie_word_embeddings": true,
        })
    }

    /// Width of one attention head.
    pub fn head_dim(&self) -> usize {
        self.n_embd / self.n_head
    }

    /// GPT-2 small (124M): the released `gpt2` checkpoint.
    pub fn gpt2_small() -> Self {
        Gpt2Config::new(12, 12, 768, 50257, 1024, 3072)
    }

    /// Number of parameters (a tied LM head counted once; rotary families have no position
    /// embedding).
    pub fn num_params(&self) -> usize {
        let e = self.n_embd;
        let block = 2 * (2 * e)
            + (e * 3 * e + 3 * e)
            + (e * e + e)
            + (e * self.n_inner + self.n_inner)
            + (self.n_inner * e + e);
        let (positions, head) = match self.family {
            Family::Gpt2 => (self.n_positions * e, 0),
            Family::GptNeox { .. } => (0, self.vocab_size * e),
        };
        self.vocab_size * e + positions + head + self.n_layer * block + 2 * e
    }
}
