//! GPT-2's token embedding `wte`, kept in row chunks (WebGPU binds at most 128 MiB per
//! buffer), which is also the tied LM head; on the browser's CPU backend packed once as `wteᵀ`
//! for [`PanelWeight::product`] instead.
//!
//! Its ops, the lookup ([`EmbedTokens`]) and the LM head ([`LmHead`]), have a body per backend:
//! on a GPU one kernel per chunk ([`kernels::token_embedding`]) and one product per chunk;
//! natively on the CPU burn's `embedding` and the product split over the threads; in the
//! browser's CPU backend the packed `wteᵀ`'s columns and its panel product. The reference body
//! is the chunks joined into one table through burn's `embedding` and `matmul`. Which layout the
//! table has is chosen with the backend, at load ([`StoreEmbedding`]).

use burn::module::{Module, Param};
use burn::tensor::{Device, Int, Tensor, TensorData};

use super::backend::{Backend, Op};
use super::panel_product::{PanelError, PanelWeight};
use super::{kernels, threaded_product};
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
    /// `wteᵀ` packed in the browser's CPU backend ([`Backend::BrowserCpu`]): the LM
    /// head's product and, column by column, the embedding's rows.
    #[module(skip)]
    pub panels: Option<PanelWeight>,
}

impl TokenEmbedding {
    /// Rows per chunk for a given width.
    pub fn chunk_rows(n_embd: usize) -> usize {
        (MAX_TENSOR_BYTES / (n_embd.max(1) * 4)).max(1)
    }

    /// The table from a full `[vocab, n_embd]` row-major matrix on `device`, stored as
    /// `backend`'s bodies read it (see [`StoreEmbedding`]).
    pub fn from_rows(
        backend: Backend,
        values: Vec<f32>,
        vocab: usize,
        n_embd: usize,
        device: &Device,
    ) -> Result<Self, PanelError> {
        backend.run(StoreEmbedding {
            values,
            vocab,
            n_embd,
            device: device.clone(),
        })
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

    /// `ids`' rows on `backend` (see [`EmbedTokens`], here onto zeros).
    ///
    /// # Shapes
    /// - ids `[batch, seq]` → `[batch, seq, n_embd]`
    pub fn forward(&self, backend: Backend, ids: Tensor<2, Int>) -> Result<Tensor<3>, ModelError> {
        let seq = ids.dims()[1];
        let base = Tensor::zeros([1, seq, self.width()], &ids.device());
        self.forward_plus(backend, ids, base)
    }

    /// The embedding's width, `n_embd`.
    pub fn width(&self) -> usize {
        match &self.panels {
            Some(packed) => packed.dims()[0],
            None => self.chunks.first().map_or(0, |c| c.val().dims()[1]),
        }
    }

    /// `ids`' rows plus `base` (the position embeddings) on `backend` (see [`EmbedTokens`]).
    ///
    /// # Shapes
    /// - ids `[batch, seq]`, base `[batch or 1, seq, n_embd]` → `[batch, seq, n_embd]`
    pub fn forward_plus(
        &self,
        backend: Backend,
        ids: Tensor<2, Int>,
        base: Tensor<3>,
    ) -> Result<Tensor<3>, ModelError> {
        backend.run(EmbedTokens {
            table: self,
            ids,
            base,
        })
    }

    /// The tied LM head, `hidden · wteᵀ`, on `backend` (see [`LmHead`]).
    ///
    /// # Shapes
    /// - hidden `[batch, seq, n_embd]` → logits `[batch, seq, vocab_size]`
    pub fn logits(&self, backend: Backend, hidden: Tensor<3>) -> Result<Tensor<3>, ModelError> {
        backend.run(LmHead {
            table: self,
            hidden,
        })
    }

    /// The chunks, or why `body` cannot use them (the table is packed into panels).
    fn dense_chunks(&self, body: &'static str) -> Result<Vec<Tensor<2>>, ModelError> {
        match self.panels {
            None => Ok(self.chunks.iter().map(|c| c.val()).collect()),
            Some(_) => Err(ModelError::WeightLayout {
                body,
                needed: "unpacked",
            }),
        }
    }

    /// The packed `wteᵀ`, or why the browser's body cannot run without it.
    fn packed_table(&self) -> Result<&PanelWeight, ModelError> {
        self.panels.as_ref().ok_or(ModelError::WeightLayout {
            body: "browser's CPU",
            needed: "packed",
        })
    }

    pub fn device(&self) -> Device {
        // With panels the one empty chunk is still on the model's device.
        self.chunks
            .first()
            .map(|c| c.val().device())
            .unwrap_or_default()
    }
}

/// `wte` stored as a backend's bodies read it: in row chunks of at most [`MAX_TENSOR_BYTES`],
/// or, in the browser's CPU backend, packed as `wteᵀ`.
pub struct StoreEmbedding {
    /// `[vocab, n_embd]`, row-major
    pub values: Vec<f32>,
    pub vocab: usize,
    pub n_embd: usize,
    pub device: Device,
}

impl StoreEmbedding {
    fn in_chunks(self) -> Result<TokenEmbedding, PanelError> {
        let rows = TokenEmbedding::chunk_rows(self.n_embd);
        Ok(TokenEmbedding::from_rows_in_chunks(
            self.values,
            self.vocab,
            self.n_embd,
            rows,
            &self.device,
        ))
    }
}

impl Op for StoreEmbedding {
    type Output = Result<TokenEmbedding, PanelError>;

