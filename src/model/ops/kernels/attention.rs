//! One attention step in one kernel: a workgroup per (row, head, query) computes the query's
//! scores against the keys a chunk at a time (one key per thread), keeps a running maximum and
//! sum (the online softmax of Milakov & Gimelshein 2018), and each thread accumulates one
//! dimension of the weighted values. No score matrix is written out, and the shared prefix is
//! read where it lies, never copied per row. Given the block's cache instead of the row's own
//! keys and values, it also writes the step's keys and values into it (what a copy kernel
//! otherwise does before it) and reads the cached ones from it, the step's own from the
//! projection. With grouped key/value heads (Llama's) each query head reads its group's head of
//! the cache and of the prefix, neither repeated.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::tensor::Shape;
use burn_cubecl::kernel::untile;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use cubecl::CubeDim;
use cubecl::prelude::*;

/// The widest head the kernel takes: one thread per dimension of a head, and WebGPU promises
/// 256 threads per workgroup.
pub(crate) const MAX_HEAD_DIM: usize = 256;

/// Keys scored at once: one per thread.
const MIN_UNITS: usize = 64;

/// What a step's attention needs besides its tensors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionShape {
    /// Own keys cached before this step: query t sees own key j iff j ≤ past + t.
    pub past: usize,
    /// Whether the kernel reads `past` from its buffer operand instead (a step recorded once and
    /// replayed, whose launch arguments are fixed at the recording).
    pub past_from_buffer: bool,
    /// The scores' factor, 1/sqrt(head_dim).
    pub scale: f32,
    /// Whether the prefix keys and values are real (else never read).
    pub with_prefix: bool,
    /// Whether the prefix mask is real (else never read).
    pub with_prefix_mask: bool,
    /// Whether the query/key/value projection's bias is real (else never read): the queries,
    /// keys and values are then the product without it.
    pub with_bias: bool,
}

/// The kernel's tensors; see [`super::StepAttention`] for their shapes.
pub(super) struct AttentionOperands {
    pub query: CubeTensor,
    /// The row's own keys and values, `[batch, 2·kv_heads, positions, head_dim]` (keys' heads,
    /// then values'): with `step`, the block's cache, written in place from position `past` on
    /// with the step's `[batch, 2·kv_heads, seq, head_dim]`; else cached and new together, only
    /// read.
    pub own: CubeTensor,
    pub step: Option<CubeTensor>,
    /// Query heads per key/value head: query head h reads key/value head h / `group` (of the
    /// prefix too).
    pub group: usize,
    pub prefix_keys: CubeTensor,
    pub prefix_values: CubeTensor,
    pub prefix_mask: CubeTensor,
    pub bias: CubeTensor,
    /// `[1]`: the own keys cached before the step, read where [`AttentionShape::past_from_buffer`].
    pub past: CubeTensor,
}

