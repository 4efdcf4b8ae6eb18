//! The MLP activations of the other model families: the exact GELU (GPT-NeoX, Pythia) and the
//! SiLU-gated product (SwiGLU: Llama-style models, SmolLM2). GPT-2's tanh GELU is
//! [`super::gelu`].

use burn::tensor::Tensor;
use burn::tensor::activation::{gelu, silu};

use super::backend::Composed;

/// The exact GELU, `x · Φ(x) = x · ½ (1 + erf(x / √2))`, as PyTorch's `nn.GELU()` (Hugging
/// Face's `"gelu"`).
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use clozelab::model::ops::activation::GeluExact;
/// use clozelab::model::ops::backend::Backend;
/// let x = Tensor::<1>::from_floats([-1.0, 0.0, 1.0], &Device::flex());
/// let y = Backend::Cpu.run(GeluExact(x)).into_data().to_vec::<f32>().unwrap();
/// assert!((y[0] + 0.158_655).abs() < 1e-5 && y[1] == 0.0 && (y[2] - 0.841_345).abs() < 1e-5);
/// ```
///
/// # Shapes
/// - `[...]` → `[...]`
#[derive(Clone, Debug)]
pub struct GeluExact<const D: usize>(pub Tensor<D>);

impl<const D: usize> Composed for GeluExact<D> {
    type Output = Tensor<D>;

    /// burn's `gelu`, which is the erf form.
    fn composed(self) -> Tensor<D> {
        gelu(self.0)
    }
}

/// The SiLU-gated product of a Llama-style MLP, `silu(gate) · up` with
/// `silu(x) = x · σ(x)`, which the down projection then takes.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use clozelab::model::ops::activation::SiluGate;
/// use clozelab::model::ops::backend::Backend;
/// let device = Device::flex();
/// let op = SiluGate {
///     gate: Tensor::<1>::from_floats([0.0, 2.0], &device),
///     up: Tensor::<1>::from_floats([5.0, 3.0], &device),
/// };
/// let y = Backend::Cpu.run(op).into_data().to_vec::<f32>().unwrap();
/// assert!(y[0] == 0.0 && (y[1] - 3.0 * 2.0 / (1.0 + (-2.0f32).exp())).abs() < 1e-6);
/// ```
///
/// # Shapes
/// - gate and up `[...]` → `[...]`
#[derive(Clone, Debug)]
pub struct SiluGate<const D: usize> {
    pub gate: Tensor<D>,
    pub up: Tensor<D>,
}

impl<const D: usize> Composed for SiluGate<D> {
    type Output = Tensor<D>;

    fn composed(self) -> Tensor<D> {
        silu(self.gate) * self.up
    }
}
