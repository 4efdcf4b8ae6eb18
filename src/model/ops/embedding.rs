//! GPT-2's token embedding `wte`, kept in row chunks (WebGPU binds at most 128 MiB per
//! buffer), which is also the tied LM head; on the browser's CPU backend packed once as `wteᵀ`
//! for [`PanelWeight::product`] instead.
//!
//! Its ops, the lookup ([`TokenEmbedding::forward_plus`]) and the LM head
//! ([`TokenEmbedding::logits`]), have a body per backend: on a GPU one kernel per chunk
//! ([`kernels::token_embedding`]) and one product per chunk; natively on the CPU burn's
//! `embedding` and the product split over the threads; in the browser's CPU backend the packed
//! `wteᵀ`'s columns and its panel product. The reference is one chunk through burn's
//! `embedding` and `matmul` (the tests compare uneven chunks, the kernel and the panels with it).

use burn::module::{Module, Param};
use burn::tensor::{Device, Int, Tensor, TensorData};

use super::panel_product::{PanelError, PanelWeight};
use super::{Body, kernels, threaded_product};
use crate::model::error::ModelError;
use crate::model::readback::read_f32_now;

/// Largest tensor, in bytes, the model keeps in one device buffer. WebGPU guarantees only
/// 128 MiB per storage binding (lavapipe and many browsers grant no more), while GPT-2's `wte`
/// alone is 154 MB in f32, so `wte` is stored as row chunks under this budget.
pub const MAX_TENSOR_BYTES: usize = 64 << 20;

/// The token embedding `wte` (`[vocab_size, n_embd]`, checkpoint key `wte.weight`), split into
/// row chunks of at most [`MAX_TENSOR_BYTES`]; it is also the tied LM head.
#[derive(Module, Debug)]
pub struct TokenEmbedding {
    /// Consecutive row blocks of `wte`, each `[rows, n_embd]`; with `panels`, one empty
    /// `[0, n_embd]` that keeps the device.
    pub chunks: Vec<Param<Tensor<2>>>,
    /// `wteᵀ` packed in the browser's CPU backend ([`Body::BrowserCpu`]): the LM
    /// head's product and, column by column, the embedding's rows.
    #[module(skip)]
    pub panels: Option<PanelWeight>,
}

impl TokenEmbedding {
    /// Rows per chunk for a given width.
    pub fn chunk_rows(n_embd: usize) -> usize {
        (MAX_TENSOR_BYTES / (n_embd.max(1) * 4)).max(1)
    }

    /// Splits a full `[vocab, n_embd]` row-major matrix into chunks on `device`, or packs it
    /// in the browser's CPU backend ([`Body::BrowserCpu`]).
    pub fn from_rows(
        values: Vec<f32>,
        vocab: usize,
        n_embd: usize,
        device: &Device,
    ) -> Result<Self, PanelError> {
        if Body::of(device) == Body::BrowserCpu {
            return Self::packed(&values, vocab, n_embd, device);
        }
        Ok(Self::from_rows_in_chunks(
            values,
            vocab,
            n_embd,
            Self::chunk_rows(n_embd),
            device,
        ))
    }

    /// `wteᵀ` packed into panels (see [`Self::panels`]).
    pub fn packed(
        values: &[f32],
        vocab: usize,
        n_embd: usize,
        device: &Device,
    ) -> Result<Self, PanelError> {
        Ok(Self {
            chunks: vec![Param::from_tensor(Tensor::zeros([0, n_embd], device))],
            panels: Some(PanelWeight::pack_transposed(values, vocab, n_embd)?),
        })
    }

    /// As [`Self::from_rows`] with an explicit chunk height (tests use small ones).
    pub fn from_rows_in_chunks(
        values: Vec<f32>,
        vocab: usize,
        n_embd: usize,
        rows: usize,
        device: &Device,
    ) -> Self {
        let rows = rows.max(1);
        let chunks = values
            .chunks(rows * n_embd)
            .map(|block| {
                let n = block.len() / n_embd;
                Param::from_tensor(Tensor::from_data(
                    TensorData::new(block.to_vec(), [n, n_embd]),
                    device,
                ))
            })
            .collect();
        debug_assert_eq!(values.len(), vocab * n_embd);
        Self {
            chunks,
            panels: None,
        }
    }

    /// Embedding lookup: from the panels' columns where packed, on a GPU by the chunks' kernel
    /// ([`Self::forward_plus`] onto zeros), else across chunks (each chunk contributes the rows
    /// whose ids fall in it). An id outside the vocabulary is an error with the panels; the
    /// chunks clamp it (token ids are checked before, by `Gpt2::token_tensor`).
    ///
    /// # Shapes
    /// - ids `[batch, seq]` → `[batch, seq, n_embd]`
    pub fn forward(&self, ids: Tensor<2, Int>) -> Result<Tensor<3>, ModelError> {
        if let Some(packed) = &self.panels {
            return packed_rows(packed, ids);
        }
        let device = ids.device();
        if Body::of(&device) == Body::Gpu {
            let seq = ids.dims()[1];
            let width = self.chunks.first().map_or(0, |c| c.val().dims()[1]);
            return self.forward_plus(ids, Tensor::zeros([1, seq, width], &device));
        }
        if let [only] = self.chunks.as_slice() {
            return Ok(burn::tensor::module::embedding(only.val(), ids));
        }
        let mut start = 0usize;
        let mut sum: Option<Tensor<3>> = None;
        for chunk in &self.chunks {
            let rows = chunk.val().dims()[0];
            let local = ids
                .clone()
                .sub_scalar(start as i64)
                .clamp(0, rows as i64 - 1);
            let inside = ids
                .clone()
                .greater_equal_elem(start as i64)
                .bool_and(ids.clone().lower_elem((start + rows) as i64));
            let part = burn::tensor::module::embedding(chunk.val(), local)
                * inside.float().unsqueeze_dim::<3>(2);
            sum = Some(match sum {
                None => part,
                Some(acc) => acc + part,
            });
            start += rows;
        }
        Ok(sum.unwrap_or_else(|| Tensor::zeros([ids.dims()[0], ids.dims()[1], 0], &ids.device())))
    }

