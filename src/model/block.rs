//! The transformer block every family shares and its parts, as burn modules that call
//! [`super::ops`]: a pre-norm block `x + attn(ln_1(x))`, then `x + mlp(ln_2(x))` (GPT-2, Llama),
//! or both on the same input, `x + attn(ln_1(x)) + mlp(ln_2(x))` (GPT-NeoX's parallel residual);
//! LayerNorm or the RMS norm; the attention with or without rotary embeddings and with as many
//! or fewer key/value heads than query heads; the MLP with GPT-2's tanh GELU, the exact one, or
//! the SiLU gate. A projection that adds to the residual stream also norms the sum for the norm
//! that reads it next (`Stream`): on a GPU one kernel where the two would be two dispatches.

use burn::module::{Module, Param};
use burn::tensor::Tensor;

use super::error::ModelError;
use super::family::Family;
use super::kv_cache::LayerCache;
use super::ops::activation::{GeluExact, SiluGate};
use super::ops::backend::Backend;
use super::ops::cached_attention::AttendCached;
use super::ops::layer_norm::layer_norm;
use super::ops::past::Past;
use super::ops::projection::{Conv1D, Then};
use super::ops::qkv::{ProjectQkv, Qkv};
use super::ops::residual_norm::ProjectResidualNorm;
use super::ops::rms_norm::RmsNormOp;
use super::ops::rotary::{Rotary, RotaryAngles, RotaryTable};

/// A norm with Hugging Face's parameter names: LayerNorm (`weight`, `bias`) or the RMS norm
/// (`weight` only).
#[derive(Module, Debug)]
pub struct Norm {
    pub weight: Param<Tensor<1>>,
    /// LayerNorm's bias; none for the RMS norm.
    pub bias: Option<Param<Tensor<1>>>,
    pub epsilon: f64,
}

impl Norm {
    /// LayerNorm, `y = (x − mean) / sqrt(var + ε) · weight + bias`, or where there is no bias the
    /// RMS norm, `y = x / sqrt(mean(x²) + ε) · weight`, over the last dimension.
    ///
    /// # Shapes
    /// - input `[..., n_embd]` → output `[..., n_embd]`
    pub fn forward<const D: usize>(&self, backend: Backend, input: Tensor<D>) -> Tensor<D> {
        match &self.bias {
            Some(bias) => layer_norm(backend, input, self.weight.val(), bias.val(), self.epsilon),
            None => backend.run(RmsNormOp {
                input,
                weight: self.weight.val(),
                epsilon: self.epsilon,
            }),
        }
    }

    /// `s = residual + layer(input)` and this norm of `s`: for a LayerNorm in one op (on a GPU
    /// the projection's epilogue and the norm are one kernel), for the RMS norm one after the
    /// other.
    ///
    /// # Shapes
    /// - input `[batch, seq, in]`, residual `[batch, seq, n_embd]` → two `[batch, seq, n_embd]`
    fn after_projection(
        &self,
        backend: Backend,
        layer: &Conv1D,
        input: Tensor<3>,
        residual: Tensor<3>,
    ) -> Result<(Tensor<3>, Tensor<3>), ModelError> {
        match &self.bias {
            Some(bias) => backend.run(ProjectResidualNorm {
                layer,
                input,
                residual,
                norm_weight: self.weight.val(),
                norm_bias: bias.val(),
                epsilon: self.epsilon,
            }),
            None => {
                let sum = layer.forward(backend, input, Then::Residual(Box::new(residual)))?;
                let norm = self.forward(backend, sum.clone());
                Ok((sum, norm))
            }
        }
    }
}

/// `residual + layer(input)`, and the sum's norm by `next` where there is a next norm to take.
///
/// # Shapes
/// - input `[batch, seq, in]`, residual `[batch, seq, n_embd]` → `[batch, seq, n_embd]` each
fn project_residual(
    backend: Backend,
    layer: &Conv1D,
    input: Tensor<3>,
    residual: Tensor<3>,
    next: Option<&Norm>,
) -> Result<(Tensor<3>, Option<Tensor<3>>), ModelError> {
    match next {
        Some(norm) => {
            let (sum, normed) = norm.after_projection(backend, layer, input, residual)?;
            Ok((sum, Some(normed)))
        }
        None => Ok((
            layer.forward(backend, input, Then::Residual(Box::new(residual)))?,
            None,
        )),
    }
}

/// The residual stream between blocks: `x`, and where the block before computed it with its
/// last projection, `x` normed by the norm that reads it next (the next block's first norm, or
/// the final norm).
pub(super) struct Stream {
    pub x: Tensor<3>,
    pub normed: Option<Tensor<3>>,
}

