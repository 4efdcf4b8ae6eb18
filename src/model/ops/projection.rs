//! A projection with what follows it in a block: GPT-2's `Conv1D` (`input · weight + bias`),
//! then nothing, GPT-2's GELU, or the residual stream added.
//!
//! Its bodies: on a GPU burn's product (cubek's matmul; with f16 weights
//! [`kernels::half_product`]) and then the bias with what follows in one kernel
//! ([`kernels::bias_gelu`], [`kernels::bias_residual`]), where burn without fusion would launch
//! one per operation (the tanh GELU alone is eight); natively on the CPU burn's `linear` with
//! products of few rows split over the threads ([`threaded_product`]); in the browser's CPU
//! backend against the weight packed once into panels ([`panel_product`]). The reference is
//! [`reference`]: burn's `linear` and the formulas.
//!
//! [`threaded_product`]: super::threaded_product
//! [`panel_product`]: super::panel_product

use burn::module::{Module, Param};
use burn::tensor::{DType, Device, FloatDType, Tensor, TensorData};

use super::panel_product::{PanelError, PanelWeight};
use super::{Body, gelu, kernels, threaded_product};
use crate::model::error::ModelError;
use crate::model::readback::read_f32_now;

/// What comes right after a projection's bias.
pub enum Then<const D: usize> {
    /// Nothing (attention's query/key/value projection).
    Nothing,
    /// GPT-2's GELU (the MLP's first projection).
    Gelu,
    /// The residual stream, added (attention's and the MLP's output projections); boxed, as a
    /// tensor handle is large beside the other variants.
    Residual(Box<Tensor<D>>),
}

/// GPT-2's `Conv1D`: a linear layer whose weight is stored `[in, out]`, which is also burn's
/// layout, so checkpoint weights load without a transpose (a PyTorch `nn.Linear` would need one).
///
/// Where the weight is packed (the browser's CPU backend, [`Body::BrowserCpu`]) it lives in
/// `panels`, and `weight` is an empty `[0, 0]`, so the model is not held twice.
#[derive(Module, Debug)]
pub struct Conv1D {
    pub weight: Param<Tensor<2>>,
    pub bias: Param<Tensor<1>>,
    #[module(skip)]
    pub panels: Option<PanelWeight>,
}

impl Conv1D {
    /// A layer over `weight` `[in, out]` on `device`, stored as that device's body reads it:
    /// packed into panels in the browser's CPU backend, a tensor elsewhere.
    pub fn new(
        weight: Vec<f32>,
        shape: [usize; 2],
        bias: Param<Tensor<1>>,
        device: &Device,
    ) -> Result<Self, PanelError> {
        match Body::of(device) {
            Body::BrowserCpu => Self::packed(&weight, shape, bias, device),
            Body::Gpu | Body::Cpu => Ok(Self::dense(
                Param::from_tensor(Tensor::from_data(TensorData::new(weight, shape), device)),
                bias,
            )),
        }
    }

    /// A layer over a weight tensor `[in, out]`.
    pub fn dense(weight: Param<Tensor<2>>, bias: Param<Tensor<1>>) -> Self {
        Self {
            weight,
            bias,
            panels: None,
        }
    }

    /// A layer whose weight `[in, out]` is packed into panels, whatever the device (the tests
    /// reach the browser's body natively so).
    pub fn packed(
        weight: &[f32],
        shape: [usize; 2],
        bias: Param<Tensor<1>>,
        device: &Device,
    ) -> Result<Self, PanelError> {
        Ok(Self {
            weight: Param::from_tensor(Tensor::zeros([0, 0], device)),
            bias,
            panels: Some(PanelWeight::pack(weight, shape[0], shape[1])?),
        })
    }

    /// This layer with its weight packed into panels (the same when it already is).
    pub fn to_packed(&self) -> Result<Self, ModelError> {
        if let Some(panels) = &self.panels {
            return Ok(Self {
                weight: self.weight.clone(),
                bias: self.bias.clone(),
                panels: Some(panels.clone()),
            });
        }
        let device = self.weight.val().device();
        let values = read_f32_now(to_f32(self.weight.val()))?;
        Ok(Self::packed(
            &values,
            self.dims(),
            self.bias.clone(),
            &device,
        )?)
    }

    /// This layer with its (unpacked) weight in `dtype`.
    pub fn with_weight_dtype(&self, dtype: FloatDType) -> Self {
        Self {
            weight: Param::from_tensor(to_f32(self.weight.val()).cast(dtype)),
            bias: self.bias.clone(),
            panels: self.panels.clone(),
        }
    }

    /// The weight's number format (f32 when packed).
    pub fn weight_dtype(&self) -> DType {
        match self.panels {
            Some(_) => DType::F32,
            None => self.weight.val().dtype(),
        }
    }