    /// [`Self::forward`] plus `base` (the position embeddings): on a GPU one kernel per chunk
    /// ([`kernels::token_embedding`]), which gathers and adds in one pass.
    ///
    /// # Shapes
    /// - ids `[batch, seq]`, base `[batch or 1, seq, n_embd]` → `[batch, seq, n_embd]`
    pub fn forward_plus(
        &self,
        ids: Tensor<2, Int>,
        base: Tensor<3>,
    ) -> Result<Tensor<3>, ModelError> {
        if self.panels.is_none() && Body::of(&base.device()) == Body::Gpu {
            let chunks: Vec<Tensor<2>> = self.chunks.iter().map(|c| c.val()).collect();
            return Ok(kernels::token_embedding(&chunks, ids, base));
        }
        Ok(self.forward(ids)? + base)
    }

    /// The tied LM head, `hidden · wteᵀ`: through the panels where packed, else one chunk of the
    /// vocabulary at a time.
    ///
    /// # Shapes
    /// - hidden `[batch, seq, n_embd]` → logits `[batch, seq, vocab_size]`
    pub fn logits(&self, hidden: Tensor<3>) -> Result<Tensor<3>, ModelError> {
        let [batch, seq, n_embd] = hidden.dims();
        if let Some(packed) = &self.panels {
            let device = hidden.device();
            let logits = packed.product(&read_f32_now(hidden)?, batch * seq)?;
            let vocab = packed.dims()[1];
            return Ok(Tensor::from_data(
                TensorData::new(logits, [batch, seq, vocab]),
                &device,
            ));
        }
        if Body::of(&hidden.device()) == Body::Gpu {
            // On a GPU `hidden · chunkᵀ` (the chunk read transposed in place) and the parts
            // side by side: no transposing copy of the logits.
            let rows = hidden.reshape([batch * seq, n_embd]);
            let parts: Vec<Tensor<2>> = self
                .chunks
                .iter()
                .map(|chunk| rows.clone().matmul(chunk.val().transpose()))
                .collect();
            let vocab: usize = parts.iter().map(|p| p.dims()[1]).sum();
            return Ok(Tensor::cat(parts, 1).reshape([batch, seq, vocab]));
        }
        // `chunk · hiddenᵀ`, then one transposing copy: the CPU backend's gemm is slow with few
        // output rows, so `hidden · chunkᵀ` (no copy) was slower overall (a sampling test ran
        // 28.7 s instead of 20 s); with the vocabulary as the rows it is fast.
        let rows_t = hidden.reshape([batch * seq, n_embd]).transpose();
        let parts: Vec<Tensor<2>> = self
            .chunks
            .iter()
            .map(|chunk| threaded_product::matmul(chunk.val(), rows_t.clone()))
            .collect();
        let vocab: usize = parts.iter().map(|p| p.dims()[0]).sum();
        let stacked = if parts.len() == 1 {
            parts.into_iter().next().unwrap_or(rows_t)
        } else {
            Tensor::cat(parts, 0)
        };
        Ok(stacked.transpose().reshape([batch, seq, vocab]))
    }

    pub fn device(&self) -> Device {
        // With panels the one empty chunk is still on the model's device.
        self.chunks
            .first()
            .map(|c| c.val().device())
            .unwrap_or_default()
    }
}

/// The embedding's rows for `ids` read from `wteᵀ`'s columns, on the host where the CPU backend
/// keeps them.
///
/// # Shapes
/// - ids `[batch, seq]` → `[batch, seq, n_embd]`
fn packed_rows(packed: &PanelWeight, ids: Tensor<2, Int>) -> Result<Tensor<3>, ModelError> {
    let [batch, seq] = ids.dims();
    let device = ids.device();
    let [n_embd, vocab_size] = packed.dims();
    let mut values = Vec::with_capacity(batch * seq * n_embd);
    for id in ids.into_data().iter::<i64>() {
        let column = usize::try_from(id).ok().and_then(|o| packed.column(o));
        values.extend(column.ok_or(ModelError::TokenOutOfRange {
            id: id.clamp(0, u32::MAX as i64) as u32,
            vocab_size,
        })?);
    }
    Ok(Tensor::from_data(
        TensorData::new(values, [batch, seq, n_embd]),
        &device,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunking `wte` must not change lookups or logits: compare 1 chunk against uneven chunks.
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
        let read = |t: Tensor<3>| t.into_data().try_to_vec::<f32>().unwrap();
        let a = read(whole.forward(ids.clone()).unwrap());
        let b = read(split.forward(ids).unwrap());
        assert_eq!(a, b);
        let hidden = Tensor::<3>::from_data(
            TensorData::new(vec![0.5f32, -1.0, 2.0, 1.5, 0.25, -0.75], [1, 2, 3]),
            &device,
        );
        let la = read(whole.logits(hidden.clone()).unwrap());
        let lb = read(split.logits(hidden).unwrap());
        assert_eq!(la.len(), 2 * vocab);
        for (x, y) in la.iter().zip(&lb) {
            assert!((x - y).abs() < 1e-6, "{x} vs {y}");
        }
    }
}
