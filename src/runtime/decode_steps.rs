//! Decode steps timed one by one: the workload of the host-cost benchmark (`clozelab bench
//! host` natively, `scripts/bench_host_browser.mjs` in the browser's engine). After a prefill,
//! the model decodes at batch 1 and reads back every step's most likely token (the argmax of the
//! last position's logits: a step waits for its result, as the sampler waits for its drawn
//! tokens, with a readback too small to cost anything itself). On a model whose arithmetic is
//! negligible, what a step costs is what the host pays to launch its kernels.

use burn::tensor::Tensor;
use serde::{Deserialize, Serialize};

use super::speed::prompt_ids;
use crate::estimators::progress::Monitor;
use crate::model::readback::read_f32;
use crate::model::replayed_steps::{EagerReason, ReplayedSteps};
use crate::model::{KvCache, ModelError, Transformer};

/// What [`DecodeStepsSetup::new`] refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeStepsError {
    #[error("the prefill needs at least one token")]
    NoPrefill,
    #[error("at least one decode step is needed")]
    NoSteps,
}

/// A prefill of `prefill` fixed tokens ([`prompt_ids`]), then `steps` decode steps, replayed
/// from one recording where `replayed` and the backend can
/// ([`ReplayedSteps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecodeStepsSetup {
    pub prefill: usize,
    pub steps: usize,
    #[serde(default)]
    pub replayed: bool,
}

impl DecodeStepsSetup {
    /// ```
    /// use clozelab::runtime::decode_steps::{DecodeStepsError, DecodeStepsSetup};
    /// assert!(DecodeStepsSetup::new(16, 200).is_ok());
    /// assert_eq!(DecodeStepsSetup::new(16, 0), Err(DecodeStepsError::NoSteps));
    /// assert_eq!(DecodeStepsSetup::new(0, 8), Err(DecodeStepsError::NoPrefill));
    /// ```
    pub fn new(prefill: usize, steps: usize) -> Result<Self, DecodeStepsError> {
        if prefill == 0 {
            return Err(DecodeStepsError::NoPrefill);
        }
        if steps == 0 {
            return Err(DecodeStepsError::NoSteps);
        }
        Ok(Self {
            prefill,
            steps,
            replayed: false,
        })
    }

    /// The same steps replayed from one recording.
    pub fn replayed(self) -> Self {
        Self {
            replayed: true,
            ..self
        }
    }
}

/// Each decode step's wall time, ms, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecodeStepsReport {
    pub step_ms: Vec<f64>,
    /// Each step's most likely next token, as read back.
    #[serde(default)]
    pub tokens: Vec<u32>,
    /// Why replayed steps ran one by one, where they were asked for and did.
    #[serde(default)]
    pub eager_reason: Option<EagerReason>,
}

/// Runs `setup` once with `monitor`'s clock: [`prefilled`], then [`time_steps`]. Nothing is
/// untimed here: a caller that wants warm kernels runs it twice.
///
/// # Errors
/// The model's: a prefill of no tokens (a setup made without [`DecodeStepsSetup::new`]) is
/// [`ModelError::EmptyInput`]; no steps give an empty report.
pub async fn time_decode_steps(
    model: &Transformer,
    setup: DecodeStepsSetup,
    monitor: &dyn Monitor,
) -> Result<DecodeStepsReport, ModelError> {
    let mut cache = prefilled(model, setup).await?;
    if setup.replayed {
        return time_replayed_steps(model, cache, setup.steps, monitor).await;
    }
    time_steps(model, &mut cache, setup.steps, monitor).await
}

/// A cache holding `setup`'s prefill (its most likely next token read back), with room for its
/// steps: what a caller that measures the steps alone runs first.
pub async fn prefilled(
    model: &Transformer,
    setup: DecodeStepsSetup,
) -> Result<KvCache, ModelError> {
    let ids = prompt_ids(setup.prefill);
    let mut cache = model.new_cache(None, 1, ids.len() + setup.steps);
    let hidden =
        model.forward_cached(model.token_tensor(std::slice::from_ref(&ids))?, &mut cache)?;
    read_f32(model.last_logits(hidden)?.argmax(1).float()).await?;
    Ok(cache)
}

/// `steps` decode steps after what `cache` holds, each timed with `monitor`'s clock and its most
/// likely token read back.
pub async fn time_steps(
    model: &Transformer,
    cache: &mut KvCache,
    steps: usize,
    monitor: &dyn Monitor,
) -> Result<DecodeStepsReport, ModelError> {
    let (step_ms, tokens) = timed(steps, monitor, |token| {
        let hidden = model.forward_cached(model.token_tensor(&[vec![token]])?, cache)?;
        model.last_logits(hidden)
    })
    .await?;
    Ok(DecodeStepsReport {
        step_ms,
        tokens,
        eager_reason: None,
    })
}

/// [`time_steps`] through [`ReplayedSteps`]: the step recorded once (not
/// timed), then [`time_replays`].
pub async fn time_replayed_steps(
    model: &Transformer,
    cache: KvCache,
    steps: usize,
    monitor: &dyn Monitor,
) -> Result<DecodeStepsReport, ModelError> {
    let mut replayed = model.replayed_steps(cache).await?;
    time_replays(&mut replayed, steps, monitor).await
}

/// `steps` replays of a recorded step, each timed with `monitor`'s clock and its most likely
/// token read back.
pub async fn time_replays(
    replayed: &mut ReplayedSteps<'_>,
    steps: usize,
    monitor: &dyn Monitor,
) -> Result<DecodeStepsReport, ModelError> {
    let (step_ms, tokens) = timed(steps, monitor, |token| replayed.step(&[token])).await?;
    Ok(DecodeStepsReport {
        step_ms,
        tokens,
        eager_reason: replayed.eager_reason(),
    })
}

/// Each of `steps` steps' wall time (ms) and most likely next token: `step` given the step's
/// token (1000, 1001, …) gives its logits, `[1, vocab]`, whose argmax is read back.
async fn timed(
    steps: usize,
    monitor: &dyn Monitor,
    mut step: impl FnMut(u32) -> Result<Tensor<2>, ModelError>,
) -> Result<(Vec<f64>, Vec<u32>), ModelError> {
    let mut step_ms = Vec::with_capacity(steps);
    let mut tokens = Vec::with_capacity(steps);
    for i in 0..steps {
        let start = monitor.now_s();
        let logits = step(1000 + i as u32)?;
        let most_likely = read_f32(logits.argmax(1).float()).await?;
        step_ms.push((monitor.now_s() - start) * 1e3);
        tokens.extend(most_likely.iter().map(|&t| t as u32));
    }
    Ok((step_ms, tokens))
}
