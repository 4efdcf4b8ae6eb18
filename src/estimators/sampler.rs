//! Monte Carlo next-word distributions (Ilia & Aziz 2024, §3): draw N continuations of a
//! context, cut the first complete word from each, reject failures, and take relative
//! frequencies of the normalised words.
//!
//! The fast sampler walks the sampling tree instead of running N independent rows: the N first
//! tokens are one multinomial draw from the prefix's distribution, and only distinct token
//! prefixes are expanded, each carrying how many samples share it. Every row attends to one
//! shared KV cache of the context; finished branches are dropped between steps; batches are
//! padded to a few fixed sizes so kernels are reused. Several contexts can share every forward
//! pass ([`sample_words_together`]): their prefixes are joined, each row sees its own, and each
//! context keeps its own seeded generator. With temperature-only decoding the draws happen on
//! the device, uniforms from the seeded host generator, and only token ids are read back: on a
//! GPU by one kernel per LM-head call, on the CPU backend by burn's composition
//! ([`crate::model::ops::draw::DrawTokens`]). [`sample_words_naive`]
//! is the one-row-per-sample reference the tests compare it with.

use std::collections::BTreeMap;

use burn::tensor::{Int, Tensor, TensorData};

use crate::analysis::metrics::{MetricsError, WordDistribution};
use crate::estimators::decoding::{DecodingStrategy, SamplingError, multinomial};
use crate::estimators::progress::{Monitor, Progress, checkpoint};
use crate::estimators::tree::{bucket, extend_branches, run_prefix, run_prefixes};
use crate::model::readback::read_f32;
use crate::model::{KvCache, ModelError, Transformer};
use crate::rng::SplitMix64;
use crate::text::tokenizer::{BpeTokenizer, ContextStart, TokenizerError};
use crate::text::words::{ContinuationStatus, continuation_status, normalize};

/// Default number of samples per context (the paper's setting; 40 is the cheap one).
pub const DEFAULT_SAMPLES: usize = 1000;
/// Default bound on a continuation's tokens; samples whose first word is still open after it fail.
pub const DEFAULT_TOKEN_BUDGET: usize = 8;
/// Samples that contexts run together may hold between them: one context at the paper's
/// N = 1000 fills it alone, so joining never asks for more memory than that context does.
const SAMPLES_PER_PASS: usize = 1000;
/// Most contexts joined in one pass: each row attends to every joined prefix (the others'
/// masked), so the attention's work grows with their number.
const MAX_CONTEXTS_PER_PASS: usize = 8;

/// How many contexts of `samples` samples each to run together: as many as fit
/// `SAMPLES_PER_PASS` samples, between 1 and `MAX_CONTEXTS_PER_PASS`.
///
/// ```
/// use clozelab::estimators::sampler::contexts_to_join;
/// assert_eq!(contexts_to_join(40), 8);
/// assert_eq!(contexts_to_join(250), 4);
/// assert_eq!(contexts_to_join(1000), 1);
/// ```
pub fn contexts_to_join(samples: usize) -> usize {
    (SAMPLES_PER_PASS / samples.max(1)).clamp(1, MAX_CONTEXTS_PER_PASS)
}
/// Rows per LM-head call: bounds the `[rows, vocab]` buffers (WebGPU's 128 MiB bindings).
const HEAD_ROWS: usize = 128;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SamplerError {
    #[error("the number of samples must be at least 1")]
    NoSamples,
    #[error("the token budget must be at least 1")]
    NoBudget,
    #[error("contexts are sampled at least one at a time")]
    NoContexts,
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error(transparent)]
    Sampling(#[from] SamplingError),
    #[error("cancelled")]
    Cancelled,
}

/// How to sample.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplerConfig {
    samples: usize,
    seed: u64,
    strategy: DecodingStrategy,
    token_budget: usize,
    batch_buckets: bool,
    contexts_per_pass: usize,
    context_start: ContextStart,
}

