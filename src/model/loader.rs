//! Loads Hugging Face GPT-2 checkpoints (`config.json` + `model.safetensors` bytes).
//!
//! Accepts keys with or without the `transformer.` prefix (`GPT2LMHeadModel` vs `GPT2Model`
//! saves), f32/f16/bf16 storage, and ignores the causal-mask buffers older exports carry
//! (`attn.bias`, `attn.masked_bias`) and a tied `lm_head.weight`. Everything else that does not
//! match the config is an error naming the tensor. Bytes come from anywhere (file, fetch, Cache
//! Storage), so nothing here touches the file system.

use std::collections::{BTreeMap, BTreeSet};

use burn::module::Param;
use burn::tensor::{Device, Tensor, TensorData};
use safetensors::{Dtype, SafeTensorError, SafeTensors};

use super::block::{Attention, Block, LayerNorm, Mlp};
use super::config::{ConfigError, Gpt2Config};
use super::gpt2::Gpt2;
use super::ops::backend::Backend;
use super::ops::embedding::TokenEmbedding;
use super::ops::panel_product::PanelError;
use super::ops::projection::Conv1D;

/// Why a checkpoint cannot be loaded. Every tensor-level variant names the tensor.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LoadError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("the weights file is not a safetensors file: {0}")]
    NotSafetensors(String),
    #[error("the weights file is truncated or incomplete ({0})")]
    Truncated(String),
    #[error("tensor `{0}` is missing from the weights file")]
    MissingTensor(String),
    #[error("unexpected tensor `{0}` in the weights file (is this a GPT-2 checkpoint?)")]
    UnexpectedTensor(String),
    #[error("tensor `{name}` has shape {found:?}, but the config implies {expected:?}")]
    ShapeMismatch {
        name: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    #[error("tensor `{name}` is stored as {dtype}; supported: F32, F16, BF16")]
    UnsupportedDtype { name: String, dtype: String },
    #[error("tensor `{0}` holds a NaN or infinite value")]
    NonFinite(String),
    #[error(transparent)]
    Panels(#[from] PanelError),
}

/// Expected checkpoint keys and shapes for `config`, in module order.
pub fn expected_tensors(config: &Gpt2Config) -> Vec<(String, Vec<usize>)> {
    let (e, inner) = (config.n_embd, config.n_inner);
    let mut keys = vec![
        ("wte.weight".to_string(), vec![config.vocab_size, e]),
        ("wpe.weight".to_string(), vec![config.n_positions, e]),
    ];
    for i in 0..config.n_layer {
        let p = format!("h.{i}.");
        for (suffix, shape) in [
            ("ln_1.weight", vec![e]),
            ("ln_1.bias", vec![e]),
            ("attn.c_attn.weight", vec![e, 3 * e]),
            ("attn.c_attn.bias", vec![3 * e]),
            ("attn.c_proj.weight", vec![e, e]),
            ("attn.c_proj.bias", vec![e]),
            ("ln_2.weight", vec![e]),
            ("ln_2.bias", vec![e]),
            ("mlp.c_fc.weight", vec![e, inner]),
            ("mlp.c_fc.bias", vec![inner]),
            ("mlp.c_proj.weight", vec![inner, e]),
            ("mlp.c_proj.bias", vec![e]),
        ] {
            keys.push((format!("{p}{suffix}"), shape));
        }
    }
    keys.push(("ln_f.weight".to_string(), vec![e]));
    keys.push(("ln_f.bias".to_string(), vec![e]));
    keys
}

/// Keys that carry no learned state clozelab needs: the causal masks of old exports and the
/// LM head, which GPT-2 ties to `wte`.
fn is_ignorable(key: &str) -> bool {
    key == "lm_head.weight"
        || (key.starts_with("h.")
            && (key.ends_with(".attn.bias") || key.ends_with(".attn.masked_bias")))
}

fn map_safetensors_error(err: SafeTensorError) -> LoadError {
    match err {
        SafeTensorError::MetadataIncompleteBuffer
        | SafeTensorError::HeaderTooSmall
        | SafeTensorError::InvalidHeaderLength => LoadError::Truncated(err.to_string()),
        other => LoadError::NotSafetensors(other.to_string()),
    }
}

/// Converts stored little-endian values to f32.
fn to_f32(name: &str, dtype: Dtype, bytes: &[u8]) -> Result<Vec<f32>, LoadError> {
    let values: Vec<f32> = match dtype {
        Dtype::F32 => bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F16 => bytes
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        Dtype::BF16 => bytes
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        other => {
            return Err(LoadError::UnsupportedDtype {
                name: name.to_string(),
                dtype: format!("{other:?}"),
            });
        }
    };
    if values.iter().any(|v| !v.is_finite()) {
        return Err(LoadError::NonFinite(name.to_string()));
    }
    Ok(values)
}

/// Parsed checkpoint: validated, converted tensors by canonical key (no `transformer.`).
struct Checkpoint {
    tensors: BTreeMap<String, (Vec<f32>, Vec<usize>)>,
}

impl Checkpoint {
    fn parse(config: &Gpt2Config, bytes: &[u8]) -> Result<Self, LoadError> {
        let file = SafeTensors::deserialize(bytes).map_err(map_safetensors_error)?;
        let expected: BTreeMap<String, Vec<usize>> = expected_tensors(config).into_iter().collect();
        let mut seen = BTreeSet::new();
        let mut tensors = BTreeMap::new();
        for (stored_name, view) in file.iter() {
            let name = stored_name
                .strip_prefix("transformer.")
                .unwrap_or(stored_name);
            if name == "lm_head.weight" && view.shape() != [config.vocab_size, config.n_embd] {
                return Err(LoadError::ShapeMismatch {
                    name: stored_name.to_string(),
                    expected: vec![config.vocab_size, config.n_embd],
                    found: view.shape().to_vec(),
                });
            }
            if is_ignorable(name) {
                continue;
            }
            let Some(shape) = expected.get(name) else {
                return Err(LoadError::UnexpectedTensor(stored_name.to_string()));
            };
            if view.shape() != shape.as_slice() {
                return Err(LoadError::ShapeMismatch {
                    name: stored_name.to_string(),
                    expected: shape.clone(),
                    found: view.shape().to_vec(),
                });
            }
            if !seen.insert(name.to_string()) {
                // Both `x` and `transformer.x` present: ambiguous, refuse rather than guess.
                return Err(LoadError::UnexpectedTensor(stored_name.to_string()));
            }
            let values = to_f32(stored_name, view.dtype(), view.data())?;
            tensors.insert(name.to_string(), (values, shape.clone()));
        }
        if let Some(missing) = expected.keys().find(|k| !tensors.contains_key(*k)) {
            return Err(LoadError::MissingTensor(missing.clone()));
        }
        Ok(Checkpoint { tensors })
    }

    fn take<const D: usize>(
        &mut self,
        name: &str,
        device: &Device,
    ) -> Result<Param<Tensor<D>>, LoadError> {
        let (values, shape) = self
            .tensors
            .remove(name)
            .ok_or_else(|| LoadError::MissingTensor(name.to_string()))?;
        Ok(Param::from_tensor(Tensor::from_data(
            TensorData::new(values, shape),
            device,
        )))
    }

    fn layer_norm(
        &mut self,
        prefix: &str,
        epsilon: f64,
        device: &Device,
    ) -> Result<LayerNorm, LoadError> {
        Ok(LayerNorm {
            weight: self.take(&format!("{prefix}.weight"), device)?,
            bias: self.take(&format!("{prefix}.bias"), device)?,
            epsilon,
        })
    }

    /// A `Conv1D` whose weight is `[n_in, n_out]` (checked again here, as the packing relies on
    /// it), laid out for `backend`.
    fn conv1d(
        &mut self,
        prefix: &str,
        [n_in, n_out]: [usize; 2],
        backend: Backend,
        device: &Device,
    ) -> Result<Conv1D, LoadError> {
        let name = format!("{prefix}.weight");
        let (values, shape) = self
            .tensors
            .remove(&name)
            .ok_or_else(|| LoadError::MissingTensor(name.clone()))?;
        if shape != [n_in, n_out] {
            return Err(LoadError::ShapeMismatch {
                name,
                expected: vec![n_in, n_out],
                found: shape,
            });
        }
        let bias = self.take(&format!("{prefix}.bias"), device)?;
        Ok(Conv1D::new(backend, values, [n_in, n_out], bias, device)?)
    }
}

/// Loads GPT-2 from `config.json` text and `model.safetensors` bytes onto `device`.
pub fn load_gpt2(
    config_json: &str,
    safetensors: &[u8],
    device: &Device,
) -> Result<(Gpt2Config, Gpt2), LoadError> {
    let config = Gpt2Config::from_hf_json(config_json)?;
    let model = load_with_config(&config, safetensors, device)?;
    Ok((config, model))
}

/// Loads weights for an already parsed config.
pub fn load_with_config(
    config: &Gpt2Config,
    safetensors: &[u8],
    device: &Device,
) -> Result<Gpt2, LoadError> {
    let mut ckpt = Checkpoint::parse(config, safetensors)?;
    let backend = Backend::of(device);
    let eps = config.layer_norm_epsilon;
    let (e, inner) = (config.n_embd, config.n_inner);
    let mut h = Vec::with_capacity(config.n_layer);
    for i in 0..config.n_layer {
        let p = format!("h.{i}");
        h.push(Block {
            ln_1: ckpt.layer_norm(&format!("{p}.ln_1"), eps, device)?,
            attn: Attention {
                c_attn: ckpt.conv1d(&format!("{p}.attn.c_attn"), [e, 3 * e], backend, device)?,
                c_proj: ckpt.conv1d(&format!("{p}.attn.c_proj"), [e, e], backend, device)?,
                n_head: config.n_head,
            },
            ln_2: ckpt.layer_norm(&format!("{p}.ln_2"), eps, device)?,
            mlp: Mlp {
                c_fc: ckpt.conv1d(&format!("{p}.mlp.c_fc"), [e, inner], backend, device)?,
                c_proj: ckpt.conv1d(&format!("{p}.mlp.c_proj"), [inner, e], backend, device)?,
            },
        });
    }
    Ok(Gpt2 {
        wte: {
            let (values, _) = ckpt
                .tensors
                .remove("wte.weight")
                .ok_or_else(|| LoadError::MissingTensor("wte.weight".into()))?;
            TokenEmbedding::from_rows(backend, values, config.vocab_size, config.n_embd, device)?
        },
        wpe: ckpt.take("wpe.weight", device)?,
        h,
        ln_f: ckpt.layer_norm("ln_f", eps, device)?,
        vocab_size: config.vocab_size,
        n_positions: config.n_positions,
        backend,
    })
}
