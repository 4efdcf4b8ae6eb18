//! The layer norm: one kernel on a GPU, burn's composition on the CPU (which is also the
//! reference the kernel is tested against).

use burn::tensor::Tensor;

use super::backend::{Backend, Op};
use super::kernels;

/// `y = (x − mean) / sqrt(var + ε) · weight + bias` over the last dimension, with the biased
/// variance as PyTorch's `LayerNorm`.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use clozelab::model::ops::backend::Backend;
/// use clozelab::model::ops::layer_norm::LayerNormOp;
/// let device = Device::flex();
/// let op = LayerNormOp {
///     input: Tensor::<2>::from_floats([[1.0, 3.0]], &device),
///     weight: Tensor::<1>::from_floats([2.0, 2.0], &device),
///     bias: Tensor::<1>::from_floats([0.5, 0.5], &device),
///     epsilon: 0.0,
/// };
/// let y = Backend::of(&device).run(op).into_data().to_vec::<f32>().unwrap();
/// assert_eq!(y, vec![-1.5, 2.5]);
/// ```
///
/// # Shapes
/// - input `[..., width]`, weight and bias `[width]` → output `[..., width]`
#[derive(Clone, Debug)]
pub struct LayerNormOp<const D: usize> {
    pub input: Tensor<D>,
    pub weight: Tensor<1>,
    pub bias: Tensor<1>,
    pub epsilon: f64,
}

impl<const D: usize> Op for LayerNormOp<D> {
    type Output = Tensor<D>;

    fn gpu(self) -> Tensor<D> {
        kernels::layer_norm(self.input, self.weight, self.bias, self.epsilon)
    }

    fn cpu(self) -> Tensor<D> {
        self.reference()
    }

    fn browser_cpu(self) -> Tensor<D> {
        self.reference()
    }

    fn reference(self) -> Tensor<D> {
        burn::tensor::module::layer_norm(self.input, self.weight, Some(self.bias), self.epsilon)
    }
}

/// [`LayerNormOp`] on `backend`.
pub fn layer_norm<const D: usize>(
    backend: Backend,
    input: Tensor<D>,
    weight: Tensor<1>,
    bias: Tensor<1>,
    epsilon: f64,
) -> Tensor<D> {
    backend.run(LayerNormOp {
        input,
        weight,
        bias,
        epsilon,
    })
}