impl SamplerConfig {
    /// `samples` ancestral samples from `seed`, with the default token budget.
    pub fn new(samples: usize, seed: u64) -> Result<Self, SamplerError> {
        if samples == 0 {
            return Err(SamplerError::NoSamples);
        }
        Ok(Self {
            samples,
            seed,
            strategy: DecodingStrategy::default(),
            token_budget: DEFAULT_TOKEN_BUDGET,
            batch_buckets: true,
            contexts_per_pass: 1,
            context_start: ContextStart::Bare,
        })
    }

    pub fn with_strategy(mut self, strategy: DecodingStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    pub fn with_token_budget(mut self, budget: usize) -> Result<Self, SamplerError> {
        if budget == 0 {
            return Err(SamplerError::NoBudget);
        }
        self.token_budget = budget;
        Ok(self)
    }

    /// Pad batches to fixed sizes (default on: WebGPU reuses compiled kernels; costs ≤ 1/3 extra rows).
    pub fn with_batch_buckets(mut self, on: bool) -> Self {
        self.batch_buckets = on;
        self
    }

    /// How many contexts [`sample_words_for_contexts`] runs together (default 1: one at a time).
    pub fn with_contexts_per_pass(mut self, contexts: usize) -> Result<Self, SamplerError> {
        if contexts == 0 {
            return Err(SamplerError::NoContexts);
        }
        self.contexts_per_pass = contexts;
        Ok(self)
    }

    /// The same draws from another seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// What the model reads before each context (default: the context alone).
    pub fn with_context_start(mut self, start: ContextStart) -> Self {
        self.context_start = start;
        self
    }

    pub fn contexts_per_pass(&self) -> usize {
        self.contexts_per_pass
    }

    pub fn samples(&self) -> usize {
        self.samples
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn strategy(&self) -> &DecodingStrategy {
        &self.strategy
    }

    pub fn token_budget(&self) -> usize {
        self.token_budget
    }
}

/// The words of N samples.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WordSamples {
    /// Samples drawn.
    pub n: usize,
    /// Samples without a complete first word (no word before `<|endoftext|>`, or still open
    /// after the token budget).
    pub failed: usize,
    /// Normalised word → count.
    pub words: BTreeMap<String, usize>,
    /// Word as written → count.
    pub surface: BTreeMap<String, usize>,
    /// Word as written → samples that spell it right after the context (" word", or "word"
    /// after an empty context) with nothing before it: the event whose probability
    /// [`crate::estimators::wordprob`] computes exactly. The rest of `surface` had punctuation or extra
    /// whitespace first.
    pub spelled_directly: BTreeMap<String, usize>,
}

impl WordSamples {
    /// Accepted samples (n − failed).
    pub fn accepted(&self) -> usize {
        self.n - self.failed
    }

    /// q(w|c): relative frequencies of the normalised words among accepted samples.
    pub fn relative_frequencies(&self) -> BTreeMap<String, f64> {
        let total = self.accepted() as f64;
        self.words
            .iter()
            .map(|(w, &c)| (w.clone(), c as f64 / total))
            .collect()
    }

    /// The word distribution; `Err` when every sample failed.
    pub fn distribution(&self) -> Result<WordDistribution, MetricsError> {
        WordDistribution::from_counts(self.words.iter().map(|(w, &c)| (w.clone(), c as f64)))
    }

