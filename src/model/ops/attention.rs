//! One step of causal self-attention over a shared prefix and each row's own cached keys:
//! `softmax(q·kᵀ·scale + mask)·v` per head (the query/key/value projection before it is
//! [`super::qkv`]; the step over a block's cache, which the model runs,
//! [`super::cached_attention`]).
//!
//! Its bodies: on a GPU one kernel ([`kernels::attention`]: an online softmax per query and head,
//! no score matrix written out, the projection's bias added inside it, so the projection skips
//! an addition and the cache holds keys and values without it; over a block's cache
//! ([`super::cached_attention::AttendCached`], as the model runs it) the same kernel also writes the step's keys and
//! values into the cache, a copy kernel fewer per block); natively on the CPU without a
//! shared prefix burn's own `attention`; elsewhere burn's composition (the reference body, also
//! the GPU's for heads wider than a workgroup), in slices of rows small enough for a GPU's
//! dispatch limit.
//! The kernel is one dispatch where burn's `attention` is 12 to 16 and the composition 9 to 16
//! (`STAGES=attention bash scripts/count_dispatches.sh`), and dispatches are what paced every
//! GPU run measured; on lavapipe, which emulates the GPU on the CPU, it costs more CPU time
//! (docs/performance.md, "Attention").

use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor, TensorData};

use super::backend::Op;
use super::kernels;

/// Additive mask value for attention scores that must receive zero weight. Finite (unlike −∞)
/// so that no backend can turn `exp(−∞ − max)` into NaN; after the max is subtracted it
/// underflows to exactly 0 in f32.
pub(crate) const MASKED_SCORE: f32 = -1.0e9;

/// One attention step's inputs.
#[derive(Clone)]
pub struct StepInputs<'a> {
    /// `[batch, n_head, seq, head_dim]`
    pub query: Tensor<4>,
    /// `[batch, n_head, past + seq, head_dim]` each: the row's own keys and values, cached and new
    pub own_keys: Tensor<4>,
    pub own_values: Tensor<4>,
    /// The shared prefix's keys and values, `[1, n_head, prefix_len, head_dim]` each, broadcast
    /// over the batch
    pub prefix: Option<&'a (Tensor<4>, Tensor<4>)>,
    /// Hides other contexts' segments of a joined prefix, `[batch, 1, 1, prefix_len]`
    pub prefix_mask: Option<Tensor<4>>,
    /// See [`super::qkv::Qkv::bias`].
    pub bias: Option<Tensor<1>>,
    /// Own tokens cached per row before this step: query t sees own key j iff j ≤ past + t.
    pub past: usize,
    pub scale: f32,
}

/// The step's attention output, heads side by side, ready for the output projection, over own
/// keys and values given as they are (the model runs [`super::cached_attention::AttendCached`], over its cache; on a GPU
/// this joins the given keys and values for the kernel first).
///
/// # Shapes
/// - see [`StepInputs`] → `[batch, seq, n_head·head_dim]`
#[derive(Clone)]
pub struct StepAttention<'a>(pub StepInputs<'a>);

impl Op for StepAttention<'_> {
    type Output = Tensor<3>;

    fn gpu(self) -> Tensor<3> {
        let inputs = self.0;
        if !kernels::takes_head(inputs.query.dims()[3]) {
            return composed(inputs);
        }
        kernels::attention(kernels::StepAttention {
            query: inputs.query,
            own_keys: inputs.own_keys,
            own_values: inputs.own_values,
            prefix: inputs.prefix.cloned(),
            prefix_mask: inputs.prefix_mask,
            bias: inputs.bias,
            past: inputs.past,
            scale: inputs.scale,
        })
    }

    fn cpu(self) -> Tensor<3> {
        match self.0.prefix {
            None => library(self.0),
            Some(_) => composed(self.0),
        }
    }

    /// The composition: burn-flex's attention was not measured in the browser.
    fn browser_cpu(self) -> Tensor<3> {
        composed(self.0)
    }

    fn reference(self) -> Tensor<3> {
        composed(self.0)
    }
}