/// Causal self-attention with the fused query/key/value projection `c_attn` (its output the
/// `n_head` queries' heads, then the `kv_heads` keys', then the values'), queries and keys
/// turned by `rotary` where the family has it. With fewer key/value heads than query heads
/// (grouped-query attention), the cache holds the fewer and each serves a group of queries.
#[derive(Module, Debug)]
pub struct Attention {
    pub c_attn: Conv1D,
    pub c_proj: Conv1D,
    pub n_head: usize,
    pub kv_heads: usize,
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
    /// SwiGLU (Llama): `c_fc`'s outputs are the gate, then the values it gates,
    /// `silu(gate) · up`.
    SiluGate,
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
    pub ln_1: Norm,
    pub attn: Attention,
    pub ln_2: Norm,
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
    pub past: Past,
    /// Shared prefix keys and values of this block, `[1, kv_heads, prefix_len, head_dim]` each.
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
    /// The MLP's first projection (for the SiLU gate, the gate's outputs then the up
    /// projection's).
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
        [ln_1, ln_2]: [Norm; 2],
        projections: Projections,
    ) -> Self {
        Block {
            ln_1,
            attn: Attention {
                c_attn: projections.c_attn,
                c_proj: projections.attn_proj,
                n_head,
                kv_heads: family.kv_heads(n_head),
                rotary,
            },
            ln_2,
            mlp: Mlp {
                c_fc: projections.c_fc,
                c_proj: projections.mlp_proj,
                activation: match family {
                    Family::Gpt2 => Activation::GeluTanh,
                    Family::GptNeox { .. } => Activation::GeluExact,
                    Family::Llama { .. } => Activation::SiluGate,
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

    /// The block over `stream`, and the stream after it, normed by `next` (the norm that reads
    /// it next) where given.
    ///
    /// # Shapes
    /// - the stream's tensors `[batch, seq, n_embd]` → the same
    pub(super) fn forward_cached(
        &self,
        stream: Stream,
        next: Option<&Norm>,
        layer: LayerCache,
        step: CacheStep,
    ) -> Result<(Stream, LayerCache), ModelError> {
        let backend = step.backend;
        let x = stream.x;
        let attention_input = match stream.normed {
            Some(normed) => normed,
            None => self.ln_1.forward(backend, x.clone()),
        };
        let (x, mlp_input, layer) = if self.parallel_residual {
            let mlp_input = self.ln_2.forward(backend, x.clone());
            let (x, _, layer) = self
                .attn
                .forward_cached(attention_input, x, None, layer, step)?;
            (x, mlp_input, layer)
        } else {
            let (x, normed, layer) =
                self.attn
                    .forward_cached(attention_input, x, Some(&self.ln_2), layer, step)?;
            // Always there: `next` was given.
            let mlp_input = match normed {
                Some(normed) => normed,
                None => self.ln_2.forward(backend, x.clone()),
            };
            (x, mlp_input, layer)
        };
        let (x, normed) = self.mlp.forward(backend, mlp_input, x, next)?;
        Ok((Stream { x, normed }, layer))
    }
}

impl Mlp {
    /// `residual + c_proj(activation(c_fc(x)))`, and that normed by `next` where given.
    ///
    /// # Shapes
    /// - x and residual `[batch, seq, n_embd]` → `[batch, seq, n_embd]` each
    fn forward(
        &self,
        backend: Backend,
        x: Tensor<3>,
        residual: Tensor<3>,
        next: Option<&Norm>,
    ) -> Result<(Tensor<3>, Option<Tensor<3>>), ModelError> {
        let hidden = match self.activation {
            Activation::GeluTanh => self.c_fc.forward(backend, x, Then::Gelu)?,
            Activation::GeluExact => {
                backend.run(GeluExact(self.c_fc.forward(backend, x, Then::Nothing)?))
            }
            Activation::SiluGate => {
                let both = self.c_fc.forward(backend, x, Then::Nothing)?;
                let inner = both.dims()[2] / 2;
                backend.run(SiluGate {
                    gate: both.clone().narrow(2, 0, inner),
                    up: both.narrow(2, inner, inner),
                })
            }
        };
        project_residual(backend, &self.c_proj, hidden, residual, next)
    }
}

impl Attention {
    /// The queries and keys turned by their positions, where the family has rotary embeddings.
    fn turned(&self, backend: Backend, qkv: Qkv, angles: Option<&RotaryAngles>) -> Qkv {
        let Some(angles) = angles else {
            return qkv;
        };
        let kv_heads = self.kv_heads;
        let turn = |input| backend.run(Rotary { input, angles });
        let keys = qkv.keys_values.clone().narrow(1, 0, kv_heads);
        let values = qkv.keys_values.narrow(1, kv_heads, kv_heads);
        Qkv {
            query: turn(qkv.query),
            keys_values: Tensor::cat(vec![turn(keys), values], 1),
            bias: qkv.bias,
        }
    }

    /// Returns `residual` plus the attention's output, that normed by `next` where given, and
    /// the layer's cache with this step's keys and values.
    ///
    /// # Shapes
    /// - x and residual `[batch, seq, n_embd]` → `[batch, seq, n_embd]` each
    fn forward_cached(
        &self,
        x: Tensor<3>,
        residual: Tensor<3>,
        next: Option<&Norm>,
        layer: LayerCache,
        step: CacheStep,
    ) -> Result<(Tensor<3>, Option<Tensor<3>>, LayerCache), ModelError> {
        let n_embd = x.dims()[2];
        let head_dim = n_embd / self.n_head;
        let backend = step.backend;
        let qkv = backend.run(ProjectQkv {
            c_attn: &self.c_attn,
            x,
            n_head: self.n_head,
            kv_heads: self.kv_heads,
            may_defer_bias: self.rotary.is_none(),
        })?;
        let qkv = self.turned(backend, qkv, step.angles);
        let (context, keys_values) = backend.run(AttendCached {
            qkv,
            cache: layer.keys_values,
            group: self.n_head / self.kv_heads.max(1),
            prefix: step.prefix,
            prefix_mask: step.prefix_mask,
            past: step.past,
            scale: 1.0 / (head_dim as f32).sqrt(),
        });
        let layer = LayerCache { keys_values };
        let (output, normed) = project_residual(backend, &self.c_proj, context, residual, next)?;
        Ok((output, normed, layer))
    }
}