    fn record(&mut self, status: ContinuationStatus, count: usize, bytes: &[u8], lead: &[u8]) {
        match status {
            ContinuationStatus::Complete(word) => {
                let normalised = normalize(&word);
                if normalised.is_empty() {
                    self.failed += count;
                } else {
                    if bytes.starts_with(lead) && bytes[lead.len()..].starts_with(word.as_bytes()) {
                        *self.spelled_directly.entry(word.clone()).or_default() += count;
                    }
                    *self.words.entry(normalised).or_default() += count;
                    *self.surface.entry(word).or_default() += count;
                }
            }
            ContinuationStatus::NoWord | ContinuationStatus::Pending => self.failed += count,
        }
    }
}

/// One open branch of the sampling tree: its continuation so far and how many samples share it.
struct Branch {
    bytes: Vec<u8>,
    count: usize,
}

/// Draws `counts[r]` tokens from each row's next-token distribution, with the generator of the
/// row's context (`rngs[contexts[r]]`, each consumed in row order, so a context's draws do not
/// depend on the rows of others); returns (token, count) per row, by increasing token id.
///
/// # Shapes
/// - hidden `[rows ≥ counts.len(), 1, n_embd]` (extra padded rows are ignored)
async fn draw_next(
    model: &Transformer,
    hidden: Tensor<3>,
    counts: &[usize],
    contexts: &[usize],
    strategy: &DecodingStrategy,
    rngs: &mut [SplitMix64],
) -> Result<Vec<Vec<(u32, usize)>>, SamplerError> {
    let [_, _, n_embd] = hidden.dims();
    let vocab = model.vocab_size;
    let mut draws = Vec::with_capacity(counts.len());
    for chunk_start in (0..counts.len()).step_by(HEAD_ROWS) {
        let chunk = &counts[chunk_start..(chunk_start + HEAD_ROWS).min(counts.len())];
        let rows = chunk.len();
        let logits = model
            .logits(
                hidden
                    .clone()
                    .slice([chunk_start..chunk_start + rows, 0..1, 0..n_embd]),
            )?
            .reshape([rows, vocab]);
        if strategy.truncates() {
            // Truncation needs a sort of each row: done on the host from the read-back logits.
            let host = read_f32(logits).await?;
            for (r, &count) in chunk.iter().enumerate() {
                let probs = strategy.apply(&host[r * vocab..(r + 1) * vocab])?;
                draws.push(multinomial(
                    &probs,
                    count,
                    &mut rngs[contexts[chunk_start + r]],
                ));
            }
            continue;
        }
        let mut uniforms = Vec::with_capacity(chunk.iter().sum());
        for (r, &count) in chunk.iter().enumerate() {
            let rng = &mut rngs[contexts[chunk_start + r]];
            uniforms.extend((0..count).map(|_| rng.next_unit()));
        }
        let ids = model
            .draw_tokens(logits, chunk, uniforms, strategy.temperature())
            .await?;
        let mut slot = 0;
        for &count in chunk {
            let mut row: BTreeMap<u32, usize> = BTreeMap::new();
            for &id in &ids[slot..slot + count] {
                // Rounding can put a threshold at the very top: take the last token then (the
                // draw refuses ids outside `0..=vocab`).
                *row.entry((id as usize).min(vocab - 1) as u32).or_default() += 1;
            }
            slot += count;
            draws.push(row.into_iter().collect());
        }
    }
    Ok(draws)
}

/// Samples the first words of `config.samples()` continuations of `context` (an empty context
/// conditions on `<|endoftext|>`), walking the sampling tree (see the module docs).
/// `progress` is the caller's running total; this adds the context's samples as they finish.
pub async fn sample_words(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    context: &str,
    config: &SamplerConfig,
    monitor: &mut dyn Monitor,
    progress: &mut Progress,
) -> Result<WordSamples, SamplerError> {
    let mut words = sample_words_together(
        model,
        tokenizer,
        &[(context, config.seed)],
        config,
        monitor,
        progress,
    )
    .await?;
    Ok(words.pop().unwrap_or_default())
}

/// [`sample_words`] for several contexts at once, each with its own seed (which replaces
/// `config.seed()`): the contexts run in one forward pass, then every level of their sampling
/// trees is one batch over all of them, each row attending to its own context only. A context's
/// result is the one [`sample_words`] gives it alone, up to the rounding of a larger batch.
/// Narrow trees (few samples, low temperature) fill a batch only together.
pub async fn sample_words_together(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    contexts: &[(&str, u64)],
    config: &SamplerConfig,
    monitor: &mut dyn Monitor,
    progress: &mut Progress,
) -> Result<Vec<WordSamples>, SamplerError> {
    if contexts.is_empty() {
        return Ok(Vec::new());
    }
    let ids = contexts
        .iter()
        .map(|(context, _)| tokenizer.encode_context_from(context, config.context_start))
        .collect::<Result<Vec<_>, _>>()?;
    let leads: Vec<&[u8]> = contexts
        .iter()
        .map(|(context, _)| {
            if context.is_empty() {
                &b""[..]
            } else {
                &b" "[..]
            }
        })
        .collect();
    let budget = config.token_budget;
    let (prefix, roots) = run_prefixes(model, &ids, budget)?;
    let mut rngs: Vec<SplitMix64> = contexts
        .iter()
        .map(|&(_, seed)| SplitMix64::new(seed))
        .collect();
    let mut results: Vec<WordSamples> = contexts
        .iter()
        .map(|_| WordSamples {
            n: config.samples,
            ..Default::default()
        })
        .collect();
    // Open branches of every context, in context order (a row's context never changes).
    let mut frontier: Vec<(usize, Branch)> = (0..contexts.len())
        .map(|c| {
            let root = Branch {
                bytes: Vec::new(),
                count: config.samples,
            };
            (c, root)
        })
        .collect();
    let mut hidden = roots;
    let mut cache: Option<KvCache> = None;
    let started = progress.samples_done;
    let total = config.samples * contexts.len();
    for depth in 0..budget {
        let counts: Vec<usize> = frontier.iter().map(|(_, b)| b.count).collect();
        let row_contexts: Vec<usize> = frontier.iter().map(|&(c, _)| c).collect();
        let draws = draw_next(
            model,
            hidden,
            &counts,
            &row_contexts,
            &config.strategy,
            &mut rngs,
        )
        .await?;
        let mut next = Vec::new();
        let mut parents = Vec::new();
        let mut tokens = Vec::new();
        for (row, ((c, branch), row_draws)) in frontier.iter().zip(draws).enumerate() {
            for (token, count) in row_draws {
                let mut bytes = branch.bytes.clone();
                let ended = token == tokenizer.end_of_text_id();
                if !ended {
                    bytes.extend_from_slice(tokenizer.drawn_bytes(token));
                }
                match continuation_status(&bytes, ended) {
                    ContinuationStatus::Pending if depth + 1 < budget => {
                        next.push((*c, Branch { bytes, count }));
                        parents.push(row);
                        tokens.push(token);
                    }
                    status => results[*c].record(status, count, &bytes, leads[*c]),
                }
            }
        }
        progress.samples_done = started + total - next.iter().map(|(_, b)| b.count).sum::<usize>();
        progress.elapsed_s = monitor.now_s();
        if !checkpoint(monitor, progress).await {
            return Err(SamplerError::Cancelled);
        }
        if next.is_empty() {
            break;
        }
        let rows = if config.batch_buckets {
            bucket(next.len())
        } else {
            next.len()
        };
        let (step_cache, step_hidden) = extend_branches(
            model,
            &prefix,
            cache.as_ref(),
            &parents,
            &tokens,
            rows,
            budget,
        )?;
        hidden = step_hidden;
        cache = Some(step_cache);
        frontier = next;
    }
    progress.samples_done = started + total;
    Ok(results)
}

/// Word distributions for several contexts, reporting contexts done. Context i uses seed
/// `config.seed() + i`, so each context's result does not depend on the others; contexts run
/// together ([`sample_words_together`]) in groups of up to `config.contexts_per_pass()`.
pub async fn sample_words_for_contexts(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    contexts: &[String],
    config: &SamplerConfig,
    monitor: &mut dyn Monitor,
) -> Result<Vec<WordSamples>, SamplerError> {
    let mut progress = Progress {
        contexts_done: 0,
        contexts_total: contexts.len(),
        samples_done: 0,
        elapsed_s: 0.0,
    };
    let start = monitor.now_s();
    let mut offset = OffsetMonitor {
        inner: monitor,
        start,
    };
    let seeded: Vec<(&str, u64)> = contexts
        .iter()
        .enumerate()
        .map(|(i, context)| (context.as_str(), config.seed.wrapping_add(i as u64)))
        .collect();
    let mut out = Vec::with_capacity(contexts.len());
    for group in seeded.chunks(config.contexts_per_pass) {
        out.extend(
            sample_words_together(model, tokenizer, group, config, &mut offset, &mut progress)
                .await?,
        );
        progress.contexts_done = out.len();
        progress.elapsed_s = offset.now_s();
        if !checkpoint(&mut offset, &progress).await {
            return Err(SamplerError::Cancelled);
        }
    }
    Ok(out)
}

/// Measures elapsed time from the start of a run.
struct OffsetMonitor<'a> {
    inner: &'a mut dyn Monitor,
    start: f64,
}