/// [`StepAttention`] without a shared prefix by burn's own `attention` (burn-flex's on the native
/// CPU: one pass per query block, causal from the bottom right, as a step after `past` cached
/// tokens needs). Over a shared prefix the prefix would have to be copied beside every row's
/// keys, and the composition is about 12× faster there (`clozelab bench attention`, CPU). The
/// browser's CPU backend keeps the composition: burn-flex's attention was not measured there.
///
/// # Shapes
/// - as [`StepAttention`], without a prefix
fn library(inputs: StepInputs) -> Tensor<3> {
    let seq = inputs.query.dims()[2];
    let Composed {
        q,
        own_k,
        own_v,
        scale,
        ..
    } = with_bias(inputs);
    let options = burn::tensor::ops::AttentionModuleOptions {
        scale: Some(scale),
        softcap: None,
        is_causal: seq > 1,
    };
    merge_heads(burn::tensor::module::attention(
        q, own_k, own_v, None, None, options,
    ))
}

/// [`StepAttention`] composed of burn's operations, on any backend.
///
/// # Shapes
/// - as [`StepAttention`]
fn composed(inputs: StepInputs) -> Tensor<3> {
    let [_, _, seq, _] = inputs.query.dims();
    let total = inputs.own_keys.dims()[2];
    let mask = causal_mask(total - seq, seq, &inputs.query.device());
    merge_heads(attend(with_bias(inputs), mask.as_ref(), MAX_PRODUCT_BATCH))
}

/// The inputs with the query/key/value bias added to the query, the keys and values (the
/// prefix's too), and none left.
///
/// # Shapes
/// - see [`StepInputs`] → see [`Composed`]
fn with_bias(inputs: StepInputs) -> Composed {
    let [_, n_head, _, head_dim] = inputs.query.dims();
    let Some(bias) = inputs.bias else {
        return Composed {
            q: inputs.query,
            own_k: inputs.own_keys,
            own_v: inputs.own_values,
            prefix: inputs.prefix.cloned(),
            prefix_mask: inputs.prefix_mask,
            scale: inputs.scale as f64,
        };
    };
    let width = n_head * head_dim;
    let part = |i: usize| {
        bias.clone()
            .narrow(0, i * width, width)
            .reshape([1, n_head, 1, head_dim])
    };
    let (q_bias, k_bias, v_bias) = (part(0), part(1), part(2));
    Composed {
        q: inputs.query + q_bias,
        own_k: inputs.own_keys + k_bias.clone(),
        own_v: inputs.own_values + v_bias.clone(),
        prefix: inputs
            .prefix
            .map(|(k, v)| (k.clone() + k_bias, v.clone() + v_bias)),
        prefix_mask: inputs.prefix_mask,
        scale: inputs.scale as f64,
    }
}

/// The heads side by side again (the inverse of `qkv`'s split for one of its parts).
///
/// # Shapes
/// - `[batch, n_head, seq, head_dim]` → `[batch, seq, n_head·head_dim]`
pub(super) fn merge_heads(context: Tensor<4>) -> Tensor<3> {
    let [batch, n_head, seq, head_dim] = context.dims();
    if seq == 1 {
        context.reshape([batch, 1, n_head * head_dim])
    } else {
        context
            .swap_dims(1, 2)
            .reshape([batch, seq, n_head * head_dim])
    }
}

/// Additive causal mask over a row's own keys for `seq` new queries after `past` cached
/// tokens: query t may see own key j iff j ≤ past + t. `None` when nothing is masked.
///
/// # Shapes
/// - `[1, 1, seq, past + seq]`
fn causal_mask(past: usize, seq: usize, device: &Device) -> Option<Tensor<4>> {
    if seq == 1 {
        return None;
    }
    let keys = past + seq;
    let data: Vec<f32> = (0..seq)
        .flat_map(|t| (0..keys).map(move |j| if j <= past + t { 0.0 } else { MASKED_SCORE }))
        .collect();
    Some(Tensor::from_data(
        TensorData::new(data, [1, 1, seq, keys]),
        device,
    ))
}

