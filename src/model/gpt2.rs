//! GPT-2 (Radford et al. 2019) as burn modules, one code path for every backend. Some steps
//! take a GPU's own kernels where burn would launch many ([`super::kernels`]: the layer norm, a
//! step's attention with the query/key/value projection's bias, a projection's bias with the
//! GELU or residual after it, and in [`super::embedding`] the token embedding's lookup; the CPU
//! backend composes the same formulas from burn's operations, which the kernels are tested
//! against), and [`gelu_new`] picks, per backend, the cheaper of two equal formulas.
//!
//! Field names mirror the Hugging Face checkpoint keys (`wte`, `wpe`, `h.{i}.ln_1`,
//! `h.{i}.attn.c_attn`, `h.{i}.attn.c_proj`, `h.{i}.mlp.c_fc`, `h.{i}.mlp.c_proj`, `ln_f`), so the
//! loader's key table is just the module tree written out.

use burn::module::{Module, Param};
use burn::tensor::activation::softmax;
use burn::tensor::{DType, Device, Int, Tensor, TensorData};

use super::config::Gpt2Config;
use super::embedding::TokenEmbedding;
use super::error::ModelError;
use super::kernels::{self, StepAttention};
use super::kv_cache::{KvCache, LayerCache, MASKED_SCORE, SharedPrefix};
use super::panel_product::{PanelError, PanelWeight};
use super::precision::{Precision, PrecisionError, to_f32};
use super::readback::read_f32_now;
use super::threaded_product;

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
    pub fn forward<const D: usize>(&self, input: Tensor<D>) -> Tensor<D> {
        kernels::layer_norm(input, self.weight.val(), self.bias.val(), self.epsilon)
    }
}

/// GPT-2's `Conv1D`: a linear layer whose weight is stored `[in, out]`, which is also burn's
/// layout, so checkpoint weights load without a transpose (a PyTorch `nn.Linear` would need one).
///
/// On the browser's CPU backend the weight lives in `panels` instead (packed once for
/// [`PanelWeight::product`]; `weight` is then an empty `[0, 0]`, so the model is not held twice).
#[derive(Module, Debug)]
pub struct Conv1D {
    pub weight: Param<Tensor<2>>,
    pub bias: Param<Tensor<1>>,
    #[module(skip)]
    pub panels: Option<PanelWeight>,
}

impl Conv1D {
    /// A layer over `weight` `[in, out]`, packed into panels when `panels` is set.
    pub fn new(
        weight: Vec<f32>,
        shape: [usize; 2],
        bias: Param<Tensor<1>>,
        panels: bool,
        device: &Device,
    ) -> Result<Self, PanelError> {
        if panels {
            let packed = PanelWeight::pack(&weight, shape[0], shape[1])?;
            return Ok(Self {
                weight: Param::from_tensor(Tensor::zeros([0, 0], device)),
                bias,
                panels: Some(packed),
            });
        }
        Ok(Self {
            weight: Param::from_tensor(Tensor::from_data(TensorData::new(weight, shape), device)),
            bias,
            panels: None,
        })
    }

    /// `[in, out]`.
    pub fn dims(&self) -> [usize; 2] {
        match &self.panels {
            Some(packed) => packed.dims(),
            None => self.weight.val().dims(),
        }
    }

    /// With f16 weights ([`Precision::F16`]) only the weights are f16: the product takes the
    /// f32 input and gives f32 ([`kernels::half_product`]).
    ///
    /// # Shapes
    /// - input `[..., in]` → output `[..., out]`
    pub fn forward<const D: usize>(&self, input: Tensor<D>) -> Result<Tensor<D>, ModelError> {
        if let Some(packed) = &self.panels {
            return panel_linear(input, packed, self.bias.val());
        }
        let weight = self.weight.val();
        if weight.dtype() != DType::F32 {
            return Ok(self.product(input) + self.bias.val().unsqueeze::<D>());
        }
        Ok(threaded_product::linear(input, weight, self.bias.val()))
    }

    /// `input · weight` without the bias, in f32 (with an f16 weight too), for the unpacked
    /// weight.
    fn product<const D: usize>(&self, input: Tensor<D>) -> Tensor<D> {
        let weight = self.weight.val();
        if weight.dtype() != DType::F32 {
            return kernels::half_product(input, weight);
        }
        burn::tensor::module::linear(input, weight, None)
    }
}

