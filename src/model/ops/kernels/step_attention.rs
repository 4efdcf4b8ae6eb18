//! The attention step's entry points: its operands as the model holds them ([`StepAttention`],
//! [`CachedStepAttention`]), turned into the backend extension's tensors, absent ones standing in
//! as the query ([`Around`]).

use burn::backend::Dispatch;
use burn::backend::tensor::FloatTensor;
use burn::tensor::Tensor;

use super::super::past::Past;
use super::{AttentionShape, TransformerKernels, attention as kernel};

/// One attention step, `softmax(q·kᵀ·scale + mask)·v` per head over the shared prefix's keys
/// (minus the segments `prefix_mask` hides) and the row's own keys up to each query's position
/// (query t of this step sees own key j iff j ≤ `past` + t), in one kernel: one workgroup per
/// query and head, which runs an online softmax over the keys in chunks (no score matrix is
/// written out). With `bias`, q, k and v are the projection's product without its bias, which
/// the kernel adds (so the model skips an addition per block and caches keys and values
/// without it).
///
/// # Shapes
/// - query `[batch, n_head, seq, head_dim]`, own keys and values `[batch, n_head, past + seq,
///   head_dim]`, prefix keys and values `[1, n_head, prefix_len, head_dim]`, prefix mask
///   `[batch, 1, 1, prefix_len]` (any strides), bias `[3·n_head·head_dim]` → `[batch, seq,
///   n_head·head_dim]`
pub struct StepAttention {
    pub query: Tensor<4>,
    pub own_keys: Tensor<4>,
    pub own_values: Tensor<4>,
    pub prefix: Option<(Tensor<4>, Tensor<4>)>,
    pub prefix_mask: Option<Tensor<4>>,
    /// The query/key/value projection's bias `[3·n_head·head_dim]` where the queries, keys and
    /// values (the prefix's too) are the product without it; `None` where they have it.
    pub bias: Option<Tensor<1>>,
    pub past: usize,
    pub scale: f32,
}

/// The widest head [`attention`] takes: one workgroup's lanes.
pub const MAX_HEAD_DIM: usize = kernel::MAX_HEAD_DIM;

/// Whether [`attention`] and [`attention_cached`] take heads `head_dim` wide.
pub fn takes_head(head_dim: usize) -> bool {
    head_dim <= MAX_HEAD_DIM
}

/// See [`StepAttention`]; heads at most [`MAX_HEAD_DIM`] wide.
pub fn attention(step: StepAttention) -> Tensor<3> {
    let StepAttention {
        query,
        own_keys,
        own_values,
        prefix,
        prefix_mask,
        bias,
        past,
        scale,
    } = step;
    let around = Around::of(&query, prefix, prefix_mask, bias, past, scale);
    // Keys' heads then values', as a block's cache holds them: one binding for both.
    let own = Tensor::cat(vec![own_keys, own_values], 1);
    Tensor::from_dispatch(Dispatch::fused_attention(
        query.into_dispatch(),
        own.into_dispatch(),
        around.prefix_keys,
        around.prefix_values,
        around.prefix_mask,
        around.bias,
        around.shape,
    ))
}

/// [`StepAttention`] over a block's cache: the row's own keys and values are the cache's first
/// `past` positions and the step's, which the same kernel writes into the cache from `past` on
/// (the cache then holds them as [`StepAttention`]'s `bias` says).
///
/// # Shapes
/// - query `[batch, n_head, seq, head_dim]`, keys_values `[batch, 2·kv_heads, seq, head_dim]`,
///   cache `[batch, 2·kv_heads, capacity ≥ past + seq, head_dim]` (keys' heads, then values';
///   n_head = kv_heads · group), prefix keys and values `[1, kv_heads, prefix_len, head_dim]`
///   (query head h reads key/value head h / group of both), the rest as [`StepAttention`] →
///   `[batch, seq, n_head·head_dim]` and the cache
pub struct CachedStepAttention {
    pub query: Tensor<4>,
    pub keys_values: Tensor<4>,
    pub cache: Tensor<4>,
    /// Query heads per key/value head.
    pub group: usize,
    pub prefix: Option<(Tensor<4>, Tensor<4>)>,
    pub prefix_mask: Option<Tensor<4>>,
    pub bias: Option<Tensor<1>>,
    pub past: Past,
    pub scale: f32,
}

/// See [`CachedStepAttention`]; heads at most [`MAX_HEAD_DIM`] wide.
pub fn attention_cached(step: CachedStepAttention) -> (Tensor<3>, Tensor<4>) {
    let CachedStepAttention {
        query,
        keys_values,
        cache,
        group,
        prefix,
        prefix_mask,
        bias,
        past,
        scale,
    } = step;
    let mut around = Around::of(&query, prefix, prefix_mask, bias, past.count, scale);
    around.shape.past_from_buffer = past.on_device.is_some();
    // Without the count on the device the query stands in, never read.
    let past = past
        .on_device
        .map_or_else(|| query.clone().into_dispatch(), Tensor::into_dispatch);
    let (output, cache) = Dispatch::fused_attention_cached(
        query.into_dispatch(),
        keys_values.into_dispatch(),
        cache.into_dispatch(),
        around.prefix_keys,
        around.prefix_values,
        around.prefix_mask,
        around.bias,
        past,
        around.shape,
        group,
    );
    (Tensor::from_dispatch(output), Tensor::from_dispatch(cache))
}

/// An attention step's operands besides the query and the own keys, absent ones passed as the
/// query, which the kernel then never reads: every operand of a backend extension is a tensor.
struct Around {
    prefix_keys: FloatTensor<Dispatch>,
    prefix_values: FloatTensor<Dispatch>,
    prefix_mask: FloatTensor<Dispatch>,
    bias: FloatTensor<Dispatch>,
    shape: AttentionShape,
}

impl Around {
    fn of(
        query: &Tensor<4>,
        prefix: Option<(Tensor<4>, Tensor<4>)>,
        prefix_mask: Option<Tensor<4>>,
        bias: Option<Tensor<1>>,
        past: usize,
        scale: f32,
    ) -> Self {
        let (prefix_keys, prefix_values, with_prefix) = match prefix {
            Some((keys, values)) => (keys, values, true),
            None => (query.clone(), query.clone(), false),
        };
        let (prefix_mask, with_prefix_mask) = match prefix_mask {
            Some(mask) if with_prefix => (mask, true),
            _ => (query.clone(), false),
        };
        let (bias, with_bias) = match bias {
            Some(bias) => (bias.into_dispatch(), true),
            None => (query.clone().into_dispatch(), false),
        };
        Self {
            prefix_keys: prefix_keys.into_dispatch(),
            prefix_values: prefix_values.into_dispatch(),
            prefix_mask: prefix_mask.into_dispatch(),
            bias,
            shape: AttentionShape {
                past,
                past_from_buffer: false,
                scale,
                with_prefix,
                with_prefix_mask,
                with_bias,
            },
        }
    }
}
