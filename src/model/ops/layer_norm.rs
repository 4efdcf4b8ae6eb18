//! The layer norm: one kernel on a GPU, burn's composition on the CPU (which is also the
//! reference the kernel is tested against).

use burn::tensor::Tensor;

use super::{Body, kernels};

/// `y = (x − mean) / sqrt(var + ε) · weight + bias` over the last dimension, with the biased
/// variance as PyTorch's `LayerNorm`.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::flex();
/// let x = Tensor::<2>::from_floats([[1.0, 3.0]], &device);
/// let (w, b) = (Tensor::<1>::from_floats([2.0, 2.0], &device), Tensor::<1>::from_floats([0.5, 0.5], &device));
/// let y = clozelab::model::ops::layer_norm::layer_norm(x, w, b, 0.0).into_data().to_vec::<f32>().unwrap();
/// assert_eq!(y, vec![-1.5, 2.5]);
/// ```
///
/// # Shapes
/// - input `[..., width]`, weight and bias `[width]` → output `[..., width]`
pub fn layer_norm<const D: usize>(
    input: Tensor<D>,
    weight: Tensor<1>,
    bias: Tensor<1>,
    epsilon: f64,
) -> Tensor<D> {
    match Body::of(&input.device()) {
        Body::Gpu => kernels::layer_norm(input, weight, bias, epsilon),
        Body::Cpu | Body::BrowserCpu => reference(input, weight, bias, epsilon),
    }
}

/// [`layer_norm`] by burn's own composition, on any backend.
///
/// # Shapes
/// - as [`layer_norm`]
pub fn reference<const D: usize>(
    input: Tensor<D>,
    weight: Tensor<1>,
    bias: Tensor<1>,
    epsilon: f64,
) -> Tensor<D> {
    burn::tensor::module::layer_norm(input, weight, Some(bias), epsilon)
}
