//! GPT-2's GELU, `gelu_new`, in the cheaper of two equal formulas per backend.

use burn::tensor::Tensor;
use wide::f32x4;

use super::backend::Op;
use super::kernels::TANH_ARGUMENT_LIMIT;

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

    /// The `tanh` form, its argument clamped to ±[`TANH_ARGUMENT_LIMIT`] (which changes no
    /// value) because on a GPU this body's `tanh` is WGSL's, NaN past `exp`'s range in some engines.
    fn reference(self) -> Tensor<D> {
        let x = self.0;
        let u = (x.clone() * x.clone() * (SQRT_2_OVER_PI * CUBIC) + SQRT_2_OVER_PI) * x.clone();
        let u = u.clamp(-TANH_ARGUMENT_LIMIT, TANH_ARGUMENT_LIMIT);
        (u.tanh() + 1.0) * x * 0.5
    }
}

/// [`GeluNew`] over values on the host, in place, four lanes at a time (`wide`'s `f32x4`, already
/// in the tree through cubecl): the browser's CPU backend applies it to a packed product's
/// output (`projection`). burn-flex's sigmoid form is six passes over the tensor, each
/// element's `exp` through libm's scalar `expf`; this is one pass.
///
/// ```
/// use clozelab::model::ops::gelu::gelu_new_in_place;
/// let mut values = vec![-3.0, 0.0, 1.0, 2.0, f32::NAN];
/// gelu_new_in_place(&mut values);
/// assert!((values[0] + 0.003_637).abs() < 1e-6 && values[1] == 0.0);
/// assert!((values[2] - 0.841_192).abs() < 1e-6 && (values[3] - 1.954_598).abs() < 1e-6);
/// assert!(values[4].is_nan());
/// ```
pub fn gelu_new_in_place(values: &mut [f32]) {
    let mut quads = values.chunks_exact_mut(4);
    for quad in &mut quads {
        let out = gelu_new_lanes(f32x4::new([quad[0], quad[1], quad[2], quad[3]]));
        quad.copy_from_slice(&out.to_array());
    }
    let rest = quads.into_remainder();
    if !rest.is_empty() {
        let mut padded = [0.0; 4];
        padded[..rest.len()].copy_from_slice(rest);
        let out = gelu_new_lanes(f32x4::new(padded)).to_array();
        rest.copy_from_slice(&out[..rest.len()]);
    }
}

/// `gelu_new` as `x / (1 + exp(−2u))`: one `exp` and one division per lane.
fn gelu_new_lanes(x: f32x4) -> f32x4 {
    let scale = (2.0 * SQRT_2_OVER_PI) as f32;
    let cubic = (2.0 * SQRT_2_OVER_PI * CUBIC) as f32;
    let minus_two_u = -(x * (x * x * cubic + scale));
    x / (minus_two_u.exp() + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lanes_match_the_tanh_form_from_far_below_zero_to_far_above() {
        let mut values: Vec<f32> = (-4000..=4000).map(|i| i as f32 / 100.0).collect();
        values.extend([f32::MAX, f32::MIN, -1e-30, 1e-30, 0.5]);
        let expected: Vec<f64> = values
            .iter()
            .map(|&x| {
                let x = x as f64;
                0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + CUBIC * x * x * x)).tanh())
            })
            .collect();
        gelu_new_in_place(&mut values);
        for (got, want) in values.iter().zip(&expected) {
            let error = (*got as f64 - want).abs();
            assert!(
                error <= 2e-6 * want.abs().max(1.0),
                "gelu: {got} against {want}"
            );
        }
    }
}
