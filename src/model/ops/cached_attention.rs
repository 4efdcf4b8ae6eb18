//! One attention step over a block's key/value cache, which the step extends: on a GPU the
//! attention kernel writes the step's keys and values into the cache while it reads the cached
//! ones (a copy kernel fewer per block); elsewhere the step is copied in, then attended to.

use burn::tensor::Tensor;

use super::attention::{StepAttention, StepInputs};
use super::backend::Op;
use super::grouped_heads::repeat_heads;
use super::kernels;
use super::past::Past;
use super::qkv::Qkv;

/// One attention step over a block's cache, which it extends with the step's keys and values
/// (from position `past` on) and returns: on a GPU in one kernel
/// ([`kernels::attention_cached`]), which writes them while it reads the cached ones; elsewhere
/// a copy into the cache, then [`StepAttention`] over its views.
///
/// # Shapes
/// - qkv as [`Qkv`] (`n_head` = `kv_heads` · `group`), cache `[batch, 2·kv_heads, capacity ≥
///   past + seq, head_dim]`, prefix `[1, kv_heads, prefix_len, head_dim]` each →
///   `[batch, seq, n_head·head_dim]` and the cache
pub struct AttendCached<'a> {
    pub qkv: Qkv,
    pub cache: Tensor<4>,
    pub group: usize,
    pub prefix: Option<&'a (Tensor<4>, Tensor<4>)>,
    pub prefix_mask: Option<Tensor<4>>,
    pub past: Past,
    pub scale: f32,
}

impl AttendCached<'_> {
    /// The cache with the step's keys and values copied in, and [`StepAttention`]'s body
    /// `attend` over its views.
    fn copied_then(
        self,
        attend: impl FnOnce(StepAttention) -> Tensor<3>,
    ) -> (Tensor<3>, Tensor<4>) {
        let Qkv {
            query,
            keys_values,
            bias,
        } = self.qkv;
        let [batch, both, seq, head_dim] = keys_values.dims();
        let past = self.past.count;
        let cache = self.cache.slice_assign(
            [0..batch, 0..both, past..past + seq, 0..head_dim],
            keys_values,
        );
        let own = |heads: std::ops::Range<usize>| {
            let part = cache
                .clone()
                .slice([0..batch, heads, 0..past + seq, 0..head_dim]);
            repeat_heads(part, self.group)
        };
        let kv_heads = both / 2;
        let repeated_prefix = self
            .prefix
            .filter(|_| self.group > 1)
            .map(|(keys, values)| {
                (
                    repeat_heads(keys.clone(), self.group),
                    repeat_heads(values.clone(), self.group),
                )
            });
        let context = attend(StepAttention(StepInputs {
            query,
            own_keys: own(0..kv_heads),
            own_values: own(kv_heads..both),
            prefix: repeated_prefix.as_ref().or(self.prefix),
            prefix_mask: self.prefix_mask,
            bias,
            past,
            scale: self.scale,
        }));
        (context, cache)
    }
}

impl Op for AttendCached<'_> {
    type Output = (Tensor<3>, Tensor<4>);

    fn gpu(self) -> Self::Output {
        if !kernels::takes_head(self.qkv.query.dims()[3]) {
            return self.copied_then(|step| step.gpu());
        }
        kernels::attention_cached(kernels::CachedStepAttention {
            query: self.qkv.query,
            keys_values: self.qkv.keys_values,
            cache: self.cache,
            group: self.group,
            prefix: self.prefix.cloned(),
            prefix_mask: self.prefix_mask,
            bias: self.qkv.bias,
            past: self.past,
            scale: self.scale,
        })
    }

    fn cpu(self) -> Self::Output {
        self.copied_then(|step| step.cpu())
    }

    fn browser_cpu(self) -> Self::Output {
        self.copied_then(|step| step.browser_cpu())
    }

    fn reference(self) -> Self::Output {
        self.copied_then(|step| step.reference())
    }
}