/// What comes right after a projection's bias in a block.
enum After<const D: usize> {
    /// GPT-2's GELU (the MLP's first projection).
    Gelu,
    /// The residual stream, added (attention's and the MLP's output projections); boxed, as a
    /// tensor handle is large beside the other variant.
    Residual(Box<Tensor<D>>),
}

impl Conv1D {
    /// [`Conv1D::forward`], then `after`. On a GPU the bias and `after` are one kernel
    /// ([`kernels::bias_gelu`], [`kernels::bias_residual`]) after the product.
    fn forward_then<const D: usize>(
        &self,
        input: Tensor<D>,
        after: After<D>,
    ) -> Result<Tensor<D>, ModelError> {
        if self.panels.is_none() && kernels::runs_on(&input.device()) {
            let product = self.product(input);
            return Ok(match after {
                After::Gelu => kernels::bias_gelu(product, self.bias.val()),
                After::Residual(residual) => {
                    kernels::bias_residual(product, self.bias.val(), *residual)
                }
            });
        }
        let output = self.forward(input)?;
        Ok(match after {
            After::Gelu => gelu_new(output),
            After::Residual(residual) => *residual + output,
        })
    }
}

/// `input · weight + bias` through the packed weight: the input is read on the host, which on
/// the CPU backend is where it already is.
fn panel_linear<const D: usize>(
    input: Tensor<D>,
    packed: &PanelWeight,
    bias: Tensor<1>,
) -> Result<Tensor<D>, ModelError> {
    let device = input.device();
    let mut dims = input.dims();
    let [n_in, n_out] = packed.dims();
    let rows = dims[..D - 1].iter().product::<usize>();
    let product = packed.product(&read_f32_now(input)?, rows)?;
    debug_assert_eq!(dims[D - 1], n_in);
    dims[D - 1] = n_out;
    Ok(Tensor::<D>::from_data(TensorData::new(product, dims), &device) + bias.unsqueeze::<D>())
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

/// GPT-2 with its language-model head tied to the token embedding `wte`.
#[derive(Module, Debug)]
pub struct Gpt2 {
    /// Token embedding, also the (transposed) LM head.
    pub wte: TokenEmbedding,
    /// Position embedding `[n_positions, n_embd]`.
    pub wpe: Param<Tensor<2>>,
    pub h: Vec<Block>,
    pub ln_f: LayerNorm,
    pub vocab_size: usize,
    pub n_positions: usize,
}

/// `gelu_new`, GPT-2's tanh approximation of GELU:
/// `0.5 · x · (1 + tanh(u))` with `u = √(2/π) · (x + 0.044715 · x³)`.
///
/// Computed as `x · (b + a · x²)` for `u` (no `powf`), and on the CPU backend through the identity
/// `0.5 · (1 + tanh(u)) = σ(2u)`: burn-flex's sigmoid is one pass with one `exp`, where its
/// `tanh` calls `tanhf`/`expm1f` per element. GPU backends keep `tanh` (one kernel), because
/// burn-cubecl composes its sigmoid of six.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// let x = Tensor::<1>::from_floats([-3.0, 0.0, 1.0], &Device::flex());
/// let y = clozelab::model::gpt2::gelu_new(x).into_data().try_to_vec::<f32>().unwrap();
/// assert!((y[0] + 0.003_637).abs() < 1e-5 && y[1] == 0.0 && (y[2] - 0.841_192).abs() < 1e-5);
/// ```
pub fn gelu_new<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
    const CUBIC: f64 = 0.044_715;
    let on_cpu = x.device() == Device::flex();
    // The sigmoid form needs 2u.
    let scale = SQRT_2_OVER_PI * if on_cpu { 2.0 } else { 1.0 };
    let u = (x.clone() * x.clone() * (scale * CUBIC) + scale) * x.clone();
    if on_cpu {
        burn::tensor::activation::sigmoid(u) * x
    } else {
        (u.tanh() + 1.0) * x * 0.5
    }
}

