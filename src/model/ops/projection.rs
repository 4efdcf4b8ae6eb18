//! A projection with what follows it in a block: GPT-2's `Conv1D` (`input · weight + bias`),
//! then nothing, GPT-2's GELU, or the residual stream added.
//!
//! Its bodies: on a GPU burn's product (cubek's matmul; with f16 weights
//! [`kernels::half_product`]) and then the bias with what follows in one kernel
//! ([`kernels::bias_gelu`], [`kernels::bias_residual`]), where burn without fusion would launch
//! one per operation (the tanh GELU alone is eight); natively on the CPU burn's `linear` with
//! products of few rows split over the threads ([`threaded_product`]); in the browser's CPU
//! backend against the weight packed once into panels ([`panel_product`]). The reference body is
//! burn's `linear` and the formulas. Which layout a layer's weight has is chosen with the
//! backend, at load ([`StoreProjection`]).
//!
//! [`threaded_product`]: super::threaded_product
//! [`panel_product`]: super::panel_product

use burn::module::{Module, Param};
use burn::tensor::{DType, Device, FloatDType, Tensor, TensorData};

use super::backend::{Backend, Op};
use super::gelu::{GeluNew, gelu_new_in_place};
use super::panel_product::{PanelError, PanelWeight};
use super::{kernels, threaded_product};
use crate::model::error::ModelError;
use crate::model::readback::read_f32_now;

/// What comes right after a projection's bias.
#[derive(Clone, Debug)]
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
/// Where the weight is packed (the browser's CPU backend, [`Backend::BrowserCpu`]) it lives in
/// `panels`, and `weight` is an empty `[0, 0]`, so the model is not held twice; the panels
/// hold a copy of `bias` too, which their products add (repacking, [`Conv1D::to_packed`], copies
/// it again).
#[derive(Module, Debug)]
pub struct Conv1D {
    pub weight: Param<Tensor<2>>,
    pub bias: Param<Tensor<1>>,
    #[module(skip)]
    pub panels: Option<PanelWeight>,
}

