//! Word surprisal of a text, the two ways the literature computes it, and the entropy of the
//! model's next word, for every whitespace-delimited word: the predictors of reading-time
//! analyses. Every quantity reads the text after the tokenizer's begin-of-text token
//! ([`ContextStart::BeginOfText`]: GPT-2's `<|endoftext|>`, SmolLM2-Instruct's `<|im_start|>`),
//! as surprisal studies and minicons (`bos_token=True`) do.
//!
//! - **Canonical, with the beginning-of-word correction** (Pimentel & Meister 2024; Oh &
//!   Schuler 2024), exactly as minicons' `word_score_tokenized(…, bow_correction=True)`
//!   computes it: each word's tokens are its own encoding (" word" after the first), t₁…tₖ;
//!   s(w) = −log₂ [Π P(tᵢ | c, t<ᵢ) · P(B | c, w) / P(B | c)], B the tokens that begin with
//!   a space. The first word of a text takes no P(B | c) (its own first token has no space), and
//!   the corrections follow minicons' token rule: P(B | ·) is added after a token followed by a
//!   space-initial token (or the text's last token), and subtracted before a token that follows
//!   one so marked.
//! - **Every segmentation** ([`crate::estimators::wordprob`]): −log₂ P(next word is w), summed
//!   over every token sequence that spells " w", with clozelab's word rule (punctuation ends a
//!   word): the probability the cloze analyses and the games use. A text word carrying
//!   punctuation ("dog.") is scored as its word ("dog"); one that starts with punctuation, or
//!   holds no letter or digit, has none.
//! - **Entropy** of the next word (normalised, as people's answers are compared) before each
//!   word, from the word sampler: Miller–Madow corrected, with its standard error
//!   ([`EntropyEstimate`]).
//!
//! A text longer than the model reads at once is read in overlapping windows of whole words
//! ([`crate::estimators::windows`]): each word's predictors then come from the window that
//! scores it, with up to half a window of the words before it as context (its row says how
//! many). A text that fits is one window, exactly one pass.

use burn::tensor::activation::log_softmax;

use crate::analysis::metrics::EntropyEstimate;
use crate::estimators::progress::Monitor;
use crate::estimators::sampler::{
    SamplerConfig, SamplerError, contexts_to_join, sample_words_for_contexts,
};
use crate::estimators::windows::{WindowError, plan_windows};
use crate::estimators::wordprob::{WordProbError, WordScorer};
use crate::model::readback::read_f32;
use crate::model::{ModelError, Transformer};
use crate::text::tokenizer::{BpeTokenizer, ContextStart, TokenizerError};
use crate::text::words::first_word;

/// Rows per LM-head call (bounds the `[rows, vocab]` buffers, as in the sampler).
const HEAD_ROWS: usize = 128;

#[derive(Debug, thiserror::Error)]
pub enum SurprisalError {
    #[error("the text has no words")]
    NoWords,
    #[error(
        "the text is {tokens} tokens after its begin-of-text token, more than the model reads at once ({max}): score it in parts"
    )]
    TooLong { tokens: usize, max: usize },
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error(transparent)]
    WordProb(WordProbError),
    #[error(transparent)]
    Sampler(SamplerError),
    #[error(transparent)]
    Window(#[from] WindowError),
    #[error("cancelled")]
    Cancelled,
}

/// A stop seen by the word scorer or the sampler is the surprisal run's stop.
impl From<WordProbError> for SurprisalError {
    fn from(e: WordProbError) -> Self {
        match e {
            WordProbError::Cancelled => Self::Cancelled,
            other => Self::WordProb(other),
        }
    }
}

impl From<SamplerError> for SurprisalError {
    fn from(e: SamplerError) -> Self {
        match e {
            SamplerError::Cancelled => Self::Cancelled,
            other => Self::Sampler(other),
        }
    }
}