impl Gpt2Config {
    /// A model with GPT-2's initialisation (N(0, 0.02) weights, zero biases, unit LayerNorm
    /// gains). Real use loads a checkpoint instead (see `loader`).
    pub fn init(&self, device: &Device) -> Gpt2 {
        let normal = |shape: Vec<usize>| {
            Param::from_tensor(Tensor::random(
                shape,
                burn::tensor::Distribution::Normal(0.0, 0.02),
                device,
            ))
        };
        let zeros = |n: usize| Param::from_tensor(Tensor::zeros([n], device));
        let layer_norm = || LayerNorm {
            weight: Param::from_tensor(Tensor::ones([self.n_embd], device)),
            bias: zeros(self.n_embd),
            epsilon: self.layer_norm_epsilon,
        };
        let conv = |n_in: usize, n_out: usize| Conv1D {
            weight: normal(vec![n_in, n_out]),
            bias: zeros(n_out),
            panels: None,
        };
        let e = self.n_embd;
        let rows = TokenEmbedding::chunk_rows(e);
        let wte = TokenEmbedding {
            chunks: (0..self.vocab_size)
                .step_by(rows)
                .map(|start| normal(vec![rows.min(self.vocab_size - start), e]))
                .collect(),
            panels: None,
        };
        Gpt2 {
            wte,
            wpe: normal(vec![self.n_positions, e]),
            h: (0..self.n_layer)
                .map(|_| Block {
                    ln_1: layer_norm(),
                    attn: Attention {
                        c_attn: conv(e, 3 * e),
                        c_proj: conv(e, e),
                        n_head: self.n_head,
                    },
                    ln_2: layer_norm(),
                    mlp: Mlp {
                        c_fc: conv(e, self.n_inner),
                        c_proj: conv(self.n_inner, e),
                    },
                })
                .collect(),
            ln_f: layer_norm(),
            vocab_size: self.vocab_size,
            n_positions: self.n_positions,
        }
    }
}

impl Gpt2 {
    /// The device the weights live on.
    pub fn device(&self) -> Device {
        self.wte.device()
    }

    /// The model with its products' weights in `precision` (see [`Precision`]), or why
    /// its device cannot run that.
    pub fn with_precision(mut self, precision: Precision) -> Result<Self, PrecisionError> {
        precision.check(&self.device())?;
        let dtype = precision.float_dtype();
        let cast = |p: &Param<Tensor<2>>| Param::from_tensor(to_f32(p.val()).cast(dtype));
        for conv in self.h.iter_mut().flat_map(Block::projections_mut) {
            conv.weight = cast(&conv.weight);
        }
        Ok(self)
    }

    /// The model with its blocks' weights and `wteᵀ` packed into panels, as the loader packs them
    /// on the browser's CPU backend ([`panel_product::packs_weights_on`]); natively this is how the
    /// tests reach that path.
    ///
    /// [`panel_product::packs_weights_on`]: super::panel_product::packs_weights_on
    pub fn with_panel_weights(mut self) -> Result<Self, ModelError> {
        let device = self.device();
        if self.wte.panels.is_none() {
            let mut rows = Vec::new();
            for chunk in &self.wte.chunks {
                rows.extend(read_f32_now(chunk.val())?);
            }
            let n_embd = rows.len() / self.vocab_size.max(1);
            self.wte = TokenEmbedding::packed(&rows, self.vocab_size, n_embd, &device)?;
        }
        for conv in self.h.iter_mut().flat_map(Block::projections_mut) {
            if conv.panels.is_some() {
                continue;
            }
            let dims = conv.dims();
            let values = read_f32_now(to_f32(conv.weight.val()))?;
            *conv = Conv1D::new(values, dims, conv.bias.clone(), true, &device)?;
        }
        Ok(self)
    }

    /// The precision of the products' weights.
    pub fn precision(&self) -> Precision {
        match self.h.first().map(|b| b.attn.c_attn.weight.val().dtype()) {
            Some(DType::F16) => Precision::F16,
            _ => Precision::F32,
        }
    }

    /// Number of transformer blocks.
    pub fn n_layer(&self) -> usize {
        self.h.len()
    }

    /// An empty cache for `batch` rows of up to `capacity` tokens each, optionally continuing
    /// a shared prefix (every row its first segment).
    pub fn new_cache(
        &self,
        prefix: Option<SharedPrefix>,
        batch: usize,
        capacity: usize,
    ) -> KvCache {
        self.cache_on_segments(prefix, vec![0; batch], capacity)
    }