impl Conv1D {
    /// A layer over `weight` `[in, out]` on `device`, stored as `backend`'s body reads it (see
    /// [`StoreProjection`]).
    pub fn new(
        backend: Backend,
        weight: Vec<f32>,
        shape: [usize; 2],
        bias: Param<Tensor<1>>,
        device: &Device,
    ) -> Result<Self, PanelError> {
        backend.run(StoreProjection {
            weight,
            shape,
            bias,
            device: device.clone(),
        })
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
    /// reach the browser's body natively so), its bias copied beside them, where the products
    /// add it.
    pub fn packed(
        weight: &[f32],
        shape: [usize; 2],
        bias: Param<Tensor<1>>,
        device: &Device,
    ) -> Result<Self, PanelError> {
        let bias_values =
            read_f32_now(to_f32(bias.val())).map_err(|e| PanelError::Bias(e.to_string()))?;
        let panels = PanelWeight::pack(weight, shape[0], shape[1])?.with_bias(bias_values)?;
        Ok(Self {
            weight: Param::from_tensor(Tensor::zeros([0, 0], device)),
            bias,
            panels: Some(panels),
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

    /// `then(input · weight + bias)` on `backend` (see [`Project`]).
    ///
    /// # Shapes
    /// - input `[..., in]`, a residual `[..., out]` → output `[..., out]`
    pub fn forward<const D: usize>(
        &self,
        backend: Backend,
        input: Tensor<D>,
        then: Then<D>,
    ) -> Result<Tensor<D>, ModelError> {
        backend.run(Project {
            layer: self,
            input,
            then,
        })
    }

    /// The weight tensor, or why `body` cannot use it (it is packed into panels).
    pub(super) fn dense_weight(&self, body: &'static str) -> Result<Tensor<2>, ModelError> {
        match self.panels {
            None => Ok(self.weight.val()),
            Some(_) => Err(ModelError::WeightLayout {
                body,
                needed: "unpacked",
            }),
        }
    }

    /// `input · weight` without the bias, in f32, for an unpacked weight: the attention's kernel
    /// adds the query/key/value bias itself.
    ///
    /// # Shapes
    /// - input `[..., in]` → output `[..., out]`
    pub(super) fn product<const D: usize>(
        &self,
        input: Tensor<D>,
    ) -> Result<Tensor<D>, ModelError> {
        let weight = self.dense_weight("GPU")?;
        if weight.dtype() != DType::F32 {
            return Ok(kernels::half_product(input, weight));
        }
        Ok(burn::tensor::module::linear(input, weight, None))
    }
}

/// A layer's weight stored as a backend's body reads it: packed into panels in the browser's
/// CPU backend, a tensor elsewhere.
pub struct StoreProjection {
    /// `[in, out]`, row-major
    pub weight: Vec<f32>,
    pub shape: [usize; 2],
    pub bias: Param<Tensor<1>>,
    pub device: Device,
}

impl StoreProjection {
    fn dense(self) -> Result<Conv1D, PanelError> {
        let weight = TensorData::new(self.weight, self.shape);
        Ok(Conv1D::dense(
            Param::from_tensor(Tensor::from_data(weight, &self.device)),
            self.bias,
        ))
    }
}

impl Op for StoreProjection {
    type Output = Result<Conv1D, PanelError>;

    fn gpu(self) -> Self::Output {
        self.dense()
    }

    fn cpu(self) -> Self::Output {
        self.dense()
    }

    fn browser_cpu(self) -> Self::Output {
        Conv1D::packed(&self.weight, self.shape, self.bias, &self.device)
    }

    fn reference(self) -> Self::Output {
        self.dense()
    }
}

/// `then(input · weight + bias)`. With f16 weights only the weights are f16: the product takes
/// the f32 input and gives f32.
///
/// # Shapes
/// - input `[..., in]`, a residual `[..., out]` → output `[..., out]`
#[derive(Clone)]
pub struct Project<'a, const D: usize> {
    pub layer: &'a Conv1D,
    pub input: Tensor<D>,
    pub then: Then<D>,
}

impl<const D: usize> Op for Project<'_, D> {
    type Output = Result<Tensor<D>, ModelError>;

    fn gpu(self) -> Self::Output {
        let product = self.layer.product(self.input)?;
        let bias = self.layer.bias.val();
        Ok(match self.then {
            Then::Nothing => product + bias.unsqueeze::<D>(),
            Then::Gelu => kernels::bias_gelu(product, bias),
            Then::Residual(residual) => kernels::bias_residual(product, bias, *residual),
        })
    }

    fn cpu(self) -> Self::Output {
        let weight = to_f32(self.layer.dense_weight("CPU")?);
        let output = threaded_product::linear(self.input, weight, self.layer.bias.val());
        Ok(then_on_cpu(output, self.then))
    }

    fn browser_cpu(self) -> Self::Output {
        let packed = self.layer.panels.as_ref().ok_or(ModelError::WeightLayout {
            body: "browser's CPU",
            needed: "packed",
        })?;
        // The product adds the bias (the packed weight holds it).
        Ok(match self.then {
            Then::Nothing => panel_linear(self.input, packed, false)?,
            Then::Gelu => panel_linear(self.input, packed, true)?,
            Then::Residual(residual) => *residual + panel_linear(self.input, packed, false)?,
        })
    }

    /// burn's `linear` (the weight in f32) and the formulas.
    fn reference(self) -> Self::Output {
        let weight = to_f32(self.layer.dense_weight("reference")?);
        let output = burn::tensor::module::linear(self.input, weight, Some(self.layer.bias.val()));
        Ok(match self.then {
            Then::Nothing => output,
            Then::Gelu => GeluNew(output).reference(),
            Then::Residual(residual) => *residual + output,
        })
    }
}

/// `then(output)` on the CPU backend.
fn then_on_cpu<const D: usize>(output: Tensor<D>, then: Then<D>) -> Tensor<D> {
    match then {
        Then::Nothing => output,
        Then::Gelu => GeluNew(output).cpu(),
        Then::Residual(residual) => *residual + output,
    }
}

/// `input · weight + bias` through the packed weight, then GPT-2's GELU where `gelu`: the input
/// is read on the host, which on the CPU backend is where it already is. The GELU is one pass
/// on the calling thread after the product: computed inside each thread's pieces instead, the
/// two-thread prefill of 64 tokens took 249 ms against 172 in Chromium on the 2-core machine
/// (`bench_browser.mjs --dists`, three rounds; why is not known).
fn panel_linear<const D: usize>(
    input: Tensor<D>,
    packed: &PanelWeight,
    gelu: bool,
) -> Result<Tensor<D>, ModelError> {
    let device = input.device();
    let mut dims = input.dims();
    let [n_in, n_out] = packed.dims();
    let rows = dims[..D - 1].iter().product::<usize>();
    let mut product = packed.product(&read_f32_now(input)?, rows)?;
    if gelu {
        gelu_new_in_place(&mut product);
    }
    debug_assert_eq!(dims[D - 1], n_in);
    dims[D - 1] = n_out;
    Ok(Tensor::<D>::from_data(
        TensorData::new(product, dims),
        &device,
    ))
}

/// A tensor in f32 (a no-op when it already is).
pub(crate) fn to_f32<const D: usize>(tensor: Tensor<D>) -> Tensor<D> {
    match tensor.dtype() {
        DType::F32 => tensor,
        _ => tensor.cast(FloatDType::F32),
    }
}
