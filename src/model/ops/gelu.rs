//! GPT-2's GELU, `gelu_new`, in the cheaper of two equal formulas per backend.

use burn::tensor::Tensor;

use super::backend::Op;

const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
const CUBIC: f64 = 0.044_715;

/// `gelu_new`, GPT-2's tanh approximation of GELU:
/// `0.5 · x · (1 + tanh(u))` with `u = √(2/π) · (x + 0.044715 · x³)`.
///
/// Computed as `x · (b + a · x²)` for `u` (no `powf`), and on the CPU backend through the identity
/// `0.5 · (1 + tanh(u)) = σ(2u)`: burn-flex's sigmoid is one pass with one `exp`, where its
/// `tanh` calls `tanhf`/`expm1f` per element. GPUs keep `tanh` (one kernel), because
/// burn-cubecl composes its sigmoid of six.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use clozelab::model::ops::backend::Backend;
/// use clozelab::model::ops::gelu::GeluNew;
/// let x = Tensor::<1>::from_floats([-3.0, 0.0, 1.0], &Device::flex());
/// let y = Backend::Cpu.run(GeluNew(x)).into_data().try_to_vec::<f32>().unwrap();
/// assert!((y[0] + 0.003_637).abs() < 1e-5 && y[1] == 0.0 && (y[2] - 0.841_192).abs() < 1e-5);
/// ```
///
/// # Shapes
/// - `[...]` → `[...]`
#[derive(Clone, Debug)]
pub struct GeluNew<const D: usize>(pub Tensor<D>);

impl<const D: usize> Op for GeluNew<D> {
    type Output = Tensor<D>;

    fn gpu(self) -> Tensor<D> {
        self.reference()
    }

    fn cpu(self) -> Tensor<D> {
        let x = self.0;
        // The sigmoid form needs 2u.
        let scale = 2.0 * SQRT_2_OVER_PI;
        let u = (x.clone() * x.clone() * (scale * CUBIC) + scale) * x.clone();
        burn::tensor::activation::sigmoid(u) * x
    }

    fn browser_cpu(self) -> Tensor<D> {
        self.cpu()
    }

    /// The `tanh` form.
    fn reference(self) -> Tensor<D> {
        let x = self.0;
        let u = (x.clone() * x.clone() * (SQRT_2_OVER_PI * CUBIC) + SQRT_2_OVER_PI) * x.clone();
        (u.tanh() + 1.0) * x * 0.5
    }
}