/// One word's predictors.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WordSurprisal {
    /// The word as written (whitespace-delimited).
    pub word: String,
    /// Canonical tokenisation with the beginning-of-word correction, bits.
    pub surprisal_bits: f64,
    /// −log₂ of the exact every-segmentation probability of the word (as clozelab cuts it
    /// from the text word); `None` for a word without one, or not computed.
    pub surprisal_all_segmentations_bits: Option<f64>,
    /// Entropy of the next word before this one, bits; `None` when not sampled.
    pub entropy_bits: Option<f64>,
    pub entropy_standard_error_bits: Option<f64>,
    /// The word's own tokens as the canonical surprisal reads them.
    pub token_ids: Vec<u32>,
    /// How many of the words before it the model read: all of them unless the text is longer
    /// than the model reads at once.
    pub context_words: usize,
}

/// Token ids that begin with a space: minicons' beginning-of-word set for GPT-2 (tokens whose
/// string starts with `Ġ`, the byte-level space).
pub fn beginning_of_word_ids(tokenizer: &BpeTokenizer) -> Vec<u32> {
    (0..tokenizer.vocab_size() as u32)
        .filter(|&id| {
            tokenizer
                .token_bytes(id)
                .is_ok_and(|bytes| bytes.first() == Some(&b' '))
        })
        .collect()
}

/// The ids minicons scores for `words` (after the begin-of-text token) and each word's span in
/// them.
fn word_spans(
    tokenizer: &BpeTokenizer,
    words: &[&str],
) -> Result<(Vec<u32>, Vec<std::ops::Range<usize>>), SurprisalError> {
    let mut ids = vec![tokenizer.begin_of_text_id()];
    let mut spans = Vec::with_capacity(words.len());
    for j in 0..words.len() {
        let start = ids.len();
        ids.extend(tokenizer.encode(&word_piece(words, j))?);
        spans.push(start..ids.len());
    }
    Ok((ids, spans))
}

/// Word `j` as it is encoded: with the space before it, but for a text's first word.
fn word_piece(words: &[&str], j: usize) -> String {
    if j == 0 {
        words[0].to_string()
    } else {
        format!(" {}", words[j])
    }
}

fn log_sum_exp(values: impl Iterator<Item = f64>) -> f64 {
    let values: Vec<f64> = values.collect();
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return max;
    }
    max + values.iter().map(|v| (v - max).exp()).sum::<f64>().ln()
}

/// Canonical surprisal of every word with the beginning-of-word correction, in bits, from one
/// forward pass over the text.
///
/// # Shapes
/// - 1 + the text's tokens ≤ `n_positions`
pub async fn canonical_surprisals(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    words: &[&str],
) -> Result<Vec<f64>, SurprisalError> {
    Ok(canonical_with_tokens(model, tokenizer, words)
        .await?
        .into_iter()
        .map(|(bits, _)| bits)
        .collect())
}

