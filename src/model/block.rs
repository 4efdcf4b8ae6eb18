//! The transformer block every family shares and its parts, as burn modules that call
//! [`super::ops`]: a pre-LN block `x + attn(ln_1(x))`, then `x + mlp(ln_2(x))` (GPT-2), or both
//! on the same input, `x + attn(ln_1(x)) + mlp(ln_2(x))` (GPT-NeoX's parallel residual); the
//! attention with or without rotary embeddings, the MLP with GPT-2's tanh GELU or the exact one.

use burn::module::{Module, Param};
use burn::tensor::Tensor;

use super::error::ModelError;
use super::family::Family;
use super::kv_cache::LayerCache;
use super::ops::activation::GeluExact;
use super::ops::attention::{ProjectQkv, Qkv, StepAttention, StepInputs};
use super::ops::backend::Backend;
use super::ops::layer_norm::layer_norm;
use super::ops::projection::{Conv1D, Then};
use super::ops::rotary::{Rotary, RotaryAngles, RotaryTable};

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

/// Causal self-attention with the fused query/key/value projection `c_attn` (its output the
/// queries' heads, then the keys', then the values'), queries and keys turned by `rotary` where
/// the family has it.
#[derive(Module, Debug)]
pub struct Attention {
    pub c_attn: Conv1D,
    pub c_proj: Conv1D,
    pub n_head: usize,
    #[module(skip)]
    pub rotary: Option<RotaryTable>,
}

/// The MLP's activation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// GPT-2's tanh approximation, `gelu_new`.
    GeluTanh,
    /// The exact, erf-based GELU (GPT-NeoX).
    GeluExact,
}

/// The MLP: `c_proj(activation(c_fc(x)))`.
#[derive(Module, Debug)]
pub struct Mlp {
    pub c_fc: Conv1D,
    pub c_proj: Conv1D,
    #[module(skip)]
    pub activation: Activation,
}

/// A pre-LN transformer block: `x + attn(ln_1(x))`, then `x + mlp(ln_2(x))`; or with
/// `parallel_residual`, `x + attn(ln_1(x)) + mlp(ln_2(x))`.
#[derive(Module, Debug)]
pub struct Block {
    pub ln_1: LayerNorm,
    pub attn: Attention,
    pub ln_2: LayerNorm,
    pub mlp: Mlp,
    #[module(skip)]
    pub parallel_residual: bool,
}

/// What one block needs besides its input to extend the cache by a step.
pub(super) struct CacheStep<'a> {
    /// The model's backend, chosen at load.
    pub backend: Backend,
    /// The step's rotary angles, where the family has rotary embeddings (made once per pass).
    pub angles: Option<&'a RotaryAngles>,
    /// Own tokens already cached per row.
    pub past: usize,
    /// Shared prefix keys and values of this block, `[1, n_head, prefix_len, head_dim]` each.
    pub prefix: Option<&'a (Tensor<4>, Tensor<4>)>,
    /// Hides other contexts' segments of a joined prefix, `[batch, 1, 1, prefix_len]`.
    pub prefix_mask: Option<Tensor<4>>,
}

/// A block's weighted projections, in checkpoint order.
pub struct Projections {
    /// The fused query/key/value projection (queries' heads, then keys', then values').
    pub c_attn: Conv1D,
    /// Attention's output projection.
    pub attn_proj: Conv1D,
    /// The MLP's first projection.
    pub c_fc: Conv1D,
    /// The MLP's output projection.
    pub mlp_proj: Conv1D,
}

impl Block {
    /// A block of `family` over its norms and projections, with `n_head` heads turned by
    /// `rotary` where the family has it.
    pub fn new(
        family: &Family,
        n_head: usize,
        rotary: Option<RotaryTable>,
        [ln_1, ln_2]: [LayerNorm; 2],
        projections: Projections,
    ) -> Self {
        Block {
            ln_1,
            attn: Attention {
                c_attn: projections.c_attn,
                c_proj: projections.attn_proj,
                n_head,
                rotary,
            },
            ln_2,
            mlp: Mlp {
                c_fc: projections.c_fc,
                c_proj: projections.mlp_proj,
                activation: match family {
                    Family::Gpt2 => Activation::GeluTanh,
                    Family::GptNeox { .. } => Activation::GeluExact,
                },
            },
            parallel_residual: family.parallel_residual(),
        }
    }

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
        let mlp_input = self
            .parallel_residual
            .then(|| self.ln_2.forward(backend, x.clone()));
        let (x, layer) =
            self.attn
                .forward_cached(self.ln_1.forward(backend, x.clone()), x, layer, step)?;
        let mlp_input = mlp_input.unwrap_or_else(|| self.ln_2.forward(backend, x.clone()));
        let x = self.mlp.forward(backend, mlp_input, x)?;
        Ok((x, layer))
    }
}

impl Mlp {
    /// `residual + c_proj(activation(c_fc(x)))`.
    ///
    /// # Shapes
    /// - x and residual `[batch, seq, n_embd]` → `[batch, seq, n_embd]`
    fn forward(
        &self,
        backend: Backend,
        x: Tensor<3>,
        residual: Tensor<3>,
    ) -> Result<Tensor<3>, ModelError> {
        let hidden = match self.activation {
            Activation::GeluTanh => self.c_fc.forward(backend, x, Then::Gelu)?,
            Activation::GeluExact => {
                backend.run(GeluExact(self.c_fc.forward(backend, x, Then::Nothing)?))
            }
        };
        self.c_proj
            .forward(backend, hidden, Then::Residual(Box::new(residual)))
    }
}

impl Attention {
    /// The queries and keys turned by their positions, where the family has rotary embeddings.
    fn turned(&self, backend: Backend, qkv: Qkv, angles: Option<&RotaryAngles>) -> Qkv {
        let Some(angles) = angles else {
            return qkv;
        };
        let n_head = self.n_head;
        let turn = |input| backend.run(Rotary { input, angles });
        let keys = qkv.keys_values.clone().narrow(1, 0, n_head);
        let values = qkv.keys_values.narrow(1, n_head, n_head);
        Qkv {
            query: turn(qkv.query),
            keys_values: Tensor::cat(vec![turn(keys), values], 1),
            bias: qkv.bias,
        }
    }

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
            may_defer_bias: self.rotary.is_none(),
        })?;
        let qkv = self.turned(backend, qkv, step.angles);
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