#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn attention_kernel<F: Float, P: Numeric>(
    query: &Tensor<F>,
    keys_values: &Tensor<F>,
    cache: &mut Tensor<F>,
    prefix_keys: &Tensor<F>,
    prefix_values: &Tensor<F>,
    prefix_mask: &Tensor<F>,
    bias: &Tensor<F>,
    past_buffer: &Tensor<P>,
    output: &mut Tensor<F>,
    past_argument: usize,
    scale: f32,
    group: usize,
    #[comptime] head_dim: usize,
    #[comptime] units: usize,
    #[comptime] with_prefix: bool,
    #[comptime] with_prefix_mask: bool,
    #[comptime] with_bias: bool,
    #[comptime] cached: bool,
    #[comptime] past_from_buffer: bool,
    #[define(F, P)] _dtypes: [ElemType; 2],
) {
    let mut past = past_argument;
    if past_from_buffer {
        past = usize::cast_from(past_buffer[0]);
    }
    let heads = query.shape(1);
    let seq = query.shape(2);
    let queries = query.shape(0) * heads * seq;
    // No early return: WGSL allows a barrier only where the whole workgroup provably gets, and
    // a size read from a buffer does not count as such; a workgroup past the end scores no key.
    let index = CUBE_POS;
    let active = index < queries;
    let t = index % seq;
    let h = (index / seq) % heads;
    let b = index / (seq * heads);
    let unit = UNIT_POS as usize;

    let mut q = Shared::new_slice(head_dim);
    let mut scores = Shared::new_slice(units);
    let mut bound = Shared::<[u32]>::new_slice(1usize);
    // The projection's bias, where the operands come without it: the query's is added here;
    // the keys' would add q · b_k to every score of the query, which the softmax cancels, so it
    // is not read; the values' is added to the output, the weights summing to 1.
    let width = heads * head_dim;
    if active && unit < head_dim {
        let mut value = query[b * query.stride(0)
            + h * query.stride(1)
            + t * query.stride(2)
            + unit * query.stride(3)];
        if with_bias {
            value += bias[h * head_dim + unit];
        }
        q[unit] = value * F::cast_from(scale);
    }
    // The key/value head this query head reads (in the prefix too), where its values start in
    // the cache, and the
    // first own position read from the step's keys and values rather than the cache.
    let kv_head = h / group;
    let value_heads = cache.shape(1) / 2;
    let mut split = past + seq;
    if cached {
        split = past;
        // One workgroup per key/value head writes the step's key and value at its position;
        // every workgroup reads the cache only before `past`, which no launch writes.
        if active && unit < head_dim && h == kv_head * group {
            for part in 0..2usize {
                let head = part * value_heads + kv_head;
                let at = b * cache.stride(0)
                    + head * cache.stride(1)
                    + (past + t) * cache.stride(2)
                    + unit * cache.stride(3);
                cache[at] = keys_values[b * keys_values.stride(0)
                    + head * keys_values.stride(1)
                    + t * keys_values.stride(2)
                    + unit * keys_values.stride(3)];
            }
        }
    }

    let mut prefix_len = 0;
    if with_prefix {
        prefix_len = prefix_keys.shape(2);
    }
    if unit == 0 {
        bound[0] = if active {
            u32::cast_from(prefix_len + past + t + 1)
        } else {
            0u32
        };
    }
    // A barrier (the queries are in place too), and the key count as a workgroup-uniform value,
    // so that the loop below may hold barriers.
    let keys = usize::cast_from(workgroup_uniform_load(&bound[0]));

    // Below any score: the first chunk's correction exp(running_max − chunk_max) is then 0.
    let mut running_max = F::new(-3.0e38);
    let mut total = F::new(0.0);
    let mut weighted = F::new(0.0);
    let mut start = 0;
    while start < keys {
        let j = start + unit;
        let mut score = F::new(0.0);
        if j < keys {
            if j < prefix_len {
                let row = kv_head * prefix_keys.stride(1) + j * prefix_keys.stride(2);
                for d in 0..head_dim {
                    score += q[d] * prefix_keys[row + d * prefix_keys.stride(3)];
                }
                if with_prefix_mask {
                    score += prefix_mask[b * prefix_mask.stride(0) + j * prefix_mask.stride(3)];
                }
            } else {
                let own = j - prefix_len;
                if own < split {
                    let row =
                        b * cache.stride(0) + kv_head * cache.stride(1) + own * cache.stride(2);
                    for d in 0..head_dim {
                        score += q[d] * cache[row + d * cache.stride(3)];
                    }
                } else {
                    let row = b * keys_values.stride(0)
                        + kv_head * keys_values.stride(1)
                        + (own - split) * keys_values.stride(2);
                    for d in 0..head_dim {
                        score += q[d] * keys_values[row + d * keys_values.stride(3)];
                    }
                }
            }
        }
        scores[unit] = score;
        sync_cube();

        let mut chunk = keys - start;
        if chunk > units {
            chunk = units;
        }
        let mut chunk_max = running_max;
        for i in 0..chunk {
            chunk_max = F::max(chunk_max, scores[i]);
        }
        let correction = F::exp(running_max - chunk_max);
        total *= correction;
        weighted *= correction;
        // Each thread turns its own key's score into a weight (one exp per key, not one per
        // key and thread), once every thread has read the scores for the maximum.
        sync_cube();
        if unit < chunk {
            scores[unit] = F::exp(score - chunk_max);
        }
        sync_cube();
        for i in 0..chunk {
            let weight = scores[i];
            total += weight;
            if unit < head_dim {
                let j = start + i;
                let value = if j < prefix_len {
                    prefix_values[kv_head * prefix_values.stride(1)
                        + j * prefix_values.stride(2)
                        + unit * prefix_values.stride(3)]
                } else {
                    let own = j - prefix_len;
                    let head = value_heads + kv_head;
                    if own < split {
                        cache[b * cache.stride(0)
                            + head * cache.stride(1)
                            + own * cache.stride(2)
                            + unit * cache.stride(3)]
                    } else {
                        keys_values[b * keys_values.stride(0)
                            + head * keys_values.stride(1)
                            + (own - split) * keys_values.stride(2)
                            + unit * keys_values.stride(3)]
                    }
                };
                weighted += weight * value;
            }
        }
        running_max = chunk_max;
        // Every thread has read this chunk's weights before the next chunk writes its scores.
        sync_cube();
        start += units;
    }
    if active && unit < head_dim {
        let mut value = weighted / total;
        if with_bias {
            value += bias[2 * width + h * head_dim + unit];
        }
        output[(b * seq + t) * width + h * head_dim + unit] = value;
    }
}