    /// An empty cache whose row r continues segment `row_segments[r]` of a joined `prefix`
    /// ([`KvCache::into_joined_prefix`]): several contexts' continuations in one batch.
    pub fn new_cache_on_segments(
        &self,
        prefix: SharedPrefix,
        row_segments: Vec<usize>,
        capacity: usize,
    ) -> Result<KvCache, ModelError> {
        let segments = prefix.segments().len();
        if let Some(&segment) = row_segments.iter().find(|&&s| s >= segments) {
            return Err(ModelError::NoSuchSegment { segment, segments });
        }
        Ok(self.cache_on_segments(Some(prefix), row_segments, capacity))
    }

    fn cache_on_segments(
        &self,
        prefix: Option<SharedPrefix>,
        row_segments: Vec<usize>,
        capacity: usize,
    ) -> KvCache {
        let batch = row_segments.len();
        let device = self.device();
        // A position is read only after a step has written it, so a GPU's cache need not be
        // cleared first (one fill kernel per block saved); the CPU's is, as reading memory
        // never written would be undefined there.
        let uncleared = kernels::runs_on(&device);
        let layers = self
            .h
            .iter()
            .map(|block| {
                let n_head = block.attn.n_head;
                let head_dim = block.attn.c_proj.dims()[0] / n_head;
                let shape = [batch, 2 * n_head, capacity.max(1), head_dim];
                LayerCache {
                    keys_values: if uncleared {
                        Tensor::empty(shape, &device)
                    } else {
                        Tensor::zeros(shape, &device)
                    },
                }
            })
            .collect();
        KvCache {
            prefix,
            row_segments,
            layers,
            batch,
            capacity,
            len: 0,
        }
    }

    /// Builds the `[batch, seq]` id tensor, checking ids and lengths.
    pub fn token_tensor(&self, rows: &[Vec<u32>]) -> Result<Tensor<2, Int>, ModelError> {
        let seq = rows.first().map_or(0, Vec::len);
        if seq == 0 {
            return Err(ModelError::EmptyInput);
        }
        let mut flat = Vec::with_capacity(rows.len() * seq);
        for row in rows {
            if row.len() != seq {
                return Err(ModelError::RaggedBatch);
            }
            for &id in row {
                if id as usize >= self.vocab_size {
                    return Err(ModelError::TokenOutOfRange {
                        id,
                        vocab_size: self.vocab_size,
                    });
                }
                flat.push(id as i64);
            }
        }
        Ok(Tensor::from_data(
            TensorData::new(flat, [rows.len(), seq]),
            &self.device(),
        ))
    }

    /// Full forward pass without a cache.
    ///
    /// # Shapes
    /// - tokens `[batch, seq]` → logits `[batch, seq, vocab_size]`
    pub fn forward(&self, tokens: Tensor<2, Int>) -> Result<Tensor<3>, ModelError> {
        let [batch, seq] = tokens.dims();
        let mut cache = self.new_cache(None, batch, seq);
        let hidden = self.forward_cached(tokens, &mut cache)?;
        self.logits(hidden)
    }

    /// Runs `tokens` after what `cache` already holds, appends their keys and values to it, and
    /// returns the final hidden states (after `ln_f`). Rows of different lengths can share a
    /// call by right-padding: causal masking keeps every real position independent of the
    /// padding after it.
    ///
    /// # Shapes
    /// - tokens `[batch, seq]` → hidden `[batch, seq, n_embd]`
    pub fn forward_cached(
        &self,
        tokens: Tensor<2, Int>,
        cache: &mut KvCache,
    ) -> Result<Tensor<3>, ModelError> {
        let [batch, seq] = tokens.dims();
        if seq == 0 {
            return Err(ModelError::EmptyInput);
        }
        if batch != cache.batch {
            return Err(ModelError::BatchMismatch {
                got: batch,
                expected: cache.batch,
            });
        }
        let starts = cache.positions();
        let latest = starts.iter().copied().max().unwrap_or(0);
        if latest + seq > self.n_positions {
            return Err(ModelError::ContextTooLong {
                needed: latest + seq,
                max: self.n_positions,
            });
        }
        if cache.len + seq > cache.capacity {
            return Err(ModelError::CacheFull {
                needed: cache.len + seq,
                capacity: cache.capacity,
            });
        }
        let mut x = self
            .wte
            .forward_plus(tokens, self.position_embeddings(&starts, seq))?;

        let mask = causal_mask(cache.len, seq, &self.device());
        let prefix_mask = cache
            .prefix
            .as_ref()
            .and_then(|p| p.mask(&cache.row_segments, &self.device()));
        let layers = std::mem::take(&mut cache.layers);
        let mut updated = Vec::with_capacity(layers.len());
        for (i, (block, layer)) in self.h.iter().zip(layers).enumerate() {
            let prefix = cache.prefix.as_ref().map(|p| &p.layers[i]);
            let step = CacheStep {
                past: cache.len,
                prefix,
                prefix_mask: prefix_mask.clone(),
                mask: mask.clone(),
            };
            // A failed block leaves the cache without its layers; callers drop it with the error.
            let (out, layer) = block.forward_cached(x, layer, step)?;
            x = out;
            updated.push(layer);
        }
        cache.layers = updated;
        cache.len += seq;
        Ok(self.ln_f.forward(x))
    }