/// [`canonical_surprisals`] with each word's token ids.
async fn canonical_with_tokens(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    words: &[&str],
) -> Result<Vec<(f64, Vec<u32>)>, SurprisalError> {
    if words.is_empty() {
        return Err(SurprisalError::NoWords);
    }
    let (ids, spans) = word_spans(tokenizer, words)?;
    if ids.len() > model.n_positions {
        return Err(SurprisalError::TooLong {
            tokens: ids.len(),
            max: model.n_positions,
        });
    }
    let bow = beginning_of_word_ids(tokenizer);
    let is_bow = |id: u32| bow.binary_search(&id).is_ok();
    let hidden = model.forward_cached(
        model.token_tensor(std::slice::from_ref(&ids))?,
        &mut model.new_cache(None, 1, ids.len()),
    )?;
    let n_embd = hidden.dims()[2];
    let vocab = model.vocab_size;
    // Row r predicts the token after ids[r]: its log-prob of ids[r + 1] and of a space next.
    let mut next_logprob = Vec::with_capacity(ids.len());
    let mut bow_logprob = Vec::with_capacity(ids.len());
    for start in (0..ids.len()).step_by(HEAD_ROWS) {
        let end = (start + HEAD_ROWS).min(ids.len());
        let rows = hidden.clone().slice([0..1, start..end, 0..n_embd]);
        let host = read_f32(log_softmax(
            model.logits(rows)?.reshape([end - start, vocab]),
            1,
        ))
        .await?;
        for (offset, row) in host.chunks_exact(vocab).enumerate() {
            let r = start + offset;
            next_logprob.push(ids.get(r + 1).map(|&id| row[id as usize] as f64));
            bow_logprob.push(log_sum_exp(bow.iter().map(|&id| row[id as usize] as f64)));
        }
    }
    // minicons' masks over the scored tokens (ids[1..]): a correction is added after a token
    // whose successor begins a word (or that ends the text), and subtracted before the token
    // that follows it.
    let scored = ids.len() - 1;
    let adds_after: Vec<bool> = (0..scored)
        .map(|i| i + 1 == scored || is_bow(ids[i + 2]))
        .collect();
    let token_score = |i: usize| -> f64 {
        let mut score = next_logprob[i].unwrap_or(f64::NEG_INFINITY);
        if adds_after[i] {
            score += bow_logprob[i + 1];
        }
        if i > 0 && adds_after[i - 1] {
            score -= bow_logprob[i];
        }
        score
    };
    Ok(spans
        .iter()
        .map(|span| {
            let ln: f64 = (span.start - 1..span.end - 1).map(token_score).sum();
            (-ln / std::f64::consts::LN_2, ids[span.clone()].to_vec())
        })
        .collect())
}

/// −log₂ P(the next word is `words[j]`'s cloze word | `<|endoftext|>` and the words before it),
/// over every segmentation; `None` when the word starts with punctuation or holds no letter or
/// digit, or its probability underflows. Where the word's segmentations (its bytes and a few
/// tokens after it) would not fit after all those words in what the model reads at once, the
/// context loses its first words, one at a time, until they do (the last words of a window, or
/// of a text near the model's length, have less room after them than the canonical tokens need).
pub async fn all_segmentations_surprisal(
    scorer: &mut WordScorer,
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    words: &[&str],
    j: usize,
    monitor: &mut dyn Monitor,
) -> Result<Option<f64>, SurprisalError> {
    let word = words[j];
    let Some(cloze_word) = first_word(word).filter(|w| word.starts_with(w)) else {
        return Ok(None);
    };
    let mut first = 0;
    loop {
        let context = words[first..j].join(" ");
        let scored = scorer
            .score_from(
                model,
                tokenizer,
                (&context, ContextStart::BeginOfText),
                &[cloze_word.to_string()],
                1.0,
                monitor,
            )
            .await;
        match scored {
            Err(WordProbError::Model(ModelError::ContextTooLong { .. })) if first < j => {
                first += 1;
            }
            scored => {
                return Ok(scored?
                    .first()
                    .and_then(|p| p.logprob)
                    .map(|ln| -ln / std::f64::consts::LN_2));
            }
        }
    }
}

/// How much of [`text_surprisals`] to compute beyond the canonical surprisal.
#[derive(Clone, Debug, Default)]
pub struct SurprisalOptions {
    /// Score every word's every-segmentation probability.
    pub all_segmentations: bool,
    /// Sample the next word before each word (entropy); `None` leaves entropy out.
    pub entropy_samples: Option<SamplerConfig>,
}

