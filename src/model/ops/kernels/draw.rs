//! Tokens drawn from rows of logits by inverse CDF in one kernel: one workgroup per row finds
//! the row's maximum, sums the weights `exp((logit − max) / T)` tile by tile, then walks the
//! tiles again and places each of the row's uniforms `u` at the first token whose running sum
//! exceeds `u` times the total. burn composes the same from about thirty kernels per level of
//! the sampler's tree (the softmax, a cumulative sum in levels, a two-pass search per group of
//! draws), each group read back on its own.
//!
//! The running sums are built so that a token of weight 0 adds exactly nothing: each thread sums
//! its segment of [`PER_UNIT`] consecutive tokens in order, one thread chains the segments'
//! starts in order, and a token's running sum is its segment's start plus the segment's sum up
//! to it, so the segment's last token's equals the next segment's start, and a token's equals
//! its predecessor's when its weight is 0. A token whose weight underflows (far below the
//! maximum at a low temperature) can then never be drawn; a parallel scan's rounding would
//! leave it a sliver of the total.

use burn::backend::cubecl::dtype_to_storage_type;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use cubecl::CubeDim;
use cubecl::prelude::*;

use super::workgroup::workgroup_max;

/// Threads per row.
const UNITS: usize = 256;
/// What a draw from a row whose weights are not numbers reads back as.
pub const NOT_A_NUMBER_DRAW: i64 = -1;
/// Consecutive tokens each thread sums: a tile is `UNITS · PER_UNIT` tokens, so GPT-2's
/// vocabulary takes 4 tiles per pass, each with one thread's chain of [`UNITS`] additions
/// (sequential by design, the rest of the workgroup waiting): 16 tokens a thread made it 13.
const PER_UNIT: usize = 64;

/// Sums this thread's segment of the tile at `tile` into `segments[unit]` (in token order, from
/// 0), then chains the segments' starts in one thread (`starts[g + 1] = starts[g] +
/// segments[g]`, from `running`); returns the tile's end, `starts[units]`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn chain_tile<F: Float>(
    logits: &Tensor<F>,
    segments: &mut Shared<[F]>,
    starts: &mut Shared<[F]>,
    row_start: usize,
    tile: usize,
    length: usize,
    row_max: F,
    inverse_temperature: F,
    running: F,
    unit: usize,
    #[comptime] units: usize,
    #[comptime] per_unit: usize,
) -> F {
    let first = tile + unit * per_unit;
    let mut sum = F::new(0.0);
    for j in 0..per_unit {
        let token = first + j;
        if token < length {
            sum += F::exp((logits[row_start + token] - row_max) * inverse_temperature);
        }
    }
    segments[unit] = sum;
    sync_cube();
    if unit == 0 {
        let mut at = running;
        for g in 0..units {
            starts[g] = at;
            at += segments[g];
        }
        starts[units] = at;
    }
    sync_cube();
    // The next tile's first barrier keeps `starts` until everyone has read it.
    starts[units]
}

