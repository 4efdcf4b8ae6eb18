//! The decoder-only transformer of every family (GPT-2, Radford et al. 2019; GPT-NeoX; Llama) as
//! burn modules: the configuration's [`TransformerConfig::init`], the model [`Transformer`] and
//! its forward passes, with and without a cache. The blocks are in
//! [`super::block`], the operations every module calls (one body per backend each) in
//! [`super::ops`]; nothing here asks which device it runs on.
//!
//! Field names mirror GPT-2's Hugging Face checkpoint keys (`wte`, `wpe`, `h.{i}.ln_1`,
//! `h.{i}.attn.c_attn`, `h.{i}.attn.c_proj`, `h.{i}.mlp.c_fc`, `h.{i}.mlp.c_proj`, `ln_f`), so the
//! loader's key table is just the module tree written out.

use burn::module::{Module, Param};
use burn::tensor::{Device, Int, Tensor, TensorData};

use super::block::{Block, CacheStep, Norm, Projections, Stream};
use super::config::TransformerConfig;
use super::error::ModelError;
use super::family::NormKind;
use super::kv_cache::{KvCache, LayerCache, SharedPrefix};
use super::ops::backend::Backend;
use super::ops::draw::DrawTokens;
use super::ops::embedding::TokenEmbedding;
use super::ops::past::Past;
use super::ops::projection::Conv1D;
use super::ops::rotary::{RotaryAngles, RotaryTable};
use super::readback::read_f32_now;

/// Where a step's positions come from.
pub(super) enum Placement<'a> {
    /// The cache's counts, on the host: every pass but a replayed step's.
    Host,
    /// Device buffers that a step recorded once rewrites before each replay.
    Device(DevicePositions<'a>),
}

/// A replayed step's positions in device buffers, and what else it computes once.
pub(super) struct DevicePositions<'a> {
    /// Each row's position, `[batch]`.
    pub positions: &'a Tensor<1, Int>,
    /// The own keys cached per row, `[1]` (see [`Past::on_device`]).
    pub past: &'a Tensor<1>,
    /// The cache's prefix mask, made before the recording (it is uploaded from the host).
    pub prefix_mask: Option<&'a Tensor<4>>,
    /// The family's rotary angles of every position, where it has them
    /// ([`RotaryTable::angles_of_every_position`]).
    pub angles: Option<&'a RotaryAngles>,
}

/// A causal language model: embeddings, the family's blocks, a final norm and the head (tied to
/// the token embedding `wte` unless the family has its own).
#[derive(Module, Debug)]
pub struct Transformer {
    /// Token embedding, also the (transposed) LM head.
    pub wte: TokenEmbedding,
    /// Position embedding `[n_positions, n_embd]` (none where the family turns queries and keys
    /// by rotary embeddings instead).
    pub wpe: Option<Param<Tensor<2>>>,
    pub h: Vec<Block>,
    pub ln_f: Norm,
    /// The LM head where it is not `wte` (GPT-NeoX's `embed_out`, `[vocab_size, n_embd]`).
    pub lm_head: Option<TokenEmbedding>,
    pub vocab_size: usize,
    pub n_positions: usize,
    /// Whose bodies the ops run, chosen at load with the weights' layout.
    #[module(skip)]
    pub backend: Backend,
}