/// The most batch entries (rows × heads) one attention product may span. A GPU matrix product
/// takes one dispatch dimension for its batch, and WebGPU guarantees only 65535 workgroups per
/// dimension (Vulkan on an H100 refused 73728: 8 contexts' sampling trees in one pass).
const MAX_PRODUCT_BATCH: usize = 65_535;

/// The composed body's tensors, the bias already added.
struct Composed {
    /// `[batch, n_head, seq, head_dim]`
    q: Tensor<4>,
    /// `[batch, n_head, total, head_dim]`
    own_k: Tensor<4>,
    own_v: Tensor<4>,
    /// `[1, n_head, prefix_len, head_dim]` each
    prefix: Option<(Tensor<4>, Tensor<4>)>,
    /// `[batch, 1, 1, prefix_len]`
    prefix_mask: Option<Tensor<4>>,
    scale: f64,
}

/// softmax(q·kᵀ·scale + mask)·v over the shared prefix's keys and the row's own, in slices of
/// rows small enough that no product spans more than `max_batch` batch entries.
///
/// # Shapes
/// - see [`Composed`], mask `[1, 1, seq, total]` (see [`causal_mask`]) →
///   `[batch, n_head, seq, head_dim]`
fn attend(inputs: Composed, mask: Option<&Tensor<4>>, max_batch: usize) -> Tensor<4> {
    let [batch, n_head, _, _] = inputs.q.dims();
    let rows_per_slice = (max_batch / n_head.max(1)).max(1);
    if batch <= rows_per_slice {
        return attend_rows(inputs, mask);
    }
    let rows = |t: &Tensor<4>, start: usize, len: usize| {
        if t.dims()[0] == batch {
            t.clone().narrow(0, start, len)
        } else {
            t.clone()
        }
    };
    let slices = (0..batch)
        .step_by(rows_per_slice)
        .map(|start| {
            let len = rows_per_slice.min(batch - start);
            attend_rows(
                Composed {
                    q: rows(&inputs.q, start, len),
                    own_k: rows(&inputs.own_k, start, len),
                    own_v: rows(&inputs.own_v, start, len),
                    prefix: inputs.prefix.clone(),
                    prefix_mask: inputs.prefix_mask.as_ref().map(|m| rows(m, start, len)),
                    scale: inputs.scale,
                },
                mask,
            )
        })
        .collect();
    Tensor::cat(slices, 0)
}

