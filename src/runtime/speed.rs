//! How fast the loaded model runs on this device, measured where it runs (the browser's worker,
//! for the Model page's speed check): one forward pass over 16 and over 64 tokens, one decode step after 64 tokens,
//! and a word distribution as the game's feedback samples it. Every figure is the median of
//! timed rounds that follow an untimed one, since shaders compile and kernels are chosen on
//! first use. The prompt is fixed ids, so another engine (onnxruntime-web in the browser
//! benchmark, transformers natively) can run exactly the same input.

use serde::{Deserialize, Serialize};

use crate::estimators::progress::{Monitor, Progress, checkpoint};
use crate::estimators::sampler::{DEFAULT_TOKEN_BUDGET, SamplerConfig, SamplerError, sample_words};
use crate::model::readback::read_f32;
use crate::model::{ModelError, Transformer};
use crate::text::tokenizer::BpeTokenizer;

/// The prompt lengths of the two prefill figures.
pub const PREFILL_LENGTHS: [usize; 2] = [16, 64];
/// Decode steps timed together after the 64-token prefill (one step is too short for a clock
/// with millisecond resolution).
pub const DECODE_STEPS: usize = 8;
/// The context of the word distribution: an ordinary sentence start.
pub const WORD_CONTEXT: &str = "After the storm had passed, the children ran outside to";

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SpeedError {
    #[error("at least one timed round is needed")]
    NoRounds,
    #[error("the word distribution needs at least one sample")]
    NoSamples,
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Sampler(SamplerError),
    #[error("cancelled")]
    Cancelled,
}

impl From<SamplerError> for SpeedError {
    fn from(e: SamplerError) -> Self {
        match e {
            SamplerError::Cancelled => Self::Cancelled,
            other => Self::Sampler(other),
        }
    }
}

/// What to measure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedSetup {
    /// Timed rounds (after one untimed round).
    pub rounds: usize,
    /// Samples of the word distribution (the game's feedback draws 100).
    pub word_samples: usize,
    pub seed: u64,
}

impl SpeedSetup {
    pub fn new(rounds: usize, word_samples: usize, seed: u64) -> Result<Self, SpeedError> {
        if rounds == 0 {
            return Err(SpeedError::NoRounds);
        }
        if word_samples == 0 {
            return Err(SpeedError::NoSamples);
        }
        Ok(Self {
            rounds,
            word_samples,
            seed,
        })
    }
}

/// Milliseconds per operation, each the median over the timed rounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedReport {
    /// One forward pass over [`PREFILL_LENGTHS`] tokens each, last position's logits read back.
    pub prefill_ms: [f64; 2],
    /// One decode step (batch 1) after the 64-token prefill, logits read back.
    pub decode_step_ms: f64,
    /// A word distribution of `word_samples` samples after [`WORD_CONTEXT`].
    pub word_distribution_ms: f64,
    pub word_samples: usize,
    pub rounds: usize,
}

/// `len` fixed, ordinary token ids (no special token): the same input for every engine.
///
/// ```
/// let ids = clozelab::runtime::speed::prompt_ids(3);
/// assert_eq!(ids, vec![262, 8181, 16100]);
/// ```
pub fn prompt_ids(len: usize) -> Vec<u32> {
    (0..len as u32).map(|i| 262 + (i * 7919) % 40000).collect()
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
///
/// ```
/// use clozelab::runtime::speed::median;
/// assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
/// assert_eq!(median(vec![4.0, 1.0]), Some(2.5));
/// assert_eq!(median(vec![]), None);
/// ```
pub fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    })
}

