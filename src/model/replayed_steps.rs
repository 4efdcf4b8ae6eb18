//! Decode steps recorded once and replayed. On a GPU a step is a hundred kernels or more, and
//! what the host pays to launch each (burn's graph, cubecl's launch path, a bind group, a
//! submission's share) outweighs the arithmetic at batch 1 by far. Recorded once through cubecl's
//! graph capture (burn's `graph_*` backend functions), a step replays from prebuilt pipelines
//! and bind groups: what changes from step to step (the tokens, each row's position, the count
//! of cached keys) lives in device buffers written before each replay
//! ([`kernels::overwrite_ints`]), so every launch argument the recording saw stays right; the
//! position embedding or the rotary angles are gathered at those positions from tables made
//! once.
//!
//! Where a step cannot be recorded (a CPU backend) the steps run as
//! [`Transformer::forward_cached`] does, with the same results.

use std::marker::PhantomData;
use std::rc::Rc;

use burn::backend::{Backend, BackendTypes, Dispatch};
use burn::tensor::{Int, Tensor, TensorData};

use super::error::ModelError;
use super::kv_cache::KvCache;
use super::ops::kernels;
use super::ops::rotary::RotaryAngles;
use super::readback::read_f32;
use super::transformer::{DevicePositions, Placement, Transformer};

/// Runs the recording this many times before it records: with fusion the first pass builds and
/// tunes its fused kernels, which allocate otherwise than later passes, and a recording may
/// allocate nothing the warm passes did not (as burn's own `capture` does).
pub const WARM_PASSES: usize = 3;

/// Steps of one token per row after what a cache holds, recorded once where the backend can
/// (see the module doc). Not `Send`: a replay is ordered only against work from the thread that
/// recorded it.
pub struct ReplayedSteps<'m> {
    model: &'m Transformer,
    // Declared before the cache, so the recording (which writes the cache) is dropped first.
    recorded: Option<Recorded>,
    cache: KvCache,
    _same_thread: PhantomData<Rc<()>>,
}

/// A recorded step and the buffers it reads and writes besides the model's and the cache's.
struct Recorded {
    graph: <Dispatch as BackendTypes>::GraphPrimitive,
    /// `[batch, 1]`
    tokens: Tensor<2, Int>,
    /// `[batch]`: each row's position.
    positions: Tensor<1, Int>,
    /// `[1]`: own keys cached per row.
    past: Tensor<1>,
    /// Made once: uploading it is a write the recording may not hold.
    _prefix_mask: Option<Tensor<4>>,
    /// The rotary angles of every position, where the family has them: made once too.
    _angles: Option<RotaryAngles>,
    /// `[batch, vocab]`: each replay writes the step's logits here.
    logits: Tensor<2>,
}

/// Why steps run without a recording, where they do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum EagerReason {
    /// The model runs on a CPU backend, where a launch costs nothing to speak of.
    CpuBackend,
    /// The cache has no room for a step.
    CacheFull,
}

impl Transformer {
    /// Steps after what `cache` holds, recorded once where the backend can, else run one by one
    /// ([`ReplayedSteps::eager_reason`] says why).
    ///
    /// # Errors
    /// The warm passes' (the model's or a readback's), or [`ModelError::Recording`] where the
    /// backend refused the recording; the cache is then lost, its buffers possibly half
    /// written, and the caller starts again from its prefill.
    pub async fn replayed_steps(&self, cache: KvCache) -> Result<ReplayedSteps<'_>, ModelError> {
        let mut steps = ReplayedSteps {
            model: self,
            recorded: None,
            cache,
            _same_thread: PhantomData,
        };
        if steps.eager_reason().is_none() {
            steps.recorded = Some(steps.record().await?);
        }
        Ok(steps)
    }
}

impl<'m> ReplayedSteps<'m> {
    /// Why the steps run one by one, or `None` where they replay a recording.
    pub fn eager_reason(&self) -> Option<EagerReason> {
        if self.recorded.is_some() {
            return None;
        }
        if !self.model.backend.records_steps() {
            Some(EagerReason::CpuBackend)
        } else if self.cache.len >= self.cache.capacity {
            Some(EagerReason::CacheFull)
        } else {
            None
        }
    }

    /// Own tokens the cache holds per row.
    pub fn len(&self) -> usize {
        self.cache.len
    }

    /// Whether the cache holds no own token.
    pub fn is_empty(&self) -> bool {
        self.cache.len == 0
    }

    /// The cache, holding every step run.
    pub fn into_cache(mut self) -> KvCache {
        // The recording goes first: its graph still writes the cache's buffers.
        self.recorded = None;
        self.cache
    }

