//! The KV cache of incremental decoding: preallocated per-row buffers over a prefix that many
//! rows share without copying it. A prefix may join several contexts (segments) so that their
//! continuations share one forward pass; each row then sees only its own context's segment.

use std::ops::Range;

use burn::tensor::{Device, Int, Tensor, TensorData};

use super::error::ModelError;
use super::ops::CacheStorage;
use super::ops::attention::MASKED_SCORE;
use super::ops::backend::Backend;

/// Keys and values of a prefix for every block, `[1, n_head, prefix_len, head_dim]` each.
/// The prefix is one or more contexts' keys side by side (its segments, in order); a row that
/// continues segment s attends to segment s only.
///
/// Cloning is cheap (tensor handles are reference counted): a batch of continuations reads
/// the same device buffers instead of a copy per sequence.
#[derive(Clone, Debug)]
pub struct SharedPrefix {
    pub(super) layers: Vec<(Tensor<4>, Tensor<4>)>,
    /// Token count of each segment.
    pub(super) segments: Vec<usize>,
}

impl SharedPrefix {
    /// Number of prefix tokens, all segments together.
    pub fn len(&self) -> usize {
        self.segments.iter().sum()
    }

    /// Whether the prefix holds no token.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Token count of each context joined in this prefix.
    pub fn segments(&self) -> &[usize] {
        &self.segments
    }

    /// Where segment `segment` starts along the key axis.
    fn offset(&self, segment: usize) -> usize {
        self.segments[..segment].iter().sum()
    }

    /// Additive mask `[rows, 1, 1, prefix_len]` that hides from each row every segment but its
    /// own; `None` for a single segment (nothing to hide).
    pub(super) fn mask(&self, row_segments: &[usize], device: &Device) -> Option<Tensor<4>> {
        if self.segments.len() < 2 {
            return None;
        }
        let len = self.len();
        let mut data = Vec::with_capacity(row_segments.len() * len);
        for &segment in row_segments {
            let start = self.offset(segment);
            let end = start + self.segments[segment];
            data.extend((0..len).map(|j| {
                if (start..end).contains(&j) {
                    0.0
                } else {
                    MASKED_SCORE
                }
            }));
        }
        Some(Tensor::from_data(
            TensorData::new(data, [row_segments.len(), 1, 1, len]),
            device,
        ))
    }
}

/// A block's keys and values in one buffer preallocated to `[batch, 2·n_head, capacity,
/// head_dim]`: the keys' heads, then the values'. One buffer because the fused projection
/// yields keys and values side by side, so a step writes both at once (on a GPU inside the
/// attention's kernel: `ops::cached_attention::AttendCached`), and a sampling tree's branches select
/// both with one kernel.
#[derive(Debug)]
pub(super) struct LayerCache {
    pub(super) keys_values: Tensor<4>,
}

impl LayerCache {
    /// Rows' keys and values for their first `len` positions, `[batch, n_head, len, head_dim]`
    /// each: views of the buffer.
    pub(super) fn keys_and_values(&self, rows: Range<usize>, len: usize) -> (Tensor<4>, Tensor<4>) {
        let [_, both, _, head_dim] = self.keys_values.dims();
        let n_head = both / 2;
        let part = |heads: Range<usize>| {
            self.keys_values
                .clone()
                .slice([rows.clone(), heads, 0..len, 0..head_dim])
        };
        (part(0..n_head), part(n_head..both))
    }

    /// A block's empty cache for `[batch, n_head, capacity, head_dim]`, in `backend`'s storage.
    pub(super) fn empty(backend: Backend, dims: [usize; 4], device: &Device) -> Self {
        let [batch, n_head, capacity, head_dim] = dims;
        let shape = [batch, 2 * n_head, capacity.max(1), head_dim];
        Self {
            keys_values: backend.run(CacheStorage {
                shape,
                device: device.clone(),
            }),
        }
    }
}

/// KV cache for incremental decoding of `batch` sequences that may all continue one
/// [`SharedPrefix`]. Each row's own tokens go into preallocated buffers; the prefix is
/// attended to through a broadcast matmul, never copied per row.
#[derive(Debug)]
pub struct KvCache {
    pub(super) prefix: Option<SharedPrefix>,
    /// The prefix segment each row continues (all 0 without a joined prefix).
    pub(super) row_segments: Vec<usize>,
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

    /// Tokens seen so far by each row, its prefix segment included: the position of each
    /// row's next token.
    pub fn positions(&self) -> Vec<usize> {
        self.row_segments
            .iter()
            .map(|&s| self.segment_len(s) + self.len)
            .collect()
    }

    /// Tokens of prefix segment `segment` (0 without a prefix).
    fn segment_len(&self, segment: usize) -> usize {
        self.prefix
            .as_ref()
            .and_then(|p| p.segments.get(segment))
            .copied()
            .unwrap_or(0)
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
        let device = first.keys_values.device();
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
                keys_values: l.keys_values.clone().select(0, index.clone()),
            })
            .collect();
        Ok(KvCache {
            prefix: self.prefix.clone(),
            row_segments: rows.iter().map(|&r| self.row_segments[r]).collect(),
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
        self.into_joined_prefix(&[len])
    }

    /// Joins the rows into one prefix of as many segments: segment i is row i's prefix segment
    /// followed by its first `lengths[i]` own tokens (rows right-padded to one call keep only
    /// their real tokens).
    pub fn into_joined_prefix(self, lengths: &[usize]) -> Result<SharedPrefix, ModelError> {
        if lengths.len() != self.batch {
            return Err(ModelError::BatchMismatch {
                got: lengths.len(),
                expected: self.batch,
            });
        }
        if let Some(&needed) = lengths.iter().find(|&&l| l > self.len) {
            return Err(ModelError::CacheFull {
                needed,
                capacity: self.len,
            });
        }
        let segments: Vec<usize> = self
            .row_segments
            .iter()
            .zip(lengths)
            .map(|(&segment, &own)| self.segment_len(segment) + own)
            .collect();
        if segments.iter().sum::<usize>() == 0 {
            return Err(ModelError::EmptyInput);
        }
        let layers = self
            .layers
            .into_iter()
            .enumerate()
            .map(|(i, layer)| {
                let [_, both, _, d] = layer.keys_values.dims();
                let h = both / 2;
                let mut keys = Vec::new();
                let mut values = Vec::new();
                for (row, (&own, &segment)) in lengths.iter().zip(&self.row_segments).enumerate() {
                    if let Some(p) = self.prefix.as_ref().filter(|p| p.segments[segment] > 0) {
                        let start = p.offset(segment);
                        let range = [0..1, 0..h, start..start + p.segments[segment], 0..d];
                        keys.push(p.layers[i].0.clone().slice(range.clone()));
                        values.push(p.layers[i].1.clone().slice(range));
                    }
                    if own > 0 {
                        let (own_keys, own_values) = layer.keys_and_values(row..row + 1, own);
                        keys.push(own_keys);
                        values.push(own_values);
                    }
                }
                (Tensor::cat(keys, 2), Tensor::cat(values, 2))
            })
            .collect();
        Ok(SharedPrefix { layers, segments })
    }
}