    fn gpu(self) -> Self::Output {
        self.in_chunks()
    }

    fn cpu(self) -> Self::Output {
        self.in_chunks()
    }

    fn browser_cpu(self) -> Self::Output {
        TokenEmbedding::packed(&self.values, self.vocab, self.n_embd, &self.device)
    }

    fn reference(self) -> Self::Output {
        self.in_chunks()
    }
}

/// The embedding lookup of `ids` plus `base` (the position embeddings). An id outside the
/// vocabulary is an error with the panels; the chunks clamp it (token ids are checked before,
/// by `Transformer::token_tensor`).
///
/// # Shapes
/// - ids `[batch, seq]`, base `[batch or 1, seq, n_embd]` → `[batch, seq, n_embd]`
#[derive(Clone)]
pub struct EmbedTokens<'a> {
    pub table: &'a TokenEmbedding,
    pub ids: Tensor<2, Int>,
    pub base: Tensor<3>,
}

impl Op for EmbedTokens<'_> {
    type Output = Result<Tensor<3>, ModelError>;

    /// One kernel per chunk, which gathers and adds in one pass.
    fn gpu(self) -> Self::Output {
        let chunks = self.table.dense_chunks("GPU")?;
        Ok(kernels::token_embedding(&chunks, self.ids, self.base))
    }

    /// Each chunk contributes the rows whose ids fall in it.
    fn cpu(self) -> Self::Output {
        let chunks = self.table.dense_chunks("CPU")?;
        Ok(rows_across_chunks(&chunks, self.ids) + self.base)
    }

    /// The packed `wteᵀ`'s columns.
    fn browser_cpu(self) -> Self::Output {
        Ok(packed_rows(self.table.packed_table()?, self.ids)? + self.base)
    }

    fn reference(self) -> Self::Output {
        let table = Tensor::cat(self.table.dense_chunks("reference")?, 0);
        Ok(burn::tensor::module::embedding(table, self.ids) + self.base)
    }
}

/// The tied LM head, `hidden · wteᵀ`.
///
/// # Shapes
/// - hidden `[batch, seq, n_embd]` → logits `[batch, seq, vocab_size]`
#[derive(Clone)]
pub struct LmHead<'a> {
    pub table: &'a TokenEmbedding,
    pub hidden: Tensor<3>,
}

