//! The root-mean-square norm of Llama-style models (SmolLM2): no mean subtracted, no bias.

use burn::tensor::Tensor;

use super::backend::Composed;

/// `y = x / sqrt(mean(x²) + ε) · weight` over the last dimension, as Hugging Face's
/// `LlamaRMSNorm` computes it in f32.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use clozelab::model::ops::backend::Backend;
/// use clozelab::model::ops::rms_norm::RmsNormOp;
/// let device = Device::flex();
/// let op = RmsNormOp {
///     input: Tensor::<2>::from_floats([[3.0, 4.0]], &device),
///     weight: Tensor::<1>::from_floats([1.0, 2.0], &device),
///     epsilon: 0.0,
/// };
/// // mean(x²) = 12.5: 3 / √12.5 and 2 · 4 / √12.5.
/// let y = Backend::of(&device).run(op).into_data().to_vec::<f32>().unwrap();
/// assert!((y[0] - 0.848_528).abs() < 1e-6 && (y[1] - 2.262_742).abs() < 1e-6);
/// ```
///
/// # Shapes
/// - input `[..., width]`, weight `[width]` → output `[..., width]`
#[derive(Clone, Debug)]
pub struct RmsNormOp<const D: usize> {
    pub input: Tensor<D>,
    pub weight: Tensor<1>,
    pub epsilon: f64,
}

impl<const D: usize> Composed for RmsNormOp<D> {
    type Output = Tensor<D>;

    fn composed(self) -> Tensor<D> {
        let mean_square = self.input.clone().powi_scalar(2).mean_dim(D - 1);
        let scale = (mean_square + self.epsilon).sqrt().recip();
        self.input * scale * self.weight.unsqueeze::<D>()
    }
}
