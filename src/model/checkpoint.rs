//! A Hugging Face `model.safetensors` (or a GGUF file, read as the checkpoint it came from)
//! read into checked f32 tensors by key, and the modules the
//! loaders make of them: what every family's loader shares ([`super::loader`] for GPT-2,
//! `gpt_neox_loader` for GPT-NeoX). Bytes come from anywhere (file, fetch, Cache Storage), so
//! nothing here touches the file system.

use std::collections::{BTreeMap, BTreeSet};

use burn::module::Param;
use burn::tensor::{Device, Tensor, TensorData};
use safetensors::{Dtype, SafeTensorError, SafeTensors};

use super::block::Norm;
use super::config::ConfigError;
use super::error::ModelError;
use super::ops::backend::Backend;
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
    #[error("the GGUF file: {0}")]
    Gguf(#[from] super::gguf::GgufError),
    #[error(transparent)]
    Panels(#[from] PanelError),
    #[error(transparent)]
    Model(#[from] ModelError),
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
    Ok(values)
}

/// Parsed checkpoint: validated, converted tensors by canonical key (no base model's prefix).
pub(super) struct Checkpoint {
    pub(super) tensors: BTreeMap<String, (Vec<f32>, Vec<usize>)>,
}

/// What a family's checkpoint holds: the keys and shapes it must have (without `prefix`, the
/// base model's), the keys it may carry that are left out, and one of those whose shape must
/// still agree (a tied head).
pub(super) struct CheckpointRules {
    pub prefix: &'static str,
    pub expected: Vec<(String, Vec<usize>)>,
    pub ignorable: fn(&str) -> bool,
    pub ignored_but_checked: Option<(&'static str, Vec<usize>)>,
}

/// A stored tensor before it is decoded: its name as stored, its shape and how to read it as
/// f32 (only tensors the rules keep are decoded).
struct Stored<'a> {
    name: String,
    shape: Vec<usize>,
    values: Box<dyn FnOnce() -> Result<Vec<f32>, LoadError> + 'a>,
}

impl Checkpoint {
    /// A safetensors file, or a GGUF file (by its magic) read as the checkpoint it was
    /// converted from ([`super::gguf::hf`]).
    pub(super) fn parse(rules: CheckpointRules, bytes: &[u8]) -> Result<Self, LoadError> {
        if bytes.starts_with(super::gguf::MAGIC) {
            let file = super::gguf::GgufFile::parse(bytes)?;
            let tensors = super::gguf::hf::tensors(&file, bytes)?;
            let stored = tensors.into_iter().map(|(name, shape, values)| Stored {
                values: Box::new(move || Ok(values)),
                name,
                shape,
            });
            return Self::collect(rules, stored);
        }
        let file = SafeTensors::deserialize(bytes).map_err(map_safetensors_error)?;
        let stored = file.iter().map(|(name, view)| Stored {
            name: name.to_string(),
            shape: view.shape().to_vec(),
            values: Box::new(move || to_f32(name, view.dtype(), view.data())),
        });
        Self::collect(rules, stored)
    }

    fn collect<'a>(
        rules: CheckpointRules,
        stored: impl Iterator<Item = Stored<'a>>,
    ) -> Result<Self, LoadError> {
        let CheckpointRules {
            prefix,
            expected,
            ignorable,
            ignored_but_checked,
        } = rules;
        let expected: BTreeMap<String, Vec<usize>> = expected.into_iter().collect();
        let mut seen = BTreeSet::new();
        let mut tensors = BTreeMap::new();
        for tensor in stored {
            let stored_name = tensor.name.as_str();
            let name = stored_name.strip_prefix(prefix).unwrap_or(stored_name);
            if let Some((checked, shape)) = &ignored_but_checked
                && name == *checked
                && tensor.shape != *shape
            {
                return Err(LoadError::ShapeMismatch {
                    name: stored_name.to_string(),
                    expected: shape.clone(),
                    found: tensor.shape,
                });
            }
            if ignorable(name) {
                continue;
            }
            let Some(shape) = expected.get(name) else {
                return Err(LoadError::UnexpectedTensor(stored_name.to_string()));
            };
            if tensor.shape != *shape {
                return Err(LoadError::ShapeMismatch {
                    name: stored_name.to_string(),
                    expected: shape.clone(),
                    found: tensor.shape,
                });
            }
            if !seen.insert(name.to_string()) {
                // Both `x` and `transformer.x` present: ambiguous, refuse rather than guess.
                return Err(LoadError::UnexpectedTensor(stored_name.to_string()));
            }
            let values = (tensor.values)()?;
            if values.iter().any(|v| !v.is_finite()) {
                return Err(LoadError::NonFinite(stored_name.to_string()));
            }
            tensors.insert(name.to_string(), (values, shape.clone()));
        }
        if let Some(missing) = expected.keys().find(|k| !tensors.contains_key(*k)) {
            return Err(LoadError::MissingTensor(missing.clone()));
        }
        Ok(Checkpoint { tensors })
    }

    /// Every tensor, by name: (name, shape, values).
    pub(super) fn into_tensors(self) -> Vec<super::gguf::hf::NamedTensor> {
        self.tensors
            .into_iter()
            .map(|(name, (values, shape))| (name, shape, values))
            .collect()
    }

    pub(super) fn take<const D: usize>(
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

    pub(super) fn layer_norm(
        &mut self,
        prefix: &str,
        epsilon: f64,
        device: &Device,
    ) -> Result<Norm, LoadError> {
        Ok(Norm {
            weight: self.take(&format!("{prefix}.weight"), device)?,
            bias: Some(self.take(&format!("{prefix}.bias"), device)?),
            epsilon,
        })
    }

    /// An RMS norm's gain, `{prefix}.weight`.
    pub(super) fn rms_norm(
        &mut self,
        prefix: &str,
        epsilon: f64,
        device: &Device,
    ) -> Result<Norm, LoadError> {
        Ok(Norm {
            weight: self.take(&format!("{prefix}.weight"), device)?,
            bias: None,
            epsilon,
        })
    }

    /// A tensor's values, whose shape the parse checked.
    pub(super) fn values(&mut self, name: &str) -> Result<Vec<f32>, LoadError> {
        let (values, _) = self
            .tensors
            .remove(name)
            .ok_or_else(|| LoadError::MissingTensor(name.to_string()))?;
        Ok(values)
    }

    /// A `Conv1D` whose weight is `[n_in, n_out]` (checked again here, as the packing relies on
    /// it), laid out for `backend`.
    pub(super) fn conv1d(
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

    /// `nn.Linear` weights `{name}.weight` (`[n_out, n_in]` each, with `{name}.bias` where
    /// `biased`, else a zero bias) stacked along their outputs into one projection
    /// `[n_in, Σ n_out]` laid out for `backend`, its outputs taken in `order` where given (as
    /// Llama's query, key and value projections become one fused projection).
    pub(super) fn linear(
        &mut self,
        names: &[&str],
        n_in: usize,
        biased: bool,
        order: Option<&[usize]>,
        backend: Backend,
        device: &Device,
    ) -> Result<Conv1D, LoadError> {
        let mut weight = Vec::new();
        let mut bias = Vec::new();
        for name in names {
            let values = self.values(&format!("{name}.weight"))?;
            let n_out = values.len() / n_in.max(1);
            weight.extend(values);
            match biased {
                true => bias.extend(self.values(&format!("{name}.bias"))?),
                false => bias.extend(std::iter::repeat_n(0.0, n_out)),
            }
        }
        let n_out = bias.len();
        let source = |o: usize| order.map_or(o, |order| order[o]);
        let mut transposed = vec![0f32; n_in * n_out];
        for o in 0..n_out {
            let row = &weight[source(o) * n_in..(source(o) + 1) * n_in];
            for (i, &w) in row.iter().enumerate() {
                transposed[i * n_out + o] = w;
            }
        }
        let bias: Vec<f32> = (0..n_out).map(|o| bias[source(o)]).collect();
        let bias = Param::from_tensor(Tensor::from_data(TensorData::new(bias, [n_out]), device));
        Ok(Conv1D::new(
            backend,
            transposed,
            [n_in, n_out],
            bias,
            device,
        )?)
    }
}
