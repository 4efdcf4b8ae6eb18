//! A deterministic random GPT-2 (or GPT-NeoX, or Llama), written as a Hugging Face model folder.
//!
//! The weights depend only on the config and the seed, through SplitMix64 (stable forever,
//! unlike library RNGs whose streams may change between versions), so a golden fixture
//! computed once by `transformers` stays valid.

use std::collections::BTreeMap;

use crate::model::loader::expected_tensors;
use crate::model::{Family, TransformerConfig};
use crate::rng::SplitMix64;

/// safetensors metadata key that marks the random test model, so every front end can say
/// plainly that its predictions mean nothing.
pub const RANDOM_TEST_MODEL_KEY: &str = "clozelab_random_test_model";

/// Standard deviation of the random matrices. Larger than GPT-2's 0.02 so that the test model's
/// next-token distributions are not flat and differences between implementations show.
pub const TEST_WEIGHT_STD: f32 = 0.1;

/// The test model's config: the real vocabulary, a small body.
pub fn test_config(layers: usize, dim: usize, heads: usize) -> TransformerConfig {
    TransformerConfig::new(layers, heads, dim, 50257, 1024, 4 * dim)
}

/// The GPT-NeoX test model's config: GPT-2's vocabulary and body, with Pythia's architecture (a
/// quarter of each head rotary, base 10000, the parallel residual, an untied head, 2048
/// positions).
pub fn test_gpt_neox_config(layers: usize, dim: usize, heads: usize) -> TransformerConfig {
    TransformerConfig::new(layers, heads, dim, 50257, 2048, 4 * dim).with_family(Family::GptNeox {
        rotary_dims: (dim / heads.max(1)) / 4,
        rotary_base: 10_000.0,
        parallel_residual: true,
    })
}

/// The Llama test model's config: GPT-2's vocabulary, SmolLM2's architecture (query heads
/// in groups over `kv_heads` key/value heads, the hidden layer 8/3 of the width rounded up to a
/// multiple of 16, rotary base 100000, the head tied to the embedding, 8192 positions) at width
/// `dim`.
pub fn test_llama_config(
    layers: usize,
    dim: usize,
    heads: usize,
    kv_heads: usize,
) -> TransformerConfig {
    let head_dim = dim / heads.max(1);
    TransformerConfig::new(
        layers,
        heads,
        dim,
        50257,
        8192,
        (8 * dim / 3).next_multiple_of(16),
    )
    .with_layer_norm_epsilon(1e-5)
    .with_family(Family::Llama {
        rotary_dims: head_dim,
        rotary_base: 100_000.0,
        kv_heads,
        tied_head: true,
    })
}

/// Generates every tensor of `config` from `seed`, by the key it is stored under (GPT-NeoX's
/// base model's prefixed with `gpt_neox.`, Llama's with `model.`, as transformers saves them).
///
/// Matrices are uniform with standard deviation [`TEST_WEIGHT_STD`]; biases are uniform with
/// a tenth of that; LayerNorm gains are 1 ± 0.1. Each tensor draws from its own stream
/// (seed mixed with its index) so changing one shape does not reshuffle the others.
pub fn generate_weights(
    config: &TransformerConfig,
    seed: u64,
) -> BTreeMap<String, (Vec<f32>, Vec<usize>)> {
    generate_weights_with_std(config, seed, TEST_WEIGHT_STD)
}

/// [`generate_weights`] with matrices of standard deviation `std` (biases a tenth of it; the
/// norms' gains unchanged). Larger than [`TEST_WEIGHT_STD`] gives activations as far out as a
/// trained model's largest, where a kernel's `exp` or `tanh` overflows.
pub fn generate_weights_with_std(
    config: &TransformerConfig,
    seed: u64,
    std: f32,
) -> BTreeMap<String, (Vec<f32>, Vec<usize>)> {
    let half_width = std * 3f32.sqrt();
    expected_tensors(config)
        .into_iter()
        .enumerate()
        .map(|(index, (name, shape))| {
            let mut rng =
                SplitMix64::new(seed ^ ((index as u64 + 1).wrapping_mul(0xA076_1D64_78BD_642F)));
            let count: usize = shape.iter().product();
            let is_norm = name == "norm.weight"
                || ["ln_", "layernorm", "layer_norm"]
                    .iter()
                    .any(|part| name.contains(part));
            let values = (0..count)
                .map(|_| {
                    if is_norm && name.ends_with("weight") {
                        1.0 + rng.uniform(0.1)
                    } else if shape.len() == 1 {
                        rng.uniform(half_width * 0.1)
                    } else {
                        rng.uniform(half_width)
                    }
                })
                .collect();
            (stored_key(&config.family, name), (values, shape))
        })
        .collect()
}

/// The key a tensor is stored under in a transformers save of the family's LM.
fn stored_key(family: &Family, name: String) -> String {
    match family {
        Family::GptNeox { .. } if name != "embed_out.weight" => format!("gpt_neox.{name}"),
        Family::Llama { .. } if name != "lm_head.weight" => format!("model.{name}"),
        _ => name,
    }
}

/// Why tensors could not be written as safetensors.
#[derive(Debug, thiserror::Error)]
pub enum SafetensorsWriteError {
    #[error("tensor {name}: {values} values do not fill shape {shape:?}")]
    ShapeMismatch {
        name: String,
        values: usize,
        shape: Vec<usize>,
    },
    #[error("safetensors header: {0}")]
    Header(#[from] serde_json::Error),
}

/// Serialises tensors as a safetensors file (f32, little-endian), byte-for-byte reproducible:
/// tensors and metadata in sorted order (the `safetensors` crate takes metadata as a `HashMap`,
/// whose order changes from run to run).
pub fn to_safetensors(
    tensors: &BTreeMap<String, (Vec<f32>, Vec<usize>)>,
) -> Result<Vec<u8>, SafetensorsWriteError> {
    let mut header = serde_json::Map::new();
    header.insert(
        "__metadata__".into(),
        serde_json::json!({
            "format": "pt",
            (RANDOM_TEST_MODEL_KEY): "random weights from clozelab make-test-model",
        }),
    );
    let mut offset = 0usize;
    for (name, (values, shape)) in tensors {
        if values.len() != shape.iter().product::<usize>() {
            return Err(SafetensorsWriteError::ShapeMismatch {
                name: name.clone(),
                values: values.len(),
                shape: shape.clone(),
            });
        }
        let end = offset + values.len() * 4;
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [offset, end]}),
        );
        offset = end;
    }
    let mut header = serde_json::to_vec(&header)?;
    // The data section starts 8-byte aligned, padded with spaces as the format allows.
    while header.len() % 8 != 0 {
        header.push(b' ');
    }
    let mut out = Vec::with_capacity(8 + header.len() + offset);
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(&header);
    for (values, _) in tensors.values() {
        out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    }
    Ok(out)
}