impl TransformerConfig {
    /// A model with GPT-2's initialisation (N(0, 0.02) weights from the device's generator, zero
    /// biases, unit LayerNorm gains), its weights laid out for `device`'s backend as the loader
    /// lays them out, which reads them on the host: a GPU in the browser, where reads are async,
    /// gives a readback error. Real use loads a checkpoint instead (see `loader`).
    ///
    /// ```
    /// use burn::tensor::Device;
    /// let config = clozelab::model::TransformerConfig {
    ///     vocab_size: 11, n_positions: 8, n_embd: 6, n_layer: 2, n_head: 2, n_inner: 24,
    ///     layer_norm_epsilon: 1e-5, family: clozelab::model::Family::Gpt2,
    /// };
    /// let model = config.init(&Device::flex()).unwrap();
    /// let logits = model.forward(model.token_tensor(&[vec![1, 2, 3]]).unwrap()).unwrap();
    /// assert_eq!(logits.dims(), [1, 3, 11]);
    /// ```
    pub fn init(&self, device: &Device) -> Result<Transformer, ModelError> {
        let backend = Backend::of(device);
        // Read on the host, where every layout is made from.
        let normal = |shape: [usize; 2]| -> Result<Vec<f32>, ModelError> {
            let normal = burn::tensor::Distribution::Normal(0.0, 0.02);
            read_f32_now(Tensor::<2>::random(shape, normal, device))
        };
        let zeros = |n: usize| Param::from_tensor(Tensor::zeros([n], device));
        let norm = || Norm {
            weight: Param::from_tensor(Tensor::ones([self.n_embd], device)),
            bias: match self.family.norm() {
                NormKind::Layer => Some(zeros(self.n_embd)),
                NormKind::Rms => None,
            },
            epsilon: self.layer_norm_epsilon,
        };
        let conv = |n_in: usize, n_out: usize| -> Result<Conv1D, ModelError> {
            let weight = normal([n_in, n_out])?;
            Ok(Conv1D::new(
                backend,
                weight,
                [n_in, n_out],
                zeros(n_out),
                device,
            )?)
        };
        let e = self.n_embd;
        let table = |rows: usize| -> Result<TokenEmbedding, ModelError> {
            let values = normal([rows, e])?;
            Ok(TokenEmbedding::from_rows(backend, values, rows, e, device)?)
        };
        let rotary = self.family.rotary()?;
        let mut h = Vec::with_capacity(self.n_layer);
        for _ in 0..self.n_layer {
            let projections = Projections {
                c_attn: conv(e, self.qkv_width())?,
                attn_proj: conv(e, e)?,
                c_fc: conv(e, self.mlp_width())?,
                mlp_proj: conv(self.n_inner, e)?,
            };
            h.push(Block::new(
                &self.family,
                self.n_head,
                rotary.clone(),
                [norm(), norm()],
                projections,
            ));
        }
        let wpe = match rotary {
            Some(_) => None,
            None => Some(Param::from_tensor(Tensor::from_data(
                TensorData::new(normal([self.n_positions, e])?, [self.n_positions, e]),
                device,
            ))),
        };
        Ok(Transformer {
            wte: table(self.vocab_size)?,
            wpe,
            h,
            ln_f: norm(),
            lm_head: match self.family.tied_head() {
                true => None,
                false => Some(table(self.vocab_size)?),
            },
            vocab_size: self.vocab_size,
            n_positions: self.n_positions,
            backend,
        })
    }
}

impl Transformer {
    /// The device the weights live on.
    pub fn device(&self) -> Device {
        self.wte.device()
    }