/// Times one prefill of `len` tokens (ms), and with `decode_steps > 0` that many decode steps
/// after it (ms per step).
async fn time_forward(
    model: &Transformer,
    len: usize,
    decode_steps: usize,
    monitor: &dyn Monitor,
) -> Result<(f64, f64), SpeedError> {
    let ids = prompt_ids(len);
    let start = monitor.now_s();
    let mut cache = model.new_cache(None, 1, len + decode_steps);
    let hidden =
        model.forward_cached(model.token_tensor(std::slice::from_ref(&ids))?, &mut cache)?;
    read_f32(model.last_logits(hidden)?).await?;
    let prefill = monitor.now_s() - start;
    let start = monitor.now_s();
    for step in 0..decode_steps {
        let token = model.token_tensor(&[vec![1000 + step as u32]])?;
        let hidden = model.forward_cached(token, &mut cache)?;
        read_f32(model.last_logits(hidden)?).await?;
    }
    let decode = (monitor.now_s() - start) / decode_steps.max(1) as f64;
    Ok((prefill * 1e3, decode * 1e3))
}

/// Measures [`SpeedReport`] with `monitor`'s clock; reports a step after each operation
/// (`contexts_done` of `contexts_total` operations) and stops when the monitor says so.
/// `batch_buckets`: as [`SamplerConfig::with_batch_buckets`], set as the game's feedback sets it
/// on this device (on for WebGPU, off on the CPU).
pub async fn measure_speed(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    setup: &SpeedSetup,
    batch_buckets: bool,
    monitor: &mut dyn Monitor,
) -> Result<SpeedReport, SpeedError> {
    const OPERATIONS_PER_ROUND: usize = 3;
    let sampler = SamplerConfig::new(setup.word_samples, setup.seed)?
        .with_token_budget(DEFAULT_TOKEN_BUDGET)?
        .with_batch_buckets(batch_buckets);
    let mut progress = Progress {
        contexts_done: 0,
        contexts_total: (setup.rounds + 1) * OPERATIONS_PER_ROUND,
        samples_done: 0,
        elapsed_s: 0.0,
    };
    let started = monitor.now_s();
    let (mut short, mut long, mut decode, mut words) = (vec![], vec![], vec![], vec![]);
    for round in 0..=setup.rounds {
        let timed = round > 0;
        let (prefill, _) = time_forward(model, PREFILL_LENGTHS[0], 0, monitor).await?;
        short.extend(timed.then_some(prefill));
        step(monitor, &mut progress, started).await?;
        let (prefill, step_ms) =
            time_forward(model, PREFILL_LENGTHS[1], DECODE_STEPS, monitor).await?;
        long.extend(timed.then_some(prefill));
        decode.extend(timed.then_some(step_ms));
        step(monitor, &mut progress, started).await?;
        let start = monitor.now_s();
        // The sampler's own progress is not this run's: it counts into a throwaway total.
        let mut inner = progress.clone();
        sample_words(
            model,
            tokenizer,
            WORD_CONTEXT,
            &sampler,
            monitor,
            &mut inner,
        )
        .await?;
        words.extend(timed.then_some((monitor.now_s() - start) * 1e3));
        step(monitor, &mut progress, started).await?;
    }
    let median_of = |v: Vec<f64>| median(v).ok_or(SpeedError::NoRounds);
    Ok(SpeedReport {
        prefill_ms: [median_of(short)?, median_of(long)?],
        decode_step_ms: median_of(decode)?,
        word_distribution_ms: median_of(words)?,
        word_samples: setup.word_samples,
        rounds: setup.rounds,
    })
}

async fn step(
    monitor: &mut dyn Monitor,
    progress: &mut Progress,
    started: f64,
) -> Result<(), SpeedError> {
    progress.contexts_done += 1;
    progress.elapsed_s = monitor.now_s() - started;
    if checkpoint(monitor, progress).await {
        Ok(())
    } else {
        Err(SpeedError::Cancelled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_rejects_nothing_to_measure() {
        assert_eq!(SpeedSetup::new(0, 100, 1), Err(SpeedError::NoRounds));
        assert_eq!(SpeedSetup::new(1, 0, 1), Err(SpeedError::NoSamples));
        assert!(SpeedSetup::new(1, 1, 1).is_ok());
    }
}