/// Launches [`attention_kernel`], one workgroup per (row, head, query). Returns the output and
/// the own keys and values: the block's cache, written (in place where nothing else holds it,
/// as burn's own in-place ops do; else a copy), or as given. Ten storage buffers with cubecl's
/// metadata: SwiftShader's adapter allows ten a stage, and ten is the most Chromium offers
/// (gfx-rs/wgpu#9287; WebGPU's default is eight), which is why a given step's own keys and values
/// come joined in one tensor.
pub(super) fn launch_attention(
    operands: AttentionOperands,
    shape: AttentionShape,
) -> (CubeTensor, CubeTensor) {
    let AttentionOperands {
        query,
        own,
        step,
        group,
        prefix_keys,
        prefix_values,
        prefix_mask,
        bias,
        past,
    } = operands;
    let dims = query.meta.shape().clone();
    let (batch, heads, seq, head_dim) = (dims[0], dims[1], dims[2], dims[3]);
    let dtype = query.dtype;
    let client = query.client.clone();
    let output = empty_device_dtype(
        client.clone(),
        query.device.clone(),
        Shape::from([batch, seq, heads * head_dim]),
        dtype,
    );
    let cached = step.is_some();
    let (keys_values, cache) = match step {
        Some(keys_values) if own.can_mut() && own.is_nonoverlapping() => (keys_values, own),
        Some(keys_values) => (keys_values, own.copy()),
        // The step's keys are among the own ones: the query stands in, never read.
        None => (query.clone(), own),
    };
    let past_dtype = dtype_to_storage_type(past.dtype);
    let group = group.max(1);
    let units = head_dim.max(MIN_UNITS);
    let queries = batch * heads * seq;
    let cube_count = cubecl::calculate_cube_count_elemwise(&client, queries, CubeDim::new_single());
    attention_kernel::launch(
        &client,
        cube_count,
        CubeDim::new_1d(units as u32),
        untile(query).into_tensor_arg(),
        untile(keys_values).into_tensor_arg(),
        cache.clone().into_tensor_arg(),
        untile(prefix_keys).into_tensor_arg(),
        untile(prefix_values).into_tensor_arg(),
        untile(prefix_mask).into_tensor_arg(),
        untile(bias).into_tensor_arg(),
        past.into_tensor_arg(),
        output.clone().into_tensor_arg(),
        shape.past,
        shape.scale,
        group,
        head_dim,
        units,
        shape.with_prefix,
        shape.with_prefix_mask,
        shape.with_bias,
        cached,
        shape.past_from_buffer,
        [dtype_to_storage_type(dtype), past_dtype],
    );
    (output, cache)
}
