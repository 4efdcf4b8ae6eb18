//! The number format of the weights in GPT-2's matrix products: f32, or f16 on a GPU whose
//! adapter offers `shader-f16`.
//!
//! In f16 only the blocks' four projections are half precision: their weights, their inputs
//! and their products (cubecl accumulates an f16 product in f32, then rounds it to f16). The
//! residual stream, the layer norms, the attention scores and softmax, the biases and the tied
//! embedding / LM head stay f32: GPT-2's residual stream has activations in the thousands whose
//! squares (layer norm) overflow f16's 65504; its logits lie far from zero, where f16's steps
//! (1/16 at 100) would move probabilities by percents; and a cumulative sum over 50257
//! probabilities in f16 would be useless. Halving the blocks' weights takes a decoding step from
//! about 494 to 324 MB read at GPT-2 small's size. That pays only where reading weights bounds a
//! step: on an H100, where launching kernels does, f16 was slower than f32 but at decode batch
//! 256 (the two casts per projection are kernels too).
//!
//! The cost, measured against f32 on the random test models (tests/all/half_precision.rs):
//! next-token distributions within [`F16_MAX_TVD`] in total variation (up to 4.3e-3 on the
//! 12-layer model, growing with the position), exact word probabilities within
//! [`F16_MAX_RELATIVE_ERROR`] on the 2-layer model (1.4e-3 measured; on the 12-layer one up to
//! 1.7e-2, on lavapipe and an H100 alike). Rounding only the weights to f16 and computing every
//! product in f32 already gives a TVD of up to 2.7e-3, so no f16 storage meets a 1e-3 bound on
//! these models. That is why f32 stays the default and f16 is a choice.

use burn::tensor::{DType, Device, FloatDType, Tensor};

/// The largest next-token total variation distance between f16 and f32 that the tests accept.
pub const F16_MAX_TVD: f64 = 5e-3;

/// The largest relative difference between f16's and f32's exact word probabilities that the
/// tests accept (on the 2-layer test model: a word's error compounds over the layers).
pub const F16_MAX_RELATIVE_ERROR: f64 = 3e-3;

/// The weights' number format (see the module docs for what stays f32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Precision {
    #[default]
    F32,
    F16,
}

/// Why a precision cannot be used on a device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrecisionError {
    #[error("f16 runs on a GPU whose adapter offers shader-f16; the CPU backend stays in f32")]
    CpuBackend,
    #[error("this GPU adapter does not offer shader-f16, so the model runs in f32")]
    NoShaderF16,
    #[error("unknown precision {0:?} (expected f32 or f16)")]
    UnknownName(String),
}

impl Precision {
    /// `"f32"` or `"f16"`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F16 => "f16",
        }
    }

    /// Whether `device` can run this precision: f32 everywhere; f16 on a GPU backend whose
    /// adapter offers `shader-f16`, never on the CPU backend (its f16 products are no faster).
    pub fn check(self, device: &Device) -> Result<(), PrecisionError> {
        match self {
            Precision::F32 => Ok(()),
            Precision::F16 if *device == Device::flex() => Err(PrecisionError::CpuBackend),
            Precision::F16 if !device.supports_dtype(DType::F16) => {
                Err(PrecisionError::NoShaderF16)
            }
            Precision::F16 => Ok(()),
        }
    }

    /// Whether `device` can run f16 ([`Precision::check`]): the choice the page and
    /// `bench forward` offer.
    pub fn f16_offered(device: &Device) -> bool {
        Precision::F16.check(device).is_ok()
    }

    /// The adapter's description as the CLI prints it and exports record it: with
    /// ", f16 weights" after it in f16, unchanged in f32 (the reference).
    pub fn label(self, adapter: &str) -> String {
        match self {
            Precision::F32 => adapter.to_string(),
            Precision::F16 => format!("{adapter}, f16 weights"),
        }
    }

    pub(crate) fn float_dtype(self) -> FloatDType {
        match self {
            Precision::F32 => FloatDType::F32,
            Precision::F16 => FloatDType::F16,
        }
    }
}

/// The inverse of [`Precision::name`] (case and surrounding space ignored).
impl std::str::FromStr for Precision {
    type Err = PrecisionError;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.trim().to_ascii_lowercase().as_str() {
            "f32" => Ok(Precision::F32),
            "f16" => Ok(Precision::F16),
            _ => Err(PrecisionError::UnknownName(name.to_string())),
        }
    }
}

/// `tensor` in the weights' format of `like` (a no-op in f32).
pub(crate) fn to_dtype_of<const D: usize, const E: usize>(
    tensor: Tensor<D>,
    like: &Tensor<E>,
) -> Tensor<D> {
    match like.dtype() {
        DType::F16 => tensor.cast(FloatDType::F16),
        _ => tensor,
    }
}

/// A product's result back in f32 (a no-op when it already is).
pub(crate) fn to_f32<const D: usize>(tensor: Tensor<D>) -> Tensor<D> {
    match tensor.dtype() {
        DType::F32 => tensor,
        _ => tensor.cast(FloatDType::F32),
    }
}