fn attend_rows(inputs: Composed, mask: Option<&Tensor<4>>) -> Tensor<4> {
    let Composed {
        q,
        own_k,
        own_v,
        prefix,
        prefix_mask,
        scale,
    } = inputs;
    let [batch, n_head, seq, _] = q.dims();
    let total = own_k.dims()[2];
    let mut own_scores = q.clone().matmul(own_k.swap_dims(2, 3)) * scale;
    if let Some(mask) = mask {
        own_scores = own_scores + mask.clone();
    }
    match prefix {
        None => softmax(own_scores, 3).matmul(own_v),
        Some((prefix_k, prefix_v)) => {
            let prefix_len = prefix_k.dims()[2];
            let mut prefix_scores = q.matmul(prefix_k.swap_dims(2, 3)) * scale;
            if let Some(mask) = prefix_mask {
                prefix_scores = prefix_scores + mask;
            }
            let weights = softmax(Tensor::cat(vec![prefix_scores, own_scores], 3), 3);
            let to_prefix = weights
                .clone()
                .slice([0..batch, 0..n_head, 0..seq, 0..prefix_len]);
            let to_own =
                weights.slice([0..batch, 0..n_head, 0..seq, prefix_len..prefix_len + total]);
            to_prefix.matmul(prefix_v) + to_own.matmul(own_v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(dims: [usize; 4], seed: f32) -> Tensor<4> {
        let n: usize = dims.iter().product();
        let values: Vec<f32> = (0..n).map(|i| (i as f32 * 0.61 + seed).sin()).collect();
        Tensor::<4>::from_data(TensorData::new(values, dims), &Device::flex())
    }

    /// Attention over more batch entries than one product may span runs in slices of rows;
    /// slicing (uneven, with per-row and broadcast masks) must not change the result.
    #[test]
    fn attention_in_slices_of_rows_equals_one_product() {
        let device = Device::flex();
        let (batch, n_head, seq, total, head_dim, prefix_len) = (5, 2, 2, 3, 4, 6);
        let prefix = (
            tensor([1, n_head, prefix_len, head_dim], 0.3),
            tensor([1, n_head, prefix_len, head_dim], 0.7),
        );
        let hide: Vec<f32> = (0..batch * prefix_len)
            .map(|i| if i % 4 == 1 { MASKED_SCORE } else { 0.0 })
            .collect();
        let prefix_mask =
            Tensor::<4>::from_data(TensorData::new(hide, [batch, 1, 1, prefix_len]), &device);
        let inputs = || Composed {
            q: tensor([batch, n_head, seq, head_dim], 1.1),
            own_k: tensor([batch, n_head, total, head_dim], 1.9),
            own_v: tensor([batch, n_head, total, head_dim], 2.3),
            prefix: Some(prefix.clone()),
            prefix_mask: Some(prefix_mask.clone()),
            scale: 0.5,
        };
        let mask = causal_mask(total - seq, seq, &device);
        let whole = attend(inputs(), mask.as_ref(), MAX_PRODUCT_BATCH);
        // Two rows (four batch entries) per product: slices of 2, 2 and 1 rows.
        let sliced = attend(inputs(), mask.as_ref(), 2 * n_head);
        assert_eq!(sliced.dims(), [batch, n_head, seq, head_dim]);
        let (a, b) = (
            whole.into_data().try_to_vec::<f32>().unwrap(),
            sliced.into_data().try_to_vec::<f32>().unwrap(),
        );
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-6, "{x} vs {y}");
        }
    }

    /// A bias left to the attention equals the bias added to the query, keys and values first.
    #[test]
    fn a_bias_left_to_the_attention_equals_one_added_before() {
        let (batch, n_head, seq, head_dim, prefix_len) = (2, 2, 3, 4, 5);
        let width = n_head * head_dim;
        let bias_values: Vec<f32> = (0..3 * width).map(|i| (i as f32 * 0.37).cos()).collect();
        let bias =
            Tensor::<1>::from_data(TensorData::new(bias_values, [3 * width]), &Device::flex());
        let part = |i: usize| {
            bias.clone()
                .narrow(0, i * width, width)
                .reshape([1, n_head, 1, head_dim])
        };
        let (q, k, v) = (
            tensor([batch, n_head, seq, head_dim], 0.1),
            tensor([batch, n_head, seq, head_dim], 0.2),
            tensor([batch, n_head, seq, head_dim], 0.4),
        );
        let prefix = (
            tensor([1, n_head, prefix_len, head_dim], 0.5),
            tensor([1, n_head, prefix_len, head_dim], 0.9),
        );
        let prefix_added = (prefix.0.clone() + part(1), prefix.1.clone() + part(2));
        let left = composed(StepInputs {
            query: q.clone(),
            own_keys: k.clone(),
            own_values: v.clone(),
            prefix: Some(&prefix),
            prefix_mask: None,
            bias: Some(bias.clone()),
            past: 0,
            scale: 0.5,
        });
        let added = composed(StepInputs {
            query: q + part(0),
            own_keys: k + part(1),
            own_values: v + part(2),
            prefix: Some(&prefix_added),
            prefix_mask: None,
            bias: None,
            past: 0,
            scale: 0.5,
        });
        let (a, b) = (
            left.into_data().try_to_vec::<f32>().unwrap(),
            added.into_data().try_to_vec::<f32>().unwrap(),
        );
        assert_eq!(a.len(), batch * seq * width);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-6, "{x} vs {y}");
        }
    }
}