/// `output[s]` for the slots `slot_starts[r]..slot_starts[r + 1]` of row `r`: the number of
/// tokens whose running sum is at or below `uniforms[s] · total` (the drawn token).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn draw_kernel<F: Float, I: Int>(
    logits: &Tensor<F>,
    slot_starts: &Tensor<I>,
    uniforms: &Tensor<F>,
    output: &mut Tensor<I>,
    rows: usize,
    vocab: usize,
    inverse_temperature: f32,
    #[comptime] units: usize,
    #[comptime] per_unit: usize,
    #[define(F, I)] _dtypes: [ElemType; 2],
) {
    // No early return: WGSL allows a barrier only where the whole workgroup provably gets; the
    // row's length reaches the workgroup through a uniform load, and a workgroup past the last
    // row walks no tile.
    let row = CUBE_POS;
    let unit = UNIT_POS as usize;
    let mut bound = Shared::<[u32]>::new_slice(1usize);
    if unit == 0 {
        bound[0] = if row < rows {
            u32::cast_from(vocab)
        } else {
            0u32
        };
    }
    let length = usize::cast_from(workgroup_uniform_load(&bound[0]));
    let row_start = row * vocab;
    let tile_len = units * per_unit;
    let inverse_temperature = F::cast_from(inverse_temperature);
    let mut segments = Shared::<[F]>::new_slice(units);
    let mut starts = Shared::<[F]>::new_slice(units + 1);

    let mut largest = F::new(-3.0e38);
    let mut i = unit;
    while i < length {
        largest = F::max(largest, logits[row_start + i]);
        i += units;
    }
    let row_max = workgroup_max::<F>(&mut segments, largest, unit, units);

    let mut total = F::new(0.0);
    let mut tile = 0;
    while tile < length {
        total = chain_tile::<F>(
            logits,
            &mut segments,
            &mut starts,
            row_start,
            tile,
            length,
            row_max,
            inverse_temperature,
            total,
            unit,
            units,
            per_unit,
        );
        tile += tile_len;
    }

    let mut first_slot = 0;
    let mut end_slot = 0;
    if row < rows {
        first_slot = usize::cast_from(slot_starts[row]);
        end_slot = usize::cast_from(slot_starts[row + 1]);
    }
    // A threshold is kept below the total (u < 1 can still round u · total up to it), so that it
    // falls in exactly one tile, and on a token of positive weight.
    let below_total = total * F::new(0.999_999_9);
    // Every threshold below the total lands in a tile below. Weights that are not numbers (NaN
    // logits) make the total NaN and leave every threshold unplaced: their draws are
    // `NOT_A_NUMBER_DRAW`, which the host refuses, rather than a token.
    let total_is_a_number = total > F::new(0.0) && total < F::new(3.0e38);
    let mut s = first_slot + unit;
    while s < end_slot {
        output[s] = if total_is_a_number {
            I::cast_from(length - 1)
        } else {
            I::new(NOT_A_NUMBER_DRAW)
        };
        s += units;
    }

    let mut running = F::new(0.0);
    let mut tile = 0;
    while tile < length {
        let end = chain_tile::<F>(
            logits,
            &mut segments,
            &mut starts,
            row_start,
            tile,
            length,
            row_max,
            inverse_temperature,
            running,
            unit,
            units,
            per_unit,
        );
        let mut s = first_slot + unit;
        while s < end_slot {
            let threshold = F::min(uniforms[s] * total, below_total);
            if threshold >= running && threshold < end {
                // The last segment starting at or below the threshold holds the token.
                let mut low = 0;
                let mut high = comptime![units].runtime();
                while high - low > 1 {
                    let middle = (low + high) / 2;
                    if starts[middle] <= threshold {
                        low = middle;
                    } else {
                        high = middle;
                    }
                }
                // The segment's running sums exactly as `chain_tile` formed its total, so the
                // last one equals the next segment's start.
                let first = tile + low * per_unit;
                let mut partial = F::new(0.0);
                let mut found = false;
                let mut j = 0;
                while j < per_unit && !found {
                    let token = first + j;
                    if token < length {
                        partial +=
                            F::exp((logits[row_start + token] - row_max) * inverse_temperature);
                        if starts[low] + partial > threshold {
                            output[s] = I::cast_from(token);
                            found = true;
                        }
                    }
                    j += 1;
                }
            }
            s += units;
        }
        running = end;
        tile += tile_len;
    }
}

/// Launches [`draw_kernel`]: `logits` `[rows, vocab]`, `slot_starts` `[rows + 1]` (row r's
/// draws are slots `slot_starts[r]..slot_starts[r + 1]`), `uniforms` `[slots]` in [0, 1);
/// returns the drawn token of each slot, `[slots]`, in `slot_starts`' integer type.
pub(super) fn launch_draw(
    logits: CubeTensor,
    slot_starts: CubeTensor,
    uniforms: CubeTensor,
    inverse_temperature: f32,
) -> CubeTensor {
    let logits = into_contiguous(logits);
    let slot_starts = into_contiguous(slot_starts);
    let uniforms = into_contiguous(uniforms);
    let shape = logits.meta.shape().clone();
    let (rows, vocab) = (shape[0], shape[1]);
    let slots = uniforms.meta.shape().num_elements();
    let client = logits.client.clone();
    let int_dtype = slot_starts.dtype;
    let output = empty_device_dtype(
        client.clone(),
        logits.device.clone(),
        [slots].into(),
        int_dtype,
    );
    let float_dtype = logits.dtype;
    let cube_count = cubecl::calculate_cube_count_elemwise(&client, rows, CubeDim::new_single());
    draw_kernel::launch(
        &client,
        cube_count,
        CubeDim::new_1d(UNITS as u32),
        logits.into_tensor_arg(),
        slot_starts.into_tensor_arg(),
        uniforms.into_tensor_arg(),
        output.clone().into_tensor_arg(),
        rows,
        vocab,
        inverse_temperature,
        UNITS,
        PER_UNIT,
        [
            dtype_to_storage_type(float_dtype),
            dtype_to_storage_type(int_dtype),
        ],
    );
    output
}
