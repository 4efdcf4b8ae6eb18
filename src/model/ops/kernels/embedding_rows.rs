//! The token embedding's rows from one chunk of `wte`, added to a base (the position
//! embeddings, or the rows gathered from the chunks before), in one kernel. burn composes the
//! same from a chunk with nine kernels (the ids moved into the chunk and clamped, a mask of the
//! ids inside it, the lookup, the mask applied, the sum), so GPT-2 small's three chunks took
//! about thirty per forward pass.

use burn::backend::cubecl::dtype_to_storage_type;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use cubecl::CubeDim;
use cubecl::prelude::*;

/// `output[r] = base[r mod base_rows] + (chunk[ids[r] − start] if start ≤ ids[r] < start +
/// chunk_rows, else 0)`, one thread per element.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn embedding_rows_kernel<F: Float, I: Numeric>(
    chunk: &Tensor<F>,
    ids: &Tensor<I>,
    base: &Tensor<F>,
    output: &mut Tensor<F>,
    count: usize,
    width: usize,
    base_rows: usize,
    start: usize,
    chunk_rows: usize,
    #[define(F, I)] _dtypes: [ElemType; 2],
) {
    let i = ABSOLUTE_POS;
    if i >= count {
        terminate!();
    }
    let row = i / width;
    let column = i % width;
    let mut value = base[(row % base_rows) * width + column];
    // A negative id wraps to a large one here and is outside every chunk.
    let id = usize::cast_from(ids[row]);
    if id >= start && id < start + chunk_rows {
        value += chunk[(id - start) * width + column];
    }
    output[i] = value;
}

/// Launches [`embedding_rows_kernel`]: `chunk` `[chunk_rows, width]` holds `wte`'s rows from
/// `start` on, `ids` `[rows]`, `base` `[base_rows, width]` with `rows` a multiple of
/// `base_rows`; returns `[rows, width]`.
pub(super) fn launch_embedding_rows(
    chunk: CubeTensor,
    ids: CubeTensor,
    base: CubeTensor,
    start: usize,
) -> CubeTensor {
    let chunk = into_contiguous(chunk);
    let ids = into_contiguous(ids);
    let base = into_contiguous(base);
    let chunk_shape = chunk.meta.shape().clone();
    let (chunk_rows, width) = (chunk_shape[0], chunk_shape[1]);
    let rows = ids.meta.shape().num_elements();
    let base_rows = base.meta.shape().num_elements() / width.max(1);
    let count = rows * width;
    let dtype = chunk.dtype;
    let client = chunk.client.clone();
    let output = empty_device_dtype(
        client.clone(),
        chunk.device.clone(),
        [rows, width].into(),
        dtype,
    );
    let cube_dim = CubeDim::new(&client, count);
    let cube_count = cubecl::calculate_cube_count_elemwise(&client, count, cube_dim);
    let ids_dtype = ids.dtype;
    embedding_rows_kernel::launch(
        &client,
        cube_count,
        cube_dim,
        chunk.into_tensor_arg(),
        ids.into_tensor_arg(),
        base.into_tensor_arg(),
        output.clone().into_tensor_arg(),
        count,
        width.max(1),
        base_rows.max(1),
        start,
        chunk_rows,
        [
            dtype_to_storage_type(dtype),
            dtype_to_storage_type(ids_dtype),
        ],
    );
    output
}
