//! A model's hyper-parameters, read from a Hugging Face `config.json` (GPT-2's here, the other
//! families' in their own files), and the checks they share.

use burn::config::Config;
use serde::Deserialize;

use super::family::Family;

/// Hyper-parameters of a model, named as GPT-2's are (the fields of Hugging Face's `GPT2Config`
/// that change the computation, with [`Family`] for what other architectures add; everything else in a `config.json` is ignored or rejected, see [`TransformerConfig::from_hf_json`]).
#[derive(Config, Debug, PartialEq)]
pub struct TransformerConfig {
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
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
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

/// A `config.json` number that must be finite and positive (norms' epsilons, rotary bases).
pub(super) fn positive_number(value: f64, field: &'static str) -> Result<f64, ConfigError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ConfigError::Invalid {
            field,
            reason: format!("must be a positive number, found {value}"),
        })
    }
}

/// The rotary settings newer transformers saves keep in `rope_parameters` (older files give
/// them as top-level fields, which the families read themselves).
#[derive(Deserialize)]
pub(super) struct RopeParameters {
    rope_type: Option<String>,
    pub rope_theta: Option<f64>,
    pub partial_rotary_factor: Option<f64>,
}

/// Refuses scaled rotary embeddings (linear, dynamic, YaRN, Llama 3's), which the rotary op
/// does not compute: a non-null `rope_scaling`, or a `rope_type` other than `default`.
pub(super) fn refuse_rope_scaling(
    rope_scaling: Option<&serde_json::Value>,
    parameters: Option<&RopeParameters>,
) -> Result<(), ConfigError> {
    let scaled = rope_scaling.is_some_and(|v| !v.is_null())
        || parameters
            .and_then(|p| p.rope_type.as_deref())
            .is_some_and(|t| t != "default");
    if scaled {
        Err(ConfigError::UnsupportedOption("rope_scaling"))
    } else {
        Ok(())
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

impl TransformerConfig {
    /// Parses a Hugging Face GPT-2 `config.json` (see [`TransformerConfig::from_hf_json`], which reads
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
        positive_number(epsilon, "layer_norm_epsilon")?;
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
            TransformerConfig::new(n_layer, n_head, n_embd, vocab_size, n_positions, n_inner)
                .with_layer_norm_epsilon(epsilon),
        )
    }

    /// Width of one attention head.
    pub fn head_dim(&self) -> usize {
        self.n_embd / self.n_head
    }

    /// Width of the fused query/key/value projection: every query head, then the key and value
    /// heads (fewer where grouped).
    pub fn qkv_width(&self) -> usize {
        (self.n_head + 2 * self.family.kv_heads(self.n_head)) * self.head_dim()
    }

    /// Width of the MLP's first projection: the hidden layer, twice for the SiLU gate (the gate,
    /// then the values it gates).
    pub fn mlp_width(&self) -> usize {
        match self.family {
            Family::Llama { .. } => 2 * self.n_inner,
            _ => self.n_inner,
        }
    }

    /// GPT-2 small (124M): the released `gpt2` checkpoint.
    pub fn gpt2_small() -> Self {
        TransformerConfig::new(12, 12, 768, 50257, 1024, 3072)
    }

    /// Number of parameters as the checkpoint holds them (a tied LM head counted once; rotary
    /// families have no position embedding; Llama's norms and projections no biases).
    pub fn num_params(&self) -> usize {
        let e = self.n_embd;
        let (qkv, mlp) = (self.qkv_width(), self.mlp_width());
        let weights = e * qkv + e * e + e * mlp + self.n_inner * e;
        let biased = !matches!(self.family, Family::Llama { .. });
        let (norm, biases) = match biased {
            true => (2 * e, qkv + e + mlp + e),
            false => (e, 0),
        };
        let block = 2 * norm + weights + biases;
        let positions = match self.family {
            Family::Gpt2 => self.n_positions * e,
            _ => 0,
        };
        let head = match self.family.tied_head() {
            true => 0,
            false => self.vocab_size * e,
        };
        self.vocab_size * e + positions + head + self.n_layer * block + norm
    }
}