    /// Runs one step of `tokens` (one per row) and returns its logits, `[batch, vocab]`. A
    /// replayed step writes them into the same buffer every time: read them, or queue what reads
    /// them, before the next step.
    ///
    /// # Errors
    /// A row count other than the cache's, an id outside the vocabulary, a full cache or a
    /// position past the model's; the backend's, where a replay is refused.
    pub fn step(&mut self, tokens: &[u32]) -> Result<Tensor<2>, ModelError> {
        let Some(recorded) = &self.recorded else {
            let rows: Vec<Vec<u32>> = tokens.iter().map(|&t| vec![t]).collect();
            let hidden = self
                .model
                .forward_cached(self.model.token_tensor(&rows)?, &mut self.cache)?;
            return self.model.last_logits(hidden);
        };
        if let Some(&id) = tokens
            .iter()
            .find(|&&t| t as usize >= self.model.vocab_size)
        {
            return Err(ModelError::TokenOutOfRange {
                id,
                vocab_size: self.model.vocab_size,
            });
        }
        if tokens.len() != self.cache.batch {
            return Err(ModelError::BatchMismatch {
                got: tokens.len(),
                expected: self.cache.batch,
            });
        }
        if self.cache.len + 1 > self.cache.capacity {
            return Err(ModelError::CacheFull {
                needed: self.cache.len + 1,
                capacity: self.cache.capacity,
            });
        }
        let positions = self.cache.positions();
        let latest = positions.iter().copied().max().unwrap_or(0);
        if latest + 1 > self.model.n_positions {
            return Err(ModelError::ContextTooLong {
                needed: latest + 1,
                max: self.model.n_positions,
            });
        }
        let written = |error: kernels::OverwriteError| ModelError::Recording(error.to_string());
        let ids: Vec<i64> = tokens.iter().map(|&t| i64::from(t)).collect();
        kernels::overwrite_ints(&recorded.tokens, &ids).map_err(written)?;
        let positions: Vec<i64> = positions.iter().map(|&p| p as i64).collect();
        kernels::overwrite_ints(&recorded.positions, &positions).map_err(written)?;
        kernels::overwrite_floats(&recorded.past, &[self.cache.len as i64]).map_err(written)?;
        // Safety: every buffer the recording reads or writes is alive and touched by nothing
        // else meanwhile. The model's weights are borrowed for the life of `self`, the cache,
        // the inputs and the logits are owned here, and the step's own intermediate buffers are
        // held by the recording. Writes, the replay and the reads of the logits all come from
        // this thread (`Self` is not `Send`), so they are ordered on the stream it recorded on.
        unsafe { Dispatch::graph_replay(self.model.device().as_dispatch(), &recorded.graph) }
            .map_err(|e| ModelError::Recording(format!("{e:?}")))?;
        self.cache.len += 1;
        Ok(recorded.logits.clone())
    }

    /// Warms the step up, then records it, leaving the cache's count of tokens as it was.
    async fn record(&mut self) -> Result<Recorded, ModelError> {
        let model = self.model;
        let device = model.device();
        let batch = self.cache.batch;
        let tokens = model.token_tensor(&vec![vec![0]; batch])?;
        let positions: Vec<i64> = self.cache.positions().iter().map(|&p| p as i64).collect();
        let positions = Tensor::<1, Int>::from_data(TensorData::new(positions, [batch]), &device);
        let past =
            Tensor::<1>::from_data(TensorData::new(vec![self.cache.len as f32], [1]), &device);
        let prefix_mask = self
            .cache
            .prefix
            .as_ref()
            .and_then(|p| p.mask(&self.cache.row_segments, &device));
        let angles = model
            .rotary()
            .map(|table| table.angles_of_every_position(model.n_positions, &device));
        let recording_failed = |e| ModelError::Recording(format!("{e:?}"));
        let dispatch = device.as_dispatch();
        Dispatch::graph_prepare(dispatch).map_err(recording_failed)?;
        let pass = |cache: &mut KvCache| {
            let placement = Placement::Device(DevicePositions {
                positions: &positions,
                past: &past,
                prefix_mask: prefix_mask.as_ref(),
                angles: angles.as_ref(),
            });
            let hidden = model.forward_placed(tokens.clone(), cache, placement)?;
            model.last_logits(hidden)
        };
        // From here on every way out closes the capture, whatever state it reached: one left
        // prepared or open would hold the stream.
        let close = || Dispatch::graph_stop_capture(dispatch).map_err(recording_failed);
        for _ in 0..WARM_PASSES {
            // Read back, so that the pass runs (and allocates) before the next begins.
            let warmed = match pass(&mut self.cache) {
                Ok(logits) => read_f32(logits).await.map(|_| ()),
                Err(e) => Err(e),
            };
            if let Err(e) = warmed {
                close().ok();
                return Err(e);
            }
        }
        if let Err(e) = Dispatch::graph_start_capture(dispatch) {
            close().ok();
            return Err(recording_failed(e));
        }
        let logits = pass(&mut self.cache);
        let graph = close();
        let logits = logits?;
        Ok(Recorded {
            graph: graph?,
            tokens,
            positions,
            past,
            _prefix_mask: prefix_mask,
            _angles: angles,
            logits,
        })
    }
}