    /// Position embeddings of `seq` tokens per row from each row's start.
    ///
    /// # Shapes
    /// - `[1, seq, n_embd]` when every row starts at the same position, else `[batch, seq, n_embd]`
    fn position_embeddings(&self, starts: &[usize], seq: usize) -> Tensor<3> {
        let wpe = self.wpe.val();
        let n_embd = wpe.dims()[1];
        match starts {
            [first, rest @ ..] if rest.iter().any(|s| s != first) => {
                let index: Vec<i64> = starts
                    .iter()
                    .flat_map(|&s| (s..s + seq).map(|p| p as i64))
                    .collect();
                let index = Tensor::<1, Int>::from_data(
                    TensorData::new(index, [starts.len() * seq]),
                    &self.device(),
                );
                wpe.select(0, index).reshape([starts.len(), seq, n_embd])
            }
            _ => {
                let start = starts.first().copied().unwrap_or(0);
                wpe.slice([start..start + seq, 0..n_embd]).unsqueeze::<3>()
            }
        }
    }

    /// The tied LM head: hidden states times `wteᵀ`.
    ///
    /// # Shapes
    /// - hidden `[batch, seq, n_embd]` → logits `[batch, seq, vocab_size]`
    pub fn logits(&self, hidden: Tensor<3>) -> Result<Tensor<3>, ModelError> {
        self.wte.logits(hidden)
    }

    /// Logits at the last position of each row.
    ///
    /// # Shapes
    /// - hidden `[batch, seq, n_embd]` → logits `[batch, vocab_size]`
    pub fn last_logits(&self, hidden: Tensor<3>) -> Result<Tensor<2>, ModelError> {
        let [batch, seq, n_embd] = hidden.dims();
        let last = hidden.slice([0..batch, seq - 1..seq, 0..n_embd]);
        Ok(self.logits(last)?.reshape([batch, self.vocab_size]))
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

/// What one block needs besides its input to extend the cache by a step.
struct CacheStep<'a> {
    /// Own tokens already cached per row.
    past: usize,
    /// Shared prefix keys and values of this block, `[1, n_head, prefix_len, head_dim]` each.
    prefix: Option<&'a (Tensor<4>, Tensor<4>)>,
    /// Hides other contexts' segments of a joined prefix, `[batch, 1, 1, prefix_len]`.
    prefix_mask: Option<Tensor<4>>,
    /// Causal mask over own keys (see [`causal_mask`]).
    mask: Option<Tensor<4>>,
}

impl Block {
    /// The block's four weighted projections: attention's two, then the MLP's.
    fn projections_mut(&mut self) -> [&mut Conv1D; 4] {
        [
            &mut self.attn.c_attn,
            &mut self.attn.c_proj,
            &mut self.mlp.c_fc,
            &mut self.mlp.c_proj,
        ]
    }

