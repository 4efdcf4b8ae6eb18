//! GPT-NeoX (Pythia) hyper-parameters, read from a Hugging Face `config.json` whose
//! `model_type` is `gpt_neox`.

use serde::Deserialize;

use super::config::{
    ConfigError, RopeParameters, TransformerConfig, positive, positive_number, refuse_rope_scaling,
};
use super::family::Family;

/// The fields of Hugging Face's `GPTNeoXConfig` that change the computation, all optional so
/// that a missing one becomes a named error. The rotary settings come as `rotary_pct` and
/// `rotary_emb_base` (Pythia's files) or inside `rope_parameters` (newer saves).
#[derive(Deserialize)]
struct HfGptNeoxJson {
    hidden_size: Option<usize>,
    num_attention_heads: Option<usize>,
    num_hidden_layers: Option<usize>,
    intermediate_size: Option<usize>,
    vocab_size: Option<usize>,
    max_position_embeddings: Option<usize>,
    layer_norm_eps: Option<f64>,
    hidden_act: Option<String>,
    rotary_pct: Option<f64>,
    rotary_emb_base: Option<f64>,
    rope_theta: Option<f64>,
    rope_parameters: Option<RopeParameters>,
    use_parallel_residual: Option<bool>,
    tie_word_embeddings: Option<bool>,
    attention_bias: Option<bool>,
    rope_scaling: Option<serde_json::Value>,
}

/// Parses a GPT-NeoX `config.json` into a config of [`Family::GptNeox`]. Defaults are
/// transformers': a quarter of each head rotary, base 10000, the parallel residual, biases, an
/// untied head. Settings this implementation does not follow are refused by name.
pub fn from_gpt_neox_json(text: &str) -> Result<TransformerConfig, ConfigError> {
    let raw: HfGptNeoxJson =
        serde_json::from_str(text).map_err(|e| ConfigError::Json(e.to_string()))?;
    match raw.hidden_act.as_deref() {
        None | Some("gelu") => {}
        Some(other) => return Err(ConfigError::UnsupportedActivation(other.to_string())),
    }
    if raw.tie_word_embeddings == Some(true) {
        return Err(ConfigError::UnsupportedOption("tie_word_embeddings"));
    }
    if raw.attention_bias == Some(false) {
        return Err(ConfigError::UnsupportedOption("attention_bias = false"));
    }
    refuse_rope_scaling(raw.rope_scaling.as_ref(), raw.rope_parameters.as_ref())?;
    let n_embd = positive(raw.hidden_size, "hidden_size")?;
    let n_head = positive(raw.num_attention_heads, "num_attention_heads")?;
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
    let epsilon = positive_number(raw.layer_norm_eps.unwrap_or(1e-5), "layer_norm_eps")?;
    let parameters = raw.rope_parameters.as_ref();
    let share = raw
        .rotary_pct
        .or(parameters.and_then(|p| p.partial_rotary_factor))
        .unwrap_or(0.25);
    let base = raw
        .rotary_emb_base
        .or(raw.rope_theta)
        .or(parameters.and_then(|p| p.rope_theta))
        .unwrap_or(10_000.0);
    let head_dim = n_embd / n_head;
    // transformers' `int(head_dim * partial_rotary_factor)`.
    let rotary_dims = (head_dim as f64 * share) as usize;
    if !(share > 0.0 && share <= 1.0) || rotary_dims == 0 || !rotary_dims.is_multiple_of(2) {
        return Err(ConfigError::Invalid {
            field: "rotary_pct",
            reason: format!("{share} of heads {head_dim} wide is not an even number of values"),
        });
    }
    positive_number(base, "rotary_emb_base")?;
    Ok(
        TransformerConfig::new(n_layer, n_head, n_embd, vocab_size, n_positions, n_inner)
            .with_layer_norm_epsilon(epsilon)
            .with_family(Family::GptNeox {
                rotary_dims,
                rotary_base: base,
                parallel_residual: raw.use_parallel_residual.unwrap_or(true),
            }),
    )
}
