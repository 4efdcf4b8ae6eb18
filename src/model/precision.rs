//! The number format of the weights in GPT-2's matrix products: f32, or f16 on a GPU whose
//! adapter offers `shader-f16`.
//!
//! In f16 only the blocks' four projections' weights are half precision. Their products take
//! the f32 activations as they are, accumulate in f32 and are written in f32 (one kernel,
//! [`kernels::half_product`]), so of f16 only the weights' rounding remains. The residual stream,
//! the layer norms, the attention, the biases and the tied embedding / LM head stay f32: GPT-2's
//! residual stream has activations in the thousands whose squares (layer norm) overflow f16's
//! 65504; its logits lie far from zero, where f16's steps (1/16 at 100) would move
//! probabilities by percents. Halving the blocks' weights takes a decoding step from about 494
//! to 324 MB read at GPT-2 small's size.
//!
//! The cost, measured against f32 on the random test models (tests/all/half_precision.rs), is
//! the weights' rounding and nothing more: the same as rounding the weights to f16 and running
//! the f32 model on the CPU, to two digits. On the golden contexts (2-layer model) the
//! next-token total variation distance stays within [`F16_MAX_TVD`] (2.6e-4 measured) and exact
//! word probabilities within [`F16_MAX_RELATIVE_ERROR`] relative (9.7e-4 measured); at GPT-2
//! small's shape (12 layers, 768 wide) the TVD reaches 2.7e-3 ([`F16_MAX_TVD_GPT2_SMALL_SHAPE`])
//! and word probabilities move by up to 1.4e-2 relative, which no f16 storage of these weights
//! can improve on. That, and this kernel's speed on a GPU (natively on a lent H200, f16 weights
//! ran at about half of f32's tokens/s: `docs/performance.md`; it has no tensor cores, as cubek
//! offers none for an f32 × f16 pair), is why f32 stays the default and f16 is a choice.
//!
//! [`kernels::half_product`]: super::ops::kernels::half_product

use burn::tensor::{Device, FloatDType};

use super::ops::backend::HalfWeights;
use super::ops::half_weights;

/// The largest next-token total variation distance between f16 and f32 that the tests accept
/// on the golden contexts (2-layer test model).
pub const F16_MAX_TVD: f64 = 1e-3;

/// The same at GPT-2 small's shape (12 layers, 768 wide), where the weights' rounding alone
/// moves next-token distributions by up to 2.7e-3: what the page and the CLI promise.
pub const F16_MAX_TVD_GPT2_SMALL_SHAPE: f64 = 3e-3;

/// The largest relative difference between f16's and f32's exact word probabilities that the
/// tests accept (on the 2-layer test model; a word's error compounds over the layers).
pub const F16_MAX_RELATIVE_ERROR: f64 = 1e-3;

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
        match (self, half_weights(device)) {
            (Precision::F32, _) | (Precision::F16, HalfWeights::Run) => Ok(()),
            (Precision::F16, HalfWeights::CpuBackend) => Err(PrecisionError::CpuBackend),
            (Precision::F16, HalfWeights::NoShaderF16) => Err(PrecisionError::NoShaderF16),
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