    fn forward_cached(
        &self,
        x: Tensor<3>,
        layer: LayerCache,
        step: CacheStep,
    ) -> Result<(Tensor<3>, LayerCache), ModelError> {
        let (x, layer) = self
            .attn
            .forward_cached(self.ln_1.forward(x.clone()), x, layer, step)?;
        let hidden = self
            .mlp
            .c_fc
            .forward_then(self.ln_2.forward(x.clone()), After::Gelu)?;
        Ok((
            self.mlp
                .c_proj
                .forward_then(hidden, After::Residual(Box::new(x)))?,
            layer,
        ))
    }
}

impl Attention {
    /// Returns `residual` plus the attention's output.
    ///
    /// # Shapes
    /// - x and residual `[batch, seq, n_embd]` → `[batch, seq, n_embd]`
    /// - prefix keys/values `[1, n_head, prefix_len, head_dim]`, broadcast over the batch
    /// - prefix mask (joined contexts) `[batch, 1, 1, prefix_len]`, broadcast over heads and queries
    fn forward_cached(
        &self,
        x: Tensor<3>,
        residual: Tensor<3>,
        layer: LayerCache,
        step: CacheStep,
    ) -> Result<(Tensor<3>, LayerCache), ModelError> {
        let CacheStep {
            past,
            prefix,
            prefix_mask,
            mask,
        } = step;
        let [batch, seq, n_embd] = x.dims();
        let n_head = self.n_head;
        let head_dim = n_embd / n_head;
        let scale = 1.0 / (head_dim as f64).sqrt();

        // With the attention kernel the projection's bias is added in the kernel, so the cache
        // holds keys and values without it (every entry is written here, by the same path).
        let with_kernel =
            kernels::attention_runs_on(&x.device(), head_dim) && self.c_attn.panels.is_none();
        let projected = if with_kernel {
            self.c_attn.product(x)
        } else {
            self.c_attn.forward(x)?
        };
        let (q, new_keys_values) = split_heads(projected, n_head);

        let total = past + seq;
        let layer = LayerCache {
            keys_values: layer.keys_values.slice_assign(
                [0..batch, 0..2 * n_head, past..total, 0..head_dim],
                new_keys_values,
            ),
        };
        let (own_k, own_v) = layer.keys_and_values(0..batch, total);

        if with_kernel {
            let context = kernels::attention(StepAttention {
                query: q,
                own_keys: own_k,
                own_values: own_v,
                prefix: prefix.cloned(),
                prefix_mask,
                bias: Some(self.c_attn.bias.val()),
                past,
                scale: scale as f32,
            });
            let output = self
                .c_proj
                .forward_then(context, After::Residual(Box::new(residual)))?;
            return Ok((output, layer));
        }
        let context = attend(
            AttentionInputs {
                q,
                own_k,
                own_v,
                prefix,
                prefix_mask,
                mask,
                scale,
            },
            MAX_PRODUCT_BATCH,
        );
        let output = self
            .c_proj
            .forward_then(merge_heads(context), After::Residual(Box::new(residual)))?;
        Ok((output, layer))
    }
}

/// Queries, and keys and values together (the cache's layout), per head from the fused
/// projection, as views of it: no copies.
///
/// With one new token per row (every decoding step) the heads are read straight off the
/// projection, `[batch, 3·n_head, 1, head_dim]` being its own memory order, and the query is a
/// layout cubecl's matrix product takes as it is. Several tokens need a transpose, which stays a
/// view here: the keys and values go into the cache as they are, and only the query is copied,
/// inside its product (which needs each batch stride at least the row stride). Slicing
/// `[.., n_embd]` first and reshaping the slice, as before, cost a copy for each of the three:
/// burn's reshape copies a strided tensor that has a dimension of size 1 (one row, or one token).
///
/// # Shapes
/// - qkv `[batch, seq, 3·n_embd]` → queries `[batch, n_head, seq, head_dim]`, keys and values
///   `[batch, 2·n_head, seq, head_dim]`
fn split_heads(qkv: Tensor<3>, n_head: usize) -> (Tensor<4>, Tensor<4>) {
    let [batch, seq, width] = qkv.dims();
    let head_dim = width / (3 * n_head);
    let heads = if seq == 1 {
        qkv.reshape([batch, 3 * n_head, 1, head_dim])
    } else {
        qkv.reshape([batch, seq, 3 * n_head, head_dim])
            .swap_dims(1, 2)
    };
    (
        heads.clone().narrow(1, 0, n_head),
        heads.narrow(1, n_head, 2 * n_head),
    )
}

/// The inverse of [`split_heads`] for the attention's output: the heads side by side again.
///
/// # Shapes
/// - `[batch, n_head, seq, head_dim]` → `[batch, seq, n_head·head_dim]`
fn merge_heads(context: Tensor<4>) -> Tensor<3> {
    let [batch, n_head, seq, head_dim] = context.dims();
    if seq == 1 {
        context.reshape([batch, 1, n_head * head_dim])
    } else {
        context
            .swap_dims(1, 2)
            .reshape([batch, seq, n_head * head_dim])
    }
}

/// The most batch entries (rows × heads) one attention product may span. A GPU matrix product
/// takes one dispatch dimension for its batch, and WebGPU guarantees only 65535 workgroups per
/// dimension (Vulkan on an H100 refused 73728: 8 contexts' sampling trees in one pass).
const MAX_PRODUCT_BATCH: usize = 65_535;

/// One attention step's tensors.
struct AttentionInputs<'a> {
    /// `[batch, n_head, seq, head_dim]`
    q: Tensor<4>,
    /// `[batch, n_head, total, head_dim]`: own keys and values, cached and new
    own_k: Tensor<4>,
    own_v: Tensor<4>,
    /// `[1, n_head, prefix_len, head_dim]` each, broadcast over the batch
    prefix: Option<&'a (Tensor<4>, Tensor<4>)>,
    /// `[batch, 1, 1, prefix_len]`
    prefix_mask: Option<Tensor<4>>,
    /// `[1 or batch, 1, seq, total]`
    mask: Option<Tensor<4>>,
    scale: f64,
}

