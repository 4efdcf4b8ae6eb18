//! An output projection with the residual stream added, and the layer norm of the sum: the end
//! of one half of a pre-norm block and the norm that starts the next half (or the next block, or
//! the final norm). On a GPU the projection's epilogue and the norm are one kernel
//! ([`kernels::bias_residual_layer_norm`]), one dispatch fewer each time; every other body runs
//! [`Project`] and [`LayerNormOp`] one after the other, as the reference does.

use burn::tensor::Tensor;

use super::backend::{Backend, Op};
use super::kernels;
use super::layer_norm::LayerNormOp;
use super::projection::{Conv1D, Project, Then};
use crate::model::error::ModelError;

/// `s = residual + input · weight + bias` and its layer norm `(s − mean) / sqrt(var + ε) ·
/// norm_weight + norm_bias`, returned as `(s, norm)`.
///
/// ```
/// use burn::module::Param;
/// use burn::tensor::{Device, Tensor};
/// use clozelab::model::ops::backend::Backend;
/// use clozelab::model::ops::projection::Conv1D;
/// use clozelab::model::ops::residual_norm::ProjectResidualNorm;
/// let device = Device::flex();
/// // The identity, without a bias: s = residual + input.
/// let layer = Conv1D::dense(
///     Param::from_tensor(Tensor::<2>::from_floats([[1.0, 0.0], [0.0, 1.0]], &device)),
///     Param::from_tensor(Tensor::<1>::from_floats([0.0, 0.0], &device)),
/// );
/// let op = ProjectResidualNorm {
///     layer: &layer,
///     input: Tensor::<3>::from_floats([[[1.0, 2.0]]], &device),
///     residual: Tensor::<3>::from_floats([[[0.0, 1.0]]], &device),
///     norm_weight: Tensor::<1>::from_floats([1.0, 1.0], &device),
///     norm_bias: Tensor::<1>::from_floats([0.0, 0.0], &device),
///     epsilon: 0.0,
/// };
/// let (sum, norm) = Backend::of(&device).run(op).unwrap();
/// assert_eq!(sum.into_data().to_vec::<f32>().unwrap(), vec![1.0, 3.0]);
/// assert_eq!(norm.into_data().to_vec::<f32>().unwrap(), vec![-1.0, 1.0]);
/// ```
///
/// # Shapes
/// - input `[batch, seq, in]`, residual `[batch, seq, out]`, norm weight and bias `[out]` → two
///   `[batch, seq, out]`
#[derive(Clone)]
pub struct ProjectResidualNorm<'a> {
    pub layer: &'a Conv1D,
    pub input: Tensor<3>,
    pub residual: Tensor<3>,
    pub norm_weight: Tensor<1>,
    pub norm_bias: Tensor<1>,
    pub epsilon: f64,
}

impl ProjectResidualNorm<'_> {
    /// The projection, then the norm, each by `backend`'s body.
    fn apart(self, backend: Backend) -> Result<(Tensor<3>, Tensor<3>), ModelError> {
        let sum =
            self.layer
                .forward(backend, self.input, Then::Residual(Box::new(self.residual)))?;
        let norm = backend.run(LayerNormOp {
            input: sum.clone(),
            weight: self.norm_weight,
            bias: self.norm_bias,
            epsilon: self.epsilon,
        });
        Ok((sum, norm))
    }
}

impl Op for ProjectResidualNorm<'_> {
    type Output = Result<(Tensor<3>, Tensor<3>), ModelError>;

    fn gpu(self) -> Self::Output {
        let product = self.layer.product(self.input)?;
        Ok(kernels::bias_residual_layer_norm(
            product,
            self.layer.bias.val(),
            self.residual,
            self.norm_weight,
            self.norm_bias,
            self.epsilon,
        ))
    }

    fn cpu(self) -> Self::Output {
        self.apart(Backend::Cpu)
    }

    fn browser_cpu(self) -> Self::Output {
        self.apart(Backend::BrowserCpu)
    }

    fn reference(self) -> Self::Output {
        let sum = Project {
            layer: self.layer,
            input: self.input,
            then: Then::Residual(Box::new(self.residual)),
        }
        .reference()?;
        let norm = LayerNormOp {
            input: sum.clone(),
            weight: self.norm_weight,
            bias: self.norm_bias,
            epsilon: self.epsilon,
        }
        .reference();
        Ok((sum, norm))
    }
}
