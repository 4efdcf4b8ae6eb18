//! The KV cache of incremental decoding: preallocated per-row buffers over a prefix that many
//! rows share without copying it.

use burn::tensor::{Int, Tensor, TensorData};

use super::error::ModelError;

/// Keys and values of a prefix for every block, `[1, n_head, prefix_len, head_dim]` each.
///
/// Cloning is cheap (tensor handles are reference counted): a batch of continuations reads
/// the same device buffers instead of a copy per sequence.
#[derive(Clone, Debug)]
pub struct SharedPrefix {
    pub(super) layers: Vec<(Tensor<4>, Tensor<4>)>,
    pub(super) len: usize,
}

impl SharedPrefix {
    /// Number of prefix tokens.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the prefix holds no token.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Per-block key/value buffers preallocated to `[batch, n_head, capacity, head_dim]`.
#[derive(Debug)]
pub(super) struct LayerCache {
    pub(super) keys: Tensor<4>,
    pub(super) values: Tensor<4>,
}

/// KV cache for incremental decoding of `batch` sequences that may all continue one
/// [`SharedPrefix`]. Each row's own tokens go into preallocated buffers; the prefix is
/// attended to through a broadcast matmul, never copied per row.
#[derive(Debug)]
pub struct KvCache {
    pub(super) prefix: Option<SharedPrefix>,
    pub(super) layers: Vec<LayerCache>,
    pub(super) batch: usize,
    pub(super) capacity: usize,
    pub(super) len: usize,
}

impl KvCache {
    /// Rows in the batch.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Tokens seen so far by each row, prefix included: the position of the next token.
    pub fn position(&self) -> usize {
        self.prefix.as_ref().map_or(0, SharedPrefix::len) + self.len
    }

    /// A cache whose row r is row `rows[r]` of this one (rows may repeat): how a sampling tree
    /// follows its branches. Only the rows' own tokens are copied; the shared prefix stays shared.
    pub fn select_rows(&self, rows: &[usize]) -> Result<KvCache, ModelError> {
        if rows.is_empty() {
            return Err(ModelError::EmptyInput);
        }
        if let Some(&bad) = rows.iter().find(|&&r| r >= self.batch) {
            return Err(ModelError::BatchMismatch {
                got: bad + 1,
                expected: self.batch,
            });
        }
        let Some(first) = self.layers.first() else {
            return Err(ModelError::EmptyInput);
        };
        let device = first.keys.device();
        let index = Tensor::<1, Int>::from_data(
            TensorData::new(
                rows.iter().map(|&r| r as i64).collect::<Vec<_>>(),
                [rows.len()],
            ),
            &device,
        );
        let layers = self
            .layers
            .iter()
            .map(|l| LayerCache {
                keys: l.keys.clone().select(0, index.clone()),
                values: l.values.clone().select(0, index.clone()),
            })
            .collect();
        Ok(KvCache {
            prefix: self.prefix.clone(),
            layers,
            batch: rows.len(),
            capacity: self.capacity,
            len: self.len,
        })
    }

    /// Turns a batch-1 cache into a prefix that other caches can share. The only copy made:
    /// the prefix's and the row's own keys are joined once.
    pub fn into_shared_prefix(self) -> Result<SharedPrefix, ModelError> {
        if self.batch != 1 {
            return Err(ModelError::BatchMismatch {
                got: self.batch,
                expected: 1,
            });
        }
        let len = self.len;
        let prefix_len = self.prefix.as_ref().map_or(0, SharedPrefix::len);
        let layers = self
            .layers
            .into_iter()
            .enumerate()
            .map(|(i, layer)| {
                let [b, h, _, d] = layer.keys.dims();
                let own_k = layer.keys.slice([0..b, 0..h, 0..len, 0..d]);
                let own_v = layer.values.slice([0..b, 0..h, 0..len, 0..d]);
                match &self.prefix {
                    Some(p) => (
                        Tensor::cat(vec![p.layers[i].0.clone(), own_k], 2),
                        Tensor::cat(vec![p.layers[i].1.clone(), own_v], 2),
                    ),
                    None => (own_k, own_v),
                }
            })
            .collect();
        Ok(SharedPrefix {
            layers,
            len: prefix_len + len,
        })
    }
}