    /// `[in, out]`.
    pub fn dims(&self) -> [usize; 2] {
        match &self.panels {
            Some(packed) => packed.dims(),
            None => self.weight.val().dims(),
        }
    }

    /// `then(input · weight + bias)`. With f16 weights only the weights are f16: the product
    /// takes the f32 input and gives f32.
    ///
    /// # Shapes
    /// - input `[..., in]`, a residual `[..., out]` → output `[..., out]`
    pub fn forward<const D: usize>(
        &self,
        input: Tensor<D>,
        then: Then<D>,
    ) -> Result<Tensor<D>, ModelError> {
        if let Some(packed) = &self.panels {
            let output = panel_linear(input, packed, self.bias.val())?;
            return Ok(apply(output, then));
        }
        let bias = self.bias.val();
        Ok(match Body::of(&input.device()) {
            Body::Gpu => {
                let product = self.product(input);
                match then {
                    Then::Nothing => product + bias.unsqueeze::<D>(),
                    Then::Gelu => kernels::bias_gelu(product, bias),
                    Then::Residual(residual) => kernels::bias_residual(product, bias, *residual),
                }
            }
            Body::Cpu | Body::BrowserCpu => {
                let weight = to_f32(self.weight.val());
                apply(threaded_product::linear(input, weight, bias), then)
            }
        })
    }

    /// `input · weight` without the bias, in f32, for an unpacked weight: the attention's kernel
    /// adds the query/key/value bias itself.
    ///
    /// # Shapes
    /// - input `[..., in]` → output `[..., out]`
    pub(super) fn product<const D: usize>(&self, input: Tensor<D>) -> Tensor<D> {
        let weight = self.weight.val();
        if weight.dtype() != DType::F32 {
            return kernels::half_product(input, weight);
        }
        burn::tensor::module::linear(input, weight, None)
    }
}

/// `then(input · weight + bias)` by burn's `linear` (the weight in f32) and the formulas, on any
/// backend: what every body of [`Conv1D::forward`] is tested against.
///
/// # Shapes
/// - input `[..., in]`, weight `[in, out]`, bias `[out]`, a residual `[..., out]` → `[..., out]`
pub fn reference<const D: usize>(
    input: Tensor<D>,
    weight: Tensor<2>,
    bias: Tensor<1>,
    then: Then<D>,
) -> Tensor<D> {
    let output = burn::tensor::module::linear(input, to_f32(weight), Some(bias));
    match then {
        Then::Nothing => output,
        Then::Gelu => gelu::reference(output),
        Then::Residual(residual) => *residual + output,
    }
}

/// `then(output)` composed of burn's operations.
fn apply<const D: usize>(output: Tensor<D>, then: Then<D>) -> Tensor<D> {
    match then {
        Then::Nothing => output,
        Then::Gelu => gelu::gelu_new(output),
        Then::Residual(residual) => *residual + output,
    }
}

/// `input · weight + bias` through the packed weight: the input is read on the host, which on
/// the CPU backend is where it already is.
fn panel_linear<const D: usize>(
    input: Tensor<D>,
    packed: &PanelWeight,
    bias: Tensor<1>,
) -> Result<Tensor<D>, ModelError> {
    let device = input.device();
    let mut dims = input.dims();
    let [n_in, n_out] = packed.dims();
    let rows = dims[..D - 1].iter().product::<usize>();
    let product = packed.product(&read_f32_now(input)?, rows)?;
    debug_assert_eq!(dims[D - 1], n_in);
    dims[D - 1] = n_out;
    Ok(Tensor::<D>::from_data(TensorData::new(product, dims), &device) + bias.unsqueeze::<D>())
}

/// Whether a device runs the projections with f16 weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfWeights {
    /// A GPU whose adapter offers `shader-f16`.
    Run,
    /// The CPU backend: its f16 products are no faster, so it stays in f32.
    CpuBackend,
    /// A GPU without `shader-f16`.
    NoShaderF16,
}

/// Whether `device` runs f16 weights (see [`HalfWeights`]).
pub fn half_weights(device: &Device) -> HalfWeights {
    match Body::of(device) {
        Body::Cpu | Body::BrowserCpu => HalfWeights::CpuBackend,
        Body::Gpu if !device.supports_dtype(DType::F16) => HalfWeights::NoShaderF16,
        Body::Gpu => HalfWeights::Run,
    }
}

/// A tensor in f32 (a no-op when it already is).
pub(crate) fn to_f32<const D: usize>(tensor: Tensor<D>) -> Tensor<D> {
    match tensor.dtype() {
        DType::F32 => tensor,
        _ => tensor.cast(FloatDType::F32),
    }
}