/// softmax(q·kᵀ·scale + mask)·v over the shared prefix's keys and the row's own, in slices of
/// rows small enough that no product spans more than `max_batch` batch entries.
///
/// # Shapes
/// - see [`AttentionInputs`] → `[batch, n_head, seq, head_dim]`
fn attend(inputs: AttentionInputs, max_batch: usize) -> Tensor<4> {
    let [batch, n_head, _, _] = inputs.q.dims();
    let rows_per_slice = (max_batch / n_head.max(1)).max(1);
    if batch <= rows_per_slice {
        return attend_rows(inputs);
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
            attend_rows(AttentionInputs {
                q: rows(&inputs.q, start, len),
                own_k: rows(&inputs.own_k, start, len),
                own_v: rows(&inputs.own_v, start, len),
                prefix: inputs.prefix,
                prefix_mask: inputs.prefix_mask.as_ref().map(|m| rows(m, start, len)),
                mask: inputs.mask.as_ref().map(|m| rows(m, start, len)),
                scale: inputs.scale,
            })
        })
        .collect();
    Tensor::cat(slices, 0)
}

fn attend_rows(inputs: AttentionInputs) -> Tensor<4> {
    let AttentionInputs {
        q,
        own_k,
        own_v,
        prefix,
        prefix_mask,
        mask,
        scale,
    } = inputs;
    let [batch, n_head, seq, _] = q.dims();
    let total = own_k.dims()[2];
    let mut own_scores = q.clone().matmul(own_k.swap_dims(2, 3)) * scale;
    if let Some(mask) = mask {
        own_scores = own_scores + mask;
    }
    match prefix {
        None => softmax(own_scores, 3).matmul(own_v),
        Some((prefix_k, prefix_v)) => {
            let prefix_len = prefix_k.dims()[2];
            let mut prefix_scores = q.matmul(prefix_k.clone().swap_dims(2, 3)) * scale;
            if let Some(mask) = prefix_mask {
                prefix_scores = prefix_scores + mask;
            }
            let weights = softmax(Tensor::cat(vec![prefix_scores, own_scores], 3), 3);
            let to_prefix = weights
                .clone()
                .slice([0..batch, 0..n_head, 0..seq, 0..prefix_len]);
            let to_own =
                weights.slice([0..batch, 0..n_head, 0..seq, prefix_len..prefix_len + total]);
            to_prefix.matmul(prefix_v.clone()) + to_own.matmul(own_v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::error::READBACK_FAILED;

    /// Chunking `wte` must not change lookups or logits: compare 1 chunk against uneven chunks.
    #[test]
    fn a_readback_failure_says_so_in_its_first_words() {
        let text = ModelError::Readback("mapping failed".into()).to_string();
        assert!(text.starts_with(READBACK_FAILED), "{text}");
    }

    /// The heads read off the projection as views hold what slicing it into queries, keys and
    /// values and splitting each into heads gave, for single and several rows and tokens; merging
    /// the queries' heads gives their third of the projection back.
    #[test]
    fn heads_split_and_merged_as_views_equal_slices_of_the_projection() {
        let device = Device::flex();
        let (n_head, head_dim) = (2, 3);
        let n_embd = n_head * head_dim;
        let values = |t: Tensor<4>| t.into_data().try_to_vec::<f32>().unwrap();
        for (batch, seq) in [(1, 1), (3, 1), (1, 4), (2, 3)] {
            let n = batch * seq * 3 * n_embd;
            let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let qkv =
                Tensor::<3>::from_data(TensorData::new(data, [batch, seq, 3 * n_embd]), &device);
            let (q, kv) = split_heads(qkv.clone(), n_head);
            let k = kv.clone().narrow(1, 0, n_head);
            let v = kv.narrow(1, n_head, n_head);
            for (part, got) in [q.clone(), k, v].into_iter().enumerate() {
                let expected = qkv
                    .clone()
                    .slice([0..batch, 0..seq, part * n_embd..(part + 1) * n_embd])
                    .reshape([batch, seq, n_head, head_dim])
                    .swap_dims(1, 2);
                assert_eq!(got.dims(), [batch, n_head, seq, head_dim]);
                assert_eq!(values(got), values(expected), "part {part}, {batch}×{seq}");
            }
            let merged = merge_heads(q).into_data().try_to_vec::<f32>().unwrap();
            let first_third = qkv
                .slice([0..batch, 0..seq, 0..n_embd])
                .into_data()
                .try_to_vec::<f32>()
                .unwrap();
            assert_eq!(merged, first_third, "{batch}×{seq}");
        }
    }

    /// Attention over more batch entries than one product may span runs in slices of rows;
    /// slicing (uneven, with per-row and broadcast masks) must not change the result.
    #[test]
    fn attention_in_slices_of_rows_equals_one_product() {
        let device = Device::flex();
        let tensor = |dims: [usize; 4], seed: f32| {
            let n: usize = dims.iter().product();
            let values: Vec<f32> = (0..n).map(|i| (i as f32 * 0.61 + seed).sin()).collect();
            Tensor::<4>::from_data(TensorData::new(values, dims), &device)
        };
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
        let inputs = || AttentionInputs {
            q: tensor([batch, n_head, seq, head_dim], 1.1),
            own_k: tensor([batch, n_head, total, head_dim], 1.9),
            own_v: tensor([batch, n_head, total, head_dim], 2.3),
            prefix: Some(&prefix),
            prefix_mask: Some(prefix_mask.clone()),
            mask: causal_mask(total - seq, seq, &device),
            scale: 0.5,
        };
        let whole = attend(inputs(), MAX_PRODUCT_BATCH);
        // Two rows (four batch entries) per product: slices of 2, 2 and 1 rows.
        let sliced = attend(inputs(), 2 * n_head);
        assert_eq!(sliced.dims(), [batch, n_head, seq, head_dim]);
        let (a, b) = (
            whole.into_data().try_to_vec::<f32>().unwrap(),
            sliced.into_data().try_to_vec::<f32>().unwrap(),
        );
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-6, "{x} vs {y}");
        }
    }

    #[test]
    fn chunked_token_embedding_equals_single_matrix() {
        let device = Device::flex();
        let (vocab, n_embd) = (11, 3);
        let values: Vec<f32> = (0..vocab * n_embd)
            .map(|i| (i as f32 * 0.37).sin())
            .collect();
        let whole =
            TokenEmbedding::from_rows_in_chunks(values.clone(), vocab, n_embd, vocab, &device);
        let split = TokenEmbedding::from_rows_in_chunks(values, vocab, n_embd, 4, &device);
        assert_eq!((whole.chunks.len(), split.chunks.len()), (1, 3));
        let ids = Tensor::<2, Int>::from_data(
            TensorData::new(vec![0i64, 3, 4, 7, 8, 10], [2, 3]),
            &device,
        );
        let a = whole.forward(ids.clone()).unwrap();
        let b = split.forward(ids).unwrap();
        let (a, b) = (
            a.into_data().try_to_vec::<f32>().unwrap(),
            b.into_data().try_to_vec::<f32>().unwrap(),
        );
        assert_eq!(a, b);
        let hidden = Tensor::<3>::from_data(
            TensorData::new(vec![0.5f32, -1.0, 2.0, 1.5, 0.25, -0.75], [1, 2, 3]),
            &device,
        );
        let la = whole
            .logits(hidden.clone())
            .unwrap()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        let lb = split
            .logits(hidden)
            .unwrap()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        assert_eq!(la.len(), 2 * vocab);
        for (x, y) in la.iter().zip(&lb) {
            assert!((x - y).abs() < 1e-6, "{x} vs {y}");
        }
    }
}
