//! What follows a projection's product, in one kernel: the bias and then GPT-2's GELU (after
//! the MLP's first projection), or the bias and the residual stream (after attention's and the
//! MLP's output projections). burn without fusion launches one kernel per operation there: the
//! tanh GELU alone is eight.

use burn::backend::cubecl::dtype_to_storage_type;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use cubecl::CubeDim;
use cubecl::prelude::*;

/// What is applied after the bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// `gelu_new(x + bias)`
    Gelu,
    /// `x + bias + residual`
    Residual,
}

/// √(2/π), GPT-2's `gelu_new` constant.
const SQRT_2_OVER_PI: f32 = 0.797_884_6;

/// Where `tanh`'s argument is clamped. WGSL lets `tanh` inherit `exp`'s range, and Chromium's
/// SwiftShader (like other engines, gpuweb#4458) returns NaN past `exp`'s overflow, about 44 for
/// `tanh`: a GELU input above 10 became NaN there, and every logit after it. `tanh(±10)` is ±1
/// to the last bit in f32 and f16, so nothing else changes.
pub const TANH_ARGUMENT_LIMIT: f32 = 10.0;

#[cube(launch)]
fn epilogue_kernel<F: Float>(
    product: &Tensor<F>,
    bias: &Tensor<F>,
    residual: &Tensor<F>,
    output: &mut Tensor<F>,
    count: usize,
    width: usize,
    #[comptime] gelu: bool,
    #[define(F)] _dtype: ElemType,
) {
    let i = ABSOLUTE_POS;
    if i >= count {
        terminate!();
    }
    let x = product[i] + bias[i % width];
    if gelu {
        let u = F::new(SQRT_2_OVER_PI) * (x + F::new(0.044_715) * x * x * x);
        let u = F::clamp(u, F::new(-TANH_ARGUMENT_LIMIT), F::new(TANH_ARGUMENT_LIMIT));
        output[i] = F::new(0.5) * x * (F::new(1.0) + F::tanh(u));
    } else {
        output[i] = x + residual[i];
    }
}

/// Launches [`epilogue_kernel`], one thread per element; `residual` is read only for
/// [`Epilogue::Residual`].
pub(super) fn launch_epilogue(
    product: CubeTensor,
    bias: CubeTensor,
    residual: CubeTensor,
    epilogue: Epilogue,
) -> CubeTensor {
    let product = into_contiguous(product);
    let bias = into_contiguous(bias);
    let residual = match epilogue {
        Epilogue::Residual => into_contiguous(residual),
        Epilogue::Gelu => residual,
    };
    let shape = product.meta.shape().clone();
    let width = shape[shape.num_dims() - 1];
    let count = shape.num_elements();
    let dtype = product.dtype;
    let client = product.client.clone();
    let output = empty_device_dtype(client.clone(), product.device.clone(), shape, dtype);
    let cube_dim = CubeDim::new(&client, count);
    let cube_count = cubecl::calculate_cube_count_elemwise(&client, count, cube_dim);
    epilogue_kernel::launch(
        &client,
        cube_count,
        cube_dim,
        product.into_tensor_arg(),
        bias.into_tensor_arg(),
        residual.into_tensor_arg(),
        output.clone().into_tensor_arg(),
        count,
        width.max(1),
        epilogue == Epilogue::Gelu,
        dtype_to_storage_type(dtype),
    );
    output
}
