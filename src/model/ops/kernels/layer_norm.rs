//! The layer norm in one kernel: one workgroup per row sums the row, then its squared
//! deviations from the mean (two passes over values the workgroup has just read, so no
//! cancellation as in `E[x²] − E[x]²`), then writes the normalised row.

use burn::backend::cubecl::dtype_to_storage_type;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use cubecl::CubeDim;
use cubecl::prelude::*;

use super::workgroup::workgroup_sum;

/// Threads per row: about four values each (GPT-2's widths, 768–1600, take 256), a power of two
/// from 32 to 256. Idle threads are not free: each waits at every step of the sums.
pub(super) fn units_for(width: usize) -> usize {
    (width / 4).next_power_of_two().clamp(32, 256)
}

#[cube(launch)]
fn layer_norm_kernel<F: Float>(
    input: &Tensor<F>,
    weight: &Tensor<F>,
    bias: &Tensor<F>,
    output: &mut Tensor<F>,
    rows: usize,
    width: usize,
    epsilon: f32,
    #[comptime] units: usize,
    #[define(F)] _dtype: ElemType,
) {
    // No early return: WGSL allows a barrier only where the whole workgroup provably gets, and
    // `rows` read from a buffer does not count as such. A workgroup past the end reads nothing.
    let row = CUBE_POS;
    let mut length = 0;
    if row < rows {
        length = width;
    }
    let unit = UNIT_POS as usize;
    let start = row * width;
    let mut partial = Shared::new_slice(units);

    let mut sum = F::new(0.0);
    let mut i = unit;
    while i < length {
        sum += input[start + i];
        i += units;
    }
    let mean = workgroup_sum::<F>(&mut partial, sum, unit, units) / F::cast_from(width);

    write_normalised_row::<F>(
        input,
        weight,
        bias,
        output,
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

/// The last two passes of a workgroup's layer norm over one row whose mean is known: the
/// variance of `values[start..start + length]`, then the row normalised into `output` at the
/// same place. Each thread takes the same elements as in the passes before, so it reads only
/// what it wrote itself where `values` was written by them.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn write_normalised_row<F: Float>(
    values: &Tensor<F>,
    weight: &Tensor<F>,
    bias: &Tensor<F>,
    output: &mut Tensor<F>,
    partial: &mut Shared<[F]>,
    mean: F,
    start: usize,
    length: usize,
    width: usize,
    epsilon: f32,
    unit: usize,
    #[comptime] units: usize,
) {
    let mut squares = F::new(0.0);
    let mut i = unit;
    while i < length {
        let deviation = values[start + i] - mean;
        squares += deviation * deviation;
        i += units;
    }
    let variance = workgroup_sum::<F>(partial, squares, unit, units) / F::cast_from(width);
    let inverse = F::new(1.0) / F::sqrt(variance + F::cast_from(epsilon));

    let mut i = unit;
    while i < length {
        output[start + i] = (values[start + i] - mean) * inverse * weight[i] + bias[i];
        i += units;
    }
}

/// Launches [`layer_norm_kernel`] over every row of `input`.
pub(super) fn launch_layer_norm(
    input: CubeTensor,
    weight: CubeTensor,
    bias: CubeTensor,
    epsilon: f32,
) -> CubeTensor {
    let input = into_contiguous(input);
    let weight = into_contiguous(weight);
    let bias = into_contiguous(bias);
    let shape = input.meta.shape().clone();
    let width = shape[shape.num_dims() - 1];
    let rows = shape.num_elements() / width.max(1);
    let units = units_for(width);
    let dtype = input.dtype;
    let output = empty_device_dtype(input.client.clone(), input.device.clone(), shape, dtype);
    let client = input.client.clone();
    let cube_count = cubecl::calculate_cube_count_elemwise(&client, rows, CubeDim::new_single());
    layer_norm_kernel::launch(
        &client,
        cube_count,
        CubeDim::new_1d(units as u32),
        input.into_tensor_arg(),
        weight.into_tensor_arg(),
        bias.into_tensor_arg(),
        output.clone().into_tensor_arg(),
        rows,
        width,
        epsilon,
        units,
        dtype_to_storage_type(dtype),
    );
    output
}
