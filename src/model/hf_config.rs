//! A Hugging Face `config.json` of any family clozelab runs, read by its `model_type`.

use serde::Deserialize;

use super::config::{ConfigError, Gpt2Config};
use super::gpt_neox_config::from_gpt_neox_json;

#[derive(Deserialize)]
struct ModelType {
    model_type: Option<String>,
}

impl Gpt2Config {
    /// Parses a Hugging Face `config.json`: GPT-2's ([`Gpt2Config::from_gpt2_json`], also where
    /// `model_type` is absent) or GPT-NeoX's ([`from_gpt_neox_json`]); any other `model_type` is
    /// refused by name.
    pub fn from_hf_json(text: &str) -> Result<Self, ConfigError> {
        let raw: ModelType =
            serde_json::from_str(text).map_err(|e| ConfigError::Json(e.to_string()))?;
        match raw.model_type.as_deref() {
            None | Some("gpt2") => Self::from_gpt2_json(text),
            Some("gpt_neox") => from_gpt_neox_json(text),
            Some(model_type) => Err(ConfigError::Invalid {
                field: "model_type",
                reason: format!("expected \"gpt2\" or \"gpt_neox\", found {model_type:?}"),
            }),
        }
    }
}