    /// The rotary table every block turns its queries and keys by, where the family has one.
    pub fn rotary(&self) -> Option<&RotaryTable> {
        self.h.first().and_then(|block| block.attn.rotary.as_ref())
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
        let layers = self
            .h
            .iter()
            .map(|block| {
                let head_dim = block.attn.c_proj.dims()[0] / block.attn.n_head;
                let kv_heads = block.attn.kv_heads;
                LayerCache::empty(self.backend, [batch, kv_heads, capacity, head_dim], &device)
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
        let seq = tokens.dims()[1];
        let hidden = self.forward_placed(tokens, cache, Placement::Host)?;
        cache.len += seq;
        Ok(hidden)
    }

    /// [`Self::forward_cached`] with the step's positions where `placement` says, leaving the
    /// cache's count of tokens to the caller.
    pub(super) fn forward_placed(
        &self,
        tokens: Tensor<2, Int>,
        cache: &mut KvCache,
        placement: Placement,
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
        let table = self.rotary();
        let (positions, prefix_mask, past, angles) = match placement {
            Placement::Host => (
                self.position_embeddings(&starts, seq),
                cache
                    .prefix
                    .as_ref()
                    .and_then(|p| p.mask(&cache.row_segments, &self.device())),
                Past::on_host(cache.len),
                // Every block turns its queries and keys by the same angles.
                table.map(|table| table.angles(&starts, seq, &self.device())),
            ),
            Placement::Device(on_device) => {
                let positions = self.position_embeddings_at(on_device.positions, batch, seq)?;
                let past = Past {
                    count: cache.len,
                    on_device: Some(on_device.past.clone()),
                };
                let angles = match (table, on_device.angles) {
                    (None, _) => None,
                    (Some(_), Some(every)) => Some(every.at(on_device.positions)),
                    (Some(_), None) => {
                        return Err(ModelError::NotReplayable(
                            "the family's rotary angles were not made for every position",
                        ));
                    }
                };
                (positions, on_device.prefix_mask.cloned(), past, angles)
            }
        };
        let x = self.wte.forward_plus(self.backend, tokens, positions)?;
        let layers = std::mem::take(&mut cache.layers);
        let mut updated = Vec::with_capacity(layers.len());
        let mut stream = Stream { x, normed: None };
        for (i, (block, layer)) in self.h.iter().zip(layers).enumerate() {
            let prefix = cache.prefix.as_ref().map(|p| &p.layers[i]);
            let step = CacheStep {
                backend: self.backend,
                angles: angles.as_ref(),
                past: past.clone(),
                prefix,
                prefix_mask: prefix_mask.clone(),
            };
            // Each block's last projection also norms its output for whoever reads it next.
            let next = self.h.get(i + 1).map_or(&self.ln_f, |b| &b.ln_1);
            // A failed block leaves the cache without its layers; callers drop it with the error.
            let (out, layer) = block.forward_cached(stream, Some(next), layer, step)?;
            stream = out;
            updated.push(layer);
        }
        cache.layers = updated;
        Ok(match stream.normed {
            Some(normed) => normed,
            None => self.ln_f.forward(self.backend, stream.x),
        })
    }

    /// Position embeddings of `seq` tokens per row from each row's start.
    ///
    /// # Shapes
    /// - `[1, seq, n_embd]` when every row starts at the same position, else `[batch, seq, n_embd]`
    fn position_embeddings(&self, starts: &[usize], seq: usize) -> Tensor<3> {
        let Some(wpe) = &self.wpe else {
            return Tensor::zeros([1, seq, self.wte.width()], &self.device());
        };
        let wpe = wpe.val();
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

    /// Position embeddings of one token per row, at the positions a device buffer holds (zeros
    /// where the family has none, as [`Self::position_embeddings`]).
    ///
    /// # Shapes
    /// - positions `[batch]` → `[batch, 1, n_embd]`
    fn position_embeddings_at(
        &self,
        positions: &Tensor<1, Int>,
        batch: usize,
        seq: usize,
    ) -> Result<Tensor<3>, ModelError> {
        if seq != 1 || positions.dims()[0] != batch {
            return Err(ModelError::NotReplayable(
                "a replayed step takes one token per row",
            ));
        }
        let Some(wpe) = &self.wpe else {
            return Ok(Tensor::zeros([1, seq, self.wte.width()], &self.device()));
        };
        let wpe = wpe.val();
        let n_embd = wpe.dims()[1];
        Ok(wpe.select(0, positions.clone()).reshape([batch, 1, n_embd]))
    }

    /// The token embeddings of `tokens` (without positions).
    ///
    /// # Shapes
    /// - tokens `[batch, seq]` → `[batch, seq, n_embd]`
    pub fn token_embeddings(&self, tokens: Tensor<2, Int>) -> Result<Tensor<3>, ModelError> {
        self.wte.forward(self.backend, tokens)
    }

    /// The tied LM head: hidden states times `wteᵀ`.
    ///
    /// # Shapes
    /// - hidden `[batch, seq, n_embd]` → logits `[batch, seq, vocab_size]`
    pub fn logits(&self, hidden: Tensor<3>) -> Result<Tensor<3>, ModelError> {
        self.lm_head
            .as_ref()
            .unwrap_or(&self.wte)
            .logits(self.backend, hidden)
    }

    /// Tokens drawn from `logits` by inverse CDF on the model's backend (see [`DrawTokens`]).
    ///
    /// # Shapes
    /// - logits `[rows, vocab]`, counts `rows`, uniforms `Σ counts` in [0, 1) → ids `Σ counts`
    pub async fn draw_tokens(
        &self,
        logits: Tensor<2>,
        counts: &[usize],
        uniforms: Vec<f32>,
        temperature: f64,
    ) -> Result<Vec<i64>, ModelError> {
        self.backend
            .run(DrawTokens {
                logits,
                counts: counts.to_vec(),
                uniforms,
                temperature,
            })
            .await
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
