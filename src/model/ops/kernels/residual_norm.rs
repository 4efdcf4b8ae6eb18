//! An output projection's epilogue and the layer norm after it, in one kernel: the residual
//! stream `s = product + bias + residual`, and its norm `(s − mean) / sqrt(var + ε) · weight +
//! norm_bias`, each written to its own tensor (the stream goes on to the next residual, the
//! norm to the next projection). Apart they are two dispatches after every output projection of
//! a pre-norm block, and a decode step's host cost is paid per dispatch.

use burn::backend::cubecl::dtype_to_storage_type;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use cubecl::CubeDim;
use cubecl::prelude::*;

use super::layer_norm::{units_for, write_normalised_row};
use super::workgroup::workgroup_sum;

/// The operands of [`launch_residual_norm`].
pub(super) struct ResidualNormOperands {
    pub product: CubeTensor,
    pub bias: CubeTensor,
    pub residual: CubeTensor,
    pub weight: CubeTensor,
    pub norm_bias: CubeTensor,
}

#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn residual_norm_kernel<F: Float>(
    product: &Tensor<F>,
    bias: &Tensor<F>,
    residual: &Tensor<F>,
    weight: &Tensor<F>,
    norm_bias: &Tensor<F>,
    sum: &mut Tensor<F>,
    norm: &mut Tensor<F>,
    rows: usize,
    width: usize,
    epsilon: f32,
    #[comptime] units: usize,
    #[define(F)] _dtype: ElemType,
) {
    // As the layer norm's kernel: no early return before a barrier.
    let row = CUBE_POS;
    let mut length = 0;
    if row < rows {
        length = width;
    }
    let unit = UNIT_POS as usize;
    let start = row * width;
    let mut partial = Shared::new_slice(units);

    // Each thread reads back only what it wrote itself (see `write_normalised_row`), so the
    // passes need no barrier between the writes and the reads.
    let mut total = F::new(0.0);
    let mut i = unit;
    while i < length {
        let value = product[start + i] + bias[i] + residual[start + i];
        sum[start + i] = value;
        total += value;
        i += units;
    }
    let mean = workgroup_sum::<F>(&mut partial, total, unit, units) / F::cast_from(width);

    write_normalised_row::<F>(
        &*sum,
        weight,
        norm_bias,
        norm,
        &mut partial,
        mean,
        start,
        length,
        width,
        epsilon,
        unit,
        units,
    );
}

/// Launches [`residual_norm_kernel`] over every row of `product` (`[..., width]`): the stream
/// and its norm, each of `product`'s shape.
pub(super) fn launch_residual_norm(
    operands: ResidualNormOperands,
    epsilon: f32,
) -> (CubeTensor, CubeTensor) {
    let product = into_contiguous(operands.product);
    let residual = into_contiguous(operands.residual);
    let [bias, weight, norm_bias] =
        [operands.bias, operands.weight, operands.norm_bias].map(into_contiguous);
    let shape = product.meta.shape().clone();
    let width = shape[shape.num_dims() - 1];
    let rows = shape.num_elements() / width.max(1);
    let units = units_for(width);
    let dtype = product.dtype;
    let client = product.client.clone();
    let [sum, norm] = [(); 2]
        .map(|()| empty_device_dtype(client.clone(), product.device.clone(), shape.clone(), dtype));
    let cube_count = cubecl::calculate_cube_count_elemwise(&client, rows, CubeDim::new_single());
    residual_norm_kernel::launch(
        &client,
        cube_count,
        CubeDim::new_1d(units as u32),
        product.into_tensor_arg(),
        bias.into_tensor_arg(),
        residual.into_tensor_arg(),
        weight.into_tensor_arg(),
        norm_bias.into_tensor_arg(),
        sum.clone().into_tensor_arg(),
        norm.clone().into_tensor_arg(),
        rows,
        width,
        epsilon,
        units,
        dtype_to_storage_type(dtype),
    );
    (sum, norm)
}