impl SurprisalOptions {
    /// Every predictor: each word's every-segmentation probability and, with `samples` > 0,
    /// its entropy from `samples` continuations drawn from `seed` (word j: `seed` + j), contexts
    /// joined as the sampler joins them, padded to shared lengths when `batch_buckets` (a GPU).
    pub fn every_predictor(
        samples: usize,
        seed: u64,
        batch_buckets: bool,
    ) -> Result<Self, SamplerError> {
        let entropy_samples = (samples > 0)
            .then(|| {
                SamplerConfig::new(samples, seed).and_then(|c| {
                    c.with_contexts_per_pass(contexts_to_join(samples))
                        .map(|c| c.with_batch_buckets(batch_buckets))
                })
            })
            .transpose()?;
        Ok(SurprisalOptions {
            all_segmentations: true,
            entropy_samples,
        })
    }
}

/// Every predictor of every word of `text` (split at whitespace): [`word_surprisals`] of its
/// words.
pub async fn text_surprisals(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    text: &str,
    options: &SurprisalOptions,
    monitor: &mut dyn Monitor,
) -> Result<Vec<WordSurprisal>, SurprisalError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    word_surprisals(model, tokenizer, &words, options, monitor).await
}

/// Every predictor of every one of `words`, read after one another with a space between, in
/// windows where they are longer than the model reads at once (room kept for the sampler's
/// continuation when entropy is sampled). Word `j`'s entropy uses the sampler's seed + `j`,
/// whatever window it falls in.
pub async fn word_surprisals(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    words: &[&str],
    options: &SurprisalOptions,
    monitor: &mut dyn Monitor,
) -> Result<Vec<WordSurprisal>, SurprisalError> {
    if words.is_empty() {
        return Err(SurprisalError::NoWords);
    }
    // A window's first word is encoded without its space: plan with the longer of the two.
    let mut word_tokens = Vec::with_capacity(words.len());
    for (j, word) in words.iter().enumerate() {
        let spaced = tokenizer.encode(&word_piece(words, j))?.len();
        word_tokens.push(spaced.max(tokenizer.encode(word)?.len()));
    }
    let room = options
        .entropy_samples
        .as_ref()
        .map_or(0, SamplerConfig::token_budget);
    // The begin-of-text token and the sampler's room come before the words.
    let capacity = model.n_positions.saturating_sub(1 + room);
    let mut out = Vec::with_capacity(words.len());
    let mut scorer = WordScorer::new(tokenizer);
    for window in plan_windows(&word_tokens, capacity)? {
        let read = &words[window.start..window.scored.end];
        let first = window.scored.start - window.start;
        let canonical = canonical_with_tokens(model, tokenizer, read).await?;
        let mut rows: Vec<WordSurprisal> = canonical
            .into_iter()
            .enumerate()
            .skip(first)
            .map(|(i, (surprisal_bits, token_ids))| WordSurprisal {
                word: read[i].to_string(),
                surprisal_bits,
                surprisal_all_segmentations_bits: None,
                entropy_bits: None,
                entropy_standard_error_bits: None,
                token_ids,
                context_words: i,
            })
            .collect();
        if options.all_segmentations {
            for (i, row) in rows.iter_mut().enumerate() {
                row.surprisal_all_segmentations_bits = all_segmentations_surprisal(
                    &mut scorer,
                    model,
                    tokenizer,
                    read,
                    first + i,
                    monitor,
                )
                .await?;
            }
        }
        if let Some(config) = &options.entropy_samples {
            let contexts: Vec<String> = (first..read.len()).map(|i| read[..i].join(" ")).collect();
            let config = config
                .clone()
                .with_seed(config.seed().wrapping_add(window.scored.start as u64))
                .with_context_start(ContextStart::BeginOfText);
            let samples =
                sample_words_for_contexts(model, tokenizer, &contexts, &config, monitor).await?;
            for (row, samples) in rows.iter_mut().zip(samples) {
                if let Ok(entropy) =
                    EntropyEstimate::from_counts(samples.words.values().map(|&c| c as f64))
                {
                    row.entropy_bits = Some(entropy.bits);
                    row.entropy_standard_error_bits = Some(entropy.standard_error_bits);
                }
            }
        }
        out.extend(rows);
    }
    Ok(out)
}