impl Monitor for OffsetMonitor<'_> {
    fn now_s(&self) -> f64 {
        self.inner.now_s() - self.start
    }
    fn report(&mut self, progress: &Progress) -> bool {
        self.inner.report(progress)
    }
    fn pause(&mut self) -> crate::estimators::progress::Pause<'_> {
        self.inner.pause()
    }
}

/// The reference sampler: one row per sample, every row run through the model at every step
/// (finished rows included; only open rows go through the LM head and get a draw), each token
/// drawn on the host from the decoding strategy's distribution in f64.
/// Slow by design; the tests check that [`sample_words`] draws from the same distribution.
pub async fn sample_words_naive(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    context: &str,
    config: &SamplerConfig,
) -> Result<WordSamples, SamplerError> {
    let ids = tokenizer.encode_context_from(context, config.context_start)?;
    let lead: &[u8] = if context.is_empty() { b"" } else { b" " };
    let budget = config.token_budget;
    let n = config.samples;
    let (prefix, root) = run_prefix(model, &ids, budget)?;
    let n_embd = root.dims()[2];
    let vocab = model.vocab_size;
    let mut rng = SplitMix64::new(config.seed);
    let mut hidden = root.expand([n, 1, n_embd]);
    let mut cache = model.new_cache(Some(prefix), n, budget);
    let mut bytes: Vec<Vec<u8>> = vec![Vec::new(); n];
    let mut open = vec![true; n];
    let mut result = WordSamples {
        n,
        ..Default::default()
    };
    let device = hidden.device();
    for depth in 0..budget {
        // A finished row's token is never read: it keeps `<|endoftext|>`, and neither its logits
        // nor a draw are computed (rows in order, so the draws are those of every row run).
        let end_of_text = tokenizer.end_of_text_id();
        let mut tokens = vec![end_of_text; n];
        let open_rows: Vec<usize> = (0..n).filter(|&row| open[row]).collect();
        for chunk in open_rows.chunks(HEAD_ROWS) {
            let index = Tensor::<1, Int>::from_data(
                TensorData::new(chunk.iter().map(|&row| row as i64).collect(), [chunk.len()]),
                &device,
            );
            let logits = model
                .logits(hidden.clone().select(0, index))?
                .reshape([chunk.len(), vocab]);
            let host = read_f32(logits).await?;
            for (k, &row) in chunk.iter().enumerate() {
                let probs = config.strategy.apply(&host[k * vocab..(k + 1) * vocab])?;
                tokens[row] = multinomial(&probs, 1, &mut rng)
                    .first()
                    .map_or(end_of_text, |d| d.0);
            }
        }
        for (row, &token) in tokens.iter().enumerate() {
            if !open[row] {
                continue;
            }
            let ended = token == end_of_text;
            if !ended {
                bytes[row].extend_from_slice(tokenizer.drawn_bytes(token));
            }
            match continuation_status(&bytes[row], ended) {
                ContinuationStatus::Pending if depth + 1 < budget => {}
                status => {
                    result.record(status, 1, &bytes[row], lead);
                    open[row] = false;
                }
            }
        }
        if !open.contains(&true) {
            break;
        }
        let rows: Vec<Vec<u32>> = tokens.iter().map(|&t| vec![t]).collect();
        hidden = model.forward_cached(model.token_tensor(&rows)?, &mut cache)?;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_waste_at_most_a_third() {
        for n in 1..2000 {
            let b = bucket(n);
            assert!(
                b >= n && (b as f64) <= (n as f64 * 1.5).max(2.0),
                "{n} → {b}"
            );
        }
        assert_eq!(
            (bucket(1), bucket(3), bucket(5), bucket(7), bucket(100)),
            (1, 3, 6, 8, 128)
        );
    }

    #[test]
    fn config_validation() {
        assert_eq!(SamplerConfig::new(0, 1), Err(SamplerError::NoSamples));
        assert_eq!(
            SamplerConfig::new(5, 1).unwrap().with_token_budget(0),
            Err(SamplerError::NoBudget)
        );
    }
}
