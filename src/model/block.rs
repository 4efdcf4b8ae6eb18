//! GPT-2's transformer block and its parts, as burn modules that call [`super::ops`]: a pre-LN
//! block `x + attn(ln_1(x))`, then `x + mlp(ln_2(x))`.

use burn::module::{Module, Param};
use burn::tensor::Tensor;

use super::error::ModelError;
use super::kv_cache::LayerCache;
use super::ops::attention::{ProjectQkv, StepAttention, StepInputs};
use super::ops::backend::Backend;
use super::ops::layer_norm::layer_norm;
use super::ops::projection::{Conv1D, Then};

/// LayerNorm with GPT-2's parameter names (`weight`, `bias`).
#[derive(Module, Debug)]
pub struct LayerNorm {
    pub weight: Param<Tensor<1>>,
    pub bias: Param<Tensor<1>>,
    pub epsilon: f64,
}

impl LayerNorm {
    /// `y = (x − mean) / sqrt(var + ε) · weight + bias` over the last dimension.
    ///
    /// # Shapes
    /// - input `[..., n_embd]` → output `[..., n_embd]`
    pub fn forward<const D: usize>(&self, backend: Backend, input: Tensor<D>) -> Tensor<D> {
        layer_norm(
            backend,
            input,
            self.weight.val(),
            self.bias.val(),
            self.epsilon,
        )
    }
}

/// Causal self-attention with the fused query/key/value projection `c_attn`.
#[derive(Module, Debug)]
pub struct Attention {
    pub c_attn: Conv1D,
    pub c_proj: Conv1D,
    pub n_head: usize,
}

/// The MLP: `c_proj(gelu_new(c_fc(x)))`.
#[derive(Module, Debug)]
pub struct Mlp {
    pub c_fc: Conv1D,
    pub c_proj: Conv1D,
}

/// A pre-LN transformer block: `x + attn(ln_1(x))`, then `x + mlp(ln_2(x))`.
#[derive(Module, Debug)]
pub struct Block {
    pub ln_1: LayerNorm,
    pub attn: Attention,
    pub ln_2: LayerNorm,
    pub mlp: Mlp,
}

/// What one block needs besides its input to extend the cache by a step.
pub(super) struct CacheStep<'a> {
    /// The model's backend, chosen at load.
    pub backend: Backend,
    /// Own tokens already cached per row.
    pub past: usize,
    /// Shared prefix keys and values of this block, `[1, n_head, prefix_len, head_dim]` each.
    pub prefix: Option<&'a (Tensor<4>, Tensor<4>)>,
    /// Hides other contexts' segments of a joined prefix, `[batch, 1, 1, prefix_len]`.
    pub prefix_mask: Option<Tensor<4>>,
}

impl Block {
    /// The block's four weighted projections: attention's two, then the MLP's.
    pub(super) fn projections_mut(&mut self) -> [&mut Conv1D; 4] {
        [
            &mut self.attn.c_attn,
            &mut self.attn.c_proj,
            &mut self.mlp.c_fc,
            &mut self.mlp.c_proj,
        ]
    }

    /// # Shapes
    /// - x `[batch, seq, n_embd]` → `[batch, seq, n_embd]`
    pub(super) fn forward_cached(
        &self,
        x: Tensor<3>,
        layer: LayerCache,
        step: CacheStep,
    ) -> Result<(Tensor<3>, LayerCache), ModelError> {
        let backend = step.backend;
        let (x, layer) =
            self.attn
                .forward_cached(self.ln_1.forward(backend, x.clone()), x, layer, step)?;
        let hidden =
            self.mlp
                .c_fc
                .forward(backend, self.ln_2.forward(backend, x.clone()), Then::Gelu)?;
        let x = self
            .mlp
            .c_proj
            .forward(backend, hidden, Then::Residual(Box::new(x)))?;
        Ok((x, layer))
    }
}

impl Attention {
    /// Returns `residual` plus the attention's output, and the layer's cache with this step's
    /// keys and values.
    ///
    /// # Shapes
    /// - x and residual `[batch, seq, n_embd]` → `[batch, seq, n_embd]`
    fn forward_cached(
        &self,
        x: Tensor<3>,
        residual: Tensor<3>,
        layer: LayerCache,
        step: CacheStep,
    ) -> Result<(Tensor<3>, LayerCache), ModelError> {
        let [_, seq, n_embd] = x.dims();
        let head_dim = n_embd / self.n_head;
        let backend = step.backend;
        let qkv = backend.run(ProjectQkv {
            c_attn: &self.c_attn,
            x,
            n_head: self.n_head,
        })?;
        let layer = layer.append(qkv.keys_values, step.past);
        let (own_keys, own_values) = layer.own(step.past + seq);
        let context = backend.run(StepAttention(StepInputs {
            query: qkv.query,
            own_keys,
            own_values,
            prefix: step.prefix,
            prefix_mask: step.prefix_mask,
            bias: qkv.bias,
            past: step.past,
            scale: 1.0 / (head_dim as f32).sqrt(),
        }));
        let output = self
            .c_proj
            .forward(backend, context, Then::Residual(Box::new(residual)))?;
        Ok((output, layer))
    }
}
