//! Llama-family (SmolLM2) hyper-parameters, read from and written as a Hugging Face
//! `config.json` whose `model_type` is `llama`.

use serde::Deserialize;

use super::config::{
    ConfigError, RopeParameters, TransformerConfig, positive, positive_number, refuse_rope_scaling,
};
use super::family::Family;

/// The fields of Hugging Face's `LlamaConfig` that change the computation, all optional so that
/// a missing one becomes a named error. The rotary base comes as `rope_theta` (SmolLM2's files)
/// or inside `rope_parameters` (newer saves).
#[derive(Deserialize)]
struct HfLlamaJson {
    hidden_size: Option<usize>,
    num_attention_heads: Option<usize>,
    num_key_value_heads: Option<usize>,
    num_hidden_layers: Option<usize>,
    intermediate_size: Option<usize>,
    vocab_size: Option<usize>,
    max_position_embeddings: Option<usize>,
    rms_norm_eps: Option<f64>,
    hidden_act: Option<String>,
    head_dim: Option<usize>,
    rope_theta: Option<f64>,
    rope_parameters: Option<RopeParameters>,
    rope_scaling: Option<serde_json::Value>,
    rope_interleaved: Option<bool>,
    partial_rotary_factor: Option<f64>,
    tie_word_embeddings: Option<bool>,
    attention_bias: Option<bool>,
    mlp_bias: Option<bool>,
}

/// Parses a Llama `config.json` into a config of [`Family::Llama`]. Defaults are
/// transformers': as many key/value heads as query heads, base 10000, an untied head.
/// Settings this implementation does not follow (biases, scaled or partial rotary embeddings,
/// heads whose width is not `hidden_size / num_attention_heads`, other activations) are refused
/// by name.
pub fn from_llama_json(text: &str) -> Result<TransformerConfig, ConfigError> {
    let raw: HfLlamaJson =
        serde_json::from_str(text).map_err(|e| ConfigError::Json(e.to_string()))?;
    match raw.hidden_act.as_deref() {
        None | Some("silu") => {}
        Some(other) => return Err(ConfigError::UnsupportedActivation(other.to_string())),
    }
    if raw.attention_bias == Some(true) {
        return Err(ConfigError::UnsupportedOption("attention_bias"));
    }
    if raw.mlp_bias == Some(true) {
        return Err(ConfigError::UnsupportedOption("mlp_bias"));
    }
    if raw.rope_interleaved == Some(true) {
        return Err(ConfigError::UnsupportedOption("rope_interleaved"));
    }
    let parameters = raw.rope_parameters.as_ref();
    refuse_rope_scaling(raw.rope_scaling.as_ref(), parameters)?;
    let partial = raw
        .partial_rotary_factor
        .or(parameters.and_then(|p| p.partial_rotary_factor));
    if partial.is_some_and(|share| share != 1.0) {
        return Err(ConfigError::UnsupportedOption("partial_rotary_factor"));
    }
    let n_embd = positive(raw.hidden_size, "hidden_size")?;
    let n_head = positive(raw.num_attention_heads, "num_attention_heads")?;
    let kv_heads = match raw.num_key_value_heads {
        None => n_head,
        some => positive(some, "num_key_value_heads")?,
    };
    let n_layer = positive(raw.num_hidden_layers, "num_hidden_layers")?;
    let n_inner = positive(raw.intermediate_size, "intermediate_size")?;
    let vocab_size = positive(raw.vocab_size, "vocab_size")?;
    let n_positions = positive(raw.max_position_embeddings, "max_position_embeddings")?;
    if n_embd % n_head != 0 {
        return Err(ConfigError::Invalid {
            field: "num_attention_heads",
            reason: format!("{n_head} heads do not divide hidden_size = {n_embd}"),
        });
    }
    if n_head % kv_heads != 0 {
        return Err(ConfigError::Invalid {
            field: "num_key_value_heads",
            reason: format!("{kv_heads} key/value heads do not divide {n_head} query heads"),
        });
    }
    let head_dim = n_embd / n_head;
    if raw.head_dim.is_some_and(|d| d != head_dim) || !head_dim.is_multiple_of(2) {
        return Err(ConfigError::Invalid {
            field: "head_dim",
            reason: format!(
                "heads must be hidden_size / num_attention_heads = {head_dim} wide, an even number"
            ),
        });
    }
    let epsilon = positive_number(raw.rms_norm_eps.unwrap_or(1e-6), "rms_norm_eps")?;
    let base = raw
        .rope_theta
        .or(parameters.and_then(|p| p.rope_theta))
        .unwrap_or(10_000.0);
    positive_number(base, "rope_theta")?;
    Ok(
        TransformerConfig::new(n_layer, n_head, n_embd, vocab_size, n_positions, n_inner)
            .with_layer_norm_epsilon(epsilon)
            .with_family(Family::Llama {
                rotary_dims: head_dim,
                rotary_base: base,
                kv_heads,
                tied_head: raw.tie_word_embeddings.unwrap_or(false),
            }),
    )
}

/// The `config.json` transformers loads as `LlamaConfig` for a config of [`Family::Llama`]
/// (`None` for another family).
pub(super) fn llama_json(config: &TransformerConfig) -> Option<serde_json::Value> {
    let Family::Llama {
        rotary_base,
        kv_heads,
        tied_head,
        ..
    } = &config.family
    else {
        return None;
    };
    Some(serde_json::json!({
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_act": "silu",
        "hidden_size": config.n_embd,
        "num_attention_heads": config.n_head,
        "num_key_value_heads": kv_heads,
        "head_dim": config.head_dim(),
        "num_hidden_layers": config.n_layer,
        "intermediate_size": config.n_inner,
        "vocab_size": config.vocab_size,
        "max_position_embeddings": config.n_positions,
        "rms_norm_eps": config.layer_norm_epsilon,
        "rope_theta": rotary_base,
        "attention_bias": false,
        "mlp_bias": false,
        "tie_word_embeddings": tied_head,
        // SmolLM2's: `<|endoftext|>` is its first token.
        "bos_token_id": 0,
        "eos_token_id": 0,
        "attention_dropout": 0.0,
    }))
}