impl Op for LmHead<'_> {
    type Output = Result<Tensor<3>, ModelError>;

    /// `hidden · chunkᵀ` (the chunk read transposed in place) and the parts side by side: no
    /// transposing copy of the logits.
    fn gpu(self) -> Self::Output {
        let [batch, seq, n_embd] = self.hidden.dims();
        let rows = self.hidden.reshape([batch * seq, n_embd]);
        let parts: Vec<Tensor<2>> = self
            .table
            .dense_chunks("GPU")?
            .into_iter()
            .map(|chunk| rows.clone().matmul(chunk.transpose()))
            .collect();
        let vocab: usize = parts.iter().map(|p| p.dims()[1]).sum();
        Ok(Tensor::cat(parts, 1).reshape([batch, seq, vocab]))
    }

    /// `chunk · hiddenᵀ`, then one transposing copy: the CPU backend's gemm is slow with few
    /// output rows, so `hidden · chunkᵀ` (no copy) was slower overall (a sampling test ran
    /// 28.7 s instead of 20 s); with the vocabulary as the rows it is fast.
    fn cpu(self) -> Self::Output {
        let [batch, seq, n_embd] = self.hidden.dims();
        let rows_t = self.hidden.reshape([batch * seq, n_embd]).transpose();
        let parts: Vec<Tensor<2>> = self
            .table
            .dense_chunks("CPU")?
            .into_iter()
            .map(|chunk| threaded_product::matmul(chunk, rows_t.clone()))
            .collect();
        let vocab: usize = parts.iter().map(|p| p.dims()[0]).sum();
        let stacked = if parts.len() == 1 {
            parts.into_iter().next().unwrap_or(rows_t)
        } else {
            Tensor::cat(parts, 0)
        };
        Ok(stacked.transpose().reshape([batch, seq, vocab]))
    }

    /// The packed `wteᵀ`'s panel product.
    fn browser_cpu(self) -> Self::Output {
        let packed = self.table.packed_table()?;
        let [batch, seq, _] = self.hidden.dims();
        let device = self.hidden.device();
        let logits = packed.product(&read_f32_now(self.hidden)?, batch * seq)?;
        let vocab = packed.dims()[1];
        Ok(Tensor::from_data(
            TensorData::new(logits, [batch, seq, vocab]),
            &device,
        ))
    }

    fn reference(self) -> Self::Output {
        let table = Tensor::cat(self.table.dense_chunks("reference")?, 0);
        let [batch, seq, n_embd] = self.hidden.dims();
        let vocab = table.dims()[0];
        let logits = self
            .hidden
            .reshape([batch * seq, n_embd])
            .matmul(table.transpose());
        Ok(logits.reshape([batch, seq, vocab]))
    }
}

/// burn's `embedding` on each chunk for the ids that fall in it.
///
/// # Shapes
/// - ids `[batch, seq]` → `[batch, seq, n_embd]`
fn rows_across_chunks(chunks: &[Tensor<2>], ids: Tensor<2, Int>) -> Tensor<3> {
    if let [only] = chunks {
        return burn::tensor::module::embedding(only.clone(), ids);
    }
    let mut start = 0usize;
    let mut sum: Option<Tensor<3>> = None;
    for chunk in chunks {
        let rows = chunk.dims()[0];
        let local = ids
            .clone()
            .sub_scalar(start as i64)
            .clamp(0, rows as i64 - 1);
        let inside = ids
            .clone()
            .greater_equal_elem(start as i64)
            .bool_and(ids.clone().lower_elem((start + rows) as i64));
        let part = burn::tensor::module::embedding(chunk.clone(), local)
            * inside.float().unsqueeze_dim::<3>(2);
        sum = Some(match sum {
            None => part,
            Some(acc) => acc + part,
        });
        start += rows;
    }
    sum.unwrap_or_else(|| Tensor::zeros([ids.dims()[0], ids.dims()[1], 0], &ids.device()))
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
        let base = Tensor::<3>::zeros([1, 3, n_embd], &device);
        let a = read(
            whole
                .forward_plus(Backend::Cpu, ids.clone(), base.clone())
                .unwrap(),
        );
        let b = read(split.forward_plus(Backend::Cpu, ids, base).unwrap());
        assert_eq!(a, b);
        let hidden = Tensor::<3>::from_data(
            TensorData::new(vec![0.5f32, -1.0, 2.0, 1.5, 0.25, -0.75], [1, 2, 3]),
            &device,
        );
        let la = read(whole.logits(Backend::Cpu, hidden.clone()).unwrap());
        let lb = read(split.logits(Backend::Cpu, hidden).unwrap());
        assert_eq!(la.len(), 2 * vocab);
        for (x, y) in la.iter().zip(&lb) {
            assert!((x - y).abs() < 1e-6, "{x} vs {y}");
        }
    }
}
