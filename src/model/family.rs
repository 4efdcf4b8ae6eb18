//! Which architecture a model is: GPT-2, GPT-NeoX (Pythia) or Llama (SmolLM2), with what sets
//! each apart. The blocks ([`super::block`]) are shared; a family only chooses their parts.

use serde::{Deserialize, Serialize};

use super::ops::rotary::{RotaryError, RotaryTable};

/// A model family and its architectural choices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Family {
    /// GPT-2: learned positions, the tanh GELU, attention then the MLP, the head tied to `wte`.
    Gpt2,
    /// GPT-NeoX (Pythia): rotary embeddings on the first `rotary_dims` values of each head
    /// (`rotary_pct` of it) with base `rotary_base`, the exact GELU, attention and the MLP side
    /// by side on the same input where `parallel_residual`, and a head of its own (`embed_out`).
    GptNeox {
        rotary_dims: usize,
        rotary_base: f64,
        parallel_residual: bool,
    },
    /// Llama (SmolLM2): RMS norms without biases, rotary embeddings on the first `rotary_dims`
    /// values of each head with base `rotary_base`, grouped-query attention (`kv_heads`
    /// key/value heads, each serving `n_head / kv_heads` query heads), the SiLU-gated MLP
    /// (SwiGLU), and the head tied to the embedding where `tied_head`.
    Llama {
        rotary_dims: usize,
        rotary_base: f64,
        kv_heads: usize,
        tied_head: bool,
    },
}

/// The norm a family's blocks use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormKind {
    /// LayerNorm with a bias (GPT-2, GPT-NeoX).
    Layer,
    /// The root-mean-square norm, gain only (Llama).
    Rms,
}

impl Family {
    /// The architecture's name, as the page shows it.
    pub fn name(&self) -> &'static str {
        match self {
            Family::Gpt2 => "GPT-2",
            Family::GptNeox { .. } => "GPT-NeoX",
            Family::Llama { .. } => "Llama",
        }
    }

    /// Hugging Face's `model_type` for the family.
    pub fn model_type(&self) -> &'static str {
        match self {
            Family::Gpt2 => "gpt2",
            Family::GptNeox { .. } => "gpt_neox",
            Family::Llama { .. } => "llama",
        }
    }

    /// The rotary table the family's attention turns queries and keys by (none for GPT-2).
    pub fn rotary(&self) -> Result<Option<RotaryTable>, RotaryError> {
        match self {
            Family::Gpt2 => Ok(None),
            Family::GptNeox {
                rotary_dims,
                rotary_base,
                ..
            }
            | Family::Llama {
                rotary_dims,
                rotary_base,
                ..
            } => RotaryTable::new(*rotary_dims, *rotary_base).map(Some),
        }
    }

    /// How many key/value heads a block of `n_head` query heads has.
    pub fn kv_heads(&self, n_head: usize) -> usize {
        match self {
            Family::Llama { kv_heads, .. } => *kv_heads,
            _ => n_head,
        }
    }

    /// The norm every block and the final norm use.
    pub fn norm(&self) -> NormKind {
        match self {
            Family::Llama { .. } => NormKind::Rms,
            _ => NormKind::Layer,
        }
    }

    /// Whether attention and the MLP read the same input and both add to the residual.
    pub fn parallel_residual(&self) -> bool {
        matches!(
            self,
            Family::GptNeox {
                parallel_residual: true,
                ..
            }
        )
    }

    /// Whether the LM head is the token embedding itself.
    pub fn tied_head(&self) -> bool {
        match self {
            Family::Gpt2 => true,
            Family::GptNeox { .. } => false,
            Family::Llama { tied_head, .. } => *tied_head,
        }
    }
}
