//! A Hugging Face `config.json` of any family clozelab runs, read by its `model_type`, and
//! written for transformers to load.

use serde::Deserialize;

use super::config::{ConfigError, TransformerConfig};
use super::family::Family;
use super::gpt_neox_config::from_gpt_neox_json;
use super::llama_config::{from_llama_json, llama_json};

#[derive(Deserialize)]
struct ModelType {
    model_type: Option<String>,
}

impl TransformerConfig {
    /// Parses a Hugging Face `config.json`: GPT-2's ([`TransformerConfig::from_gpt2_json`], also where
    /// `model_type` is absent), GPT-NeoX's ([`from_gpt_neox_json`]) or Llama's
    /// ([`from_llama_json`]); any other `model_type` is refused by name.
    pub fn from_hf_json(text: &str) -> Result<Self, ConfigError> {
        let raw: ModelType =
            serde_json::from_str(text).map_err(|e| ConfigError::Json(e.to_string()))?;
        match raw.model_type.as_deref() {
            None | Some("gpt2") => Self::from_gpt2_json(text),
            Some("gpt_neox") => from_gpt_neox_json(text),
            Some("llama") => from_llama_json(text),
            Some(model_type) => Err(ConfigError::Invalid {
                field: "model_type",
                reason: format!(
                    "expected \"gpt2\", \"gpt_neox\" or \"llama\", found {model_type:?}"
                ),
            }),
        }
    }

    /// Writes the config as a Hugging Face `config.json` that `transformers` loads as
    /// `GPT2Config`, `GPTNeoXConfig` for [`Family::GptNeox`] or `LlamaConfig` for
    /// [`Family::Llama`].
    pub fn to_hf_json(&self) -> String {
        let value = match &self.family {
            Family::Gpt2 => self.gpt2_json(),
            Family::Llama { .. } => llama_json(self).unwrap_or_default(),
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
}
