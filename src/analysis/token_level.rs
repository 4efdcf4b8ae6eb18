//! Appendix D of Ilia & Aziz (2024): the comparison one level down. The model's exact
//! next-token distribution after the context against the humans' *first tokens* (each response
//! " word" cut into GPT-2 tokens, its first token counted), with TVD and ECE at the token level
//! to set beside the word-level ones.

use std::collections::BTreeMap;

use serde::Serialize;

use super::metrics::{EceConvention, ece_with, mean};
use crate::data::provo::ContextKey;
use crate::text::tokenizer::{BpeTokenizer, TokenizerError};
use crate::text::words::normalize;

/// The first GPT-2 token of `word` as the next word (with its leading space).
pub fn first_token(tokenizer: &BpeTokenizer, word: &str) -> Result<Option<u32>, TokenizerError> {
    Ok(tokenizer.encode(&format!(" {word}"))?.first().copied())
}

/// The humans' first-token distribution: response → count becomes first token → probability.
/// `None` when no response has a token.
pub fn human_first_tokens(
    tokenizer: &BpeTokenizer,
    human: &BTreeMap<String, u32>,
) -> Result<Option<BTreeMap<u32, f64>>, TokenizerError> {
    let mut counts: BTreeMap<u32, f64> = BTreeMap::new();
    for (word, n) in human {
        if let Some(t) = first_token(tokenizer, word)? {
            *counts.entry(t).or_insert(0.0) += f64::from(*n);
        }
    }
    let total: f64 = counts.values().sum();
    Ok((total > 0.0).then(|| counts.into_iter().map(|(t, c)| (t, c / total)).collect()))
}

/// TVD between a full next-token distribution (natural-log probabilities over the vocabulary)
/// and a sparse one: ½ (Σ_{t ∈ H} |p_t − q_t| + (1 − Σ_{t ∈ H} p_t)).
///
/// ```
/// use std::collections::BTreeMap;
/// use clozelab::analysis::token_level::token_tvd;
/// let model = [0.5f32.ln(), 0.25f32.ln(), 0.25f32.ln()];
/// let humans = BTreeMap::from([(0u32, 0.5), (2, 0.5)]);
/// // |0.5 − 0.5| + |0.25 − 0.5| + the model's 0.25 on token 1, halved.
/// assert!((token_tvd(&model, &humans) - 0.25).abs() < 1e-6);
/// ```
pub fn token_tvd(logprobs: &[f32], humans: &BTreeMap<u32, f64>) -> f64 {
    let mut covered = 0.0;
    let mut gap = 0.0;
    for (&t, &q) in humans {
        let p = logprobs
            .get(t as usize)
            .map_or(0.0, |l| f64::from(*l).exp());
        covered += p;
        gap += (p - q).abs();
    }
    0.5 * (gap + (1.0 - covered).max(0.0))
}

/// One context at the token level.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TokenContext {
    pub text_id: u32,
    pub word_num: u32,
    pub tvd: f64,
    /// The model's most likely next token and its probability.
    pub model_top: u32,
    pub model_top_prob: f64,
    /// Whether it is the first token of the original word, of the humans' majority first token.
    pub hit_original: bool,
    pub hit_majority: bool,
}

impl TokenContext {
    /// Compares the model's log-probabilities after the context with the humans' first tokens.
    pub fn new(
        key: ContextKey,
        logprobs: &[f32],
        humans: &BTreeMap<u32, f64>,
        original_first: Option<u32>,
    ) -> Option<Self> {
        let (top, lp) = logprobs
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))?;
        let majority = humans
            .iter()
            .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(t, _)| *t);
        Some(Self {
            text_id: key.text_id,
            word_num: key.word_num,
            tvd: token_tvd(logprobs, humans),
            model_top: top as u32,
            model_top_prob: f64::from(*lp).exp(),
            hit_original: original_first == Some(top as u32),
            hit_majority: majority == Some(top as u32),
        })
    }
}

/// The token-level row: mean TVD, ECE against the original's and the majority's first token,
/// top-1 accuracy. `None` when there are no contexts.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct TokenLevelRow {
    pub contexts: usize,
    pub tvd: f64,
    pub ece_original: f64,
    pub ece_majority: f64,
    pub top1_accuracy: f64,
}

/// The token-level row with its figure (densities of per-context TVD beside the word level).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct TokenLevelReport {
    pub row: TokenLevelRow,
    pub figure: Option<super::figures::Figure>,
}

impl TokenLevelReport {
    /// The row and its figure against Table 1's per-context word-level TVDs; `None` when
    /// there are no contexts.
    pub fn new(
        model: &str,
        contexts: &[TokenContext],
        word_level: &[super::table1::PerContext],
        convention: EceConvention,
    ) -> Option<Self> {
        Some(Self {
            row: summarise(contexts, convention)?,
            figure: super::figures::token_level_density(
                model,
                &contexts.iter().map(|c| c.tvd).collect::<Vec<_>>(),
                word_level,
            ),
        })
    }
}

pub fn summarise(contexts: &[TokenContext], convention: EceConvention) -> Option<TokenLevelRow> {
    let tvd = mean(&contexts.iter().map(|c| c.tvd).collect::<Vec<_>>())?;
    let preds = |hit: fn(&TokenContext) -> bool| -> Vec<(f64, bool)> {
        contexts
            .iter()
            .map(|c| (c.model_top_prob, hit(c)))
            .collect()
    };
    Some(TokenLevelRow {
        contexts: contexts.len(),
        tvd,
        ece_original: ece_with(
            &preds(|c| c.hit_original),
            super::table1::ECE_BINS,
            convention,
        )?,
        ece_majority: ece_with(
            &preds(|c| c.hit_majority),
            super::table1::ECE_BINS,
            convention,
        )?,
        top1_accuracy: mean(
            &contexts
                .iter()
                .map(|c| if c.hit_original { 1.0 } else { 0.0 })
                .collect::<Vec<_>>(),
        )?,
    })
}

/// The original word's first token, as the norms' responses are written (normalised).
pub fn original_first_token(
    tokenizer: &BpeTokenizer,
    original: &str,
) -> Result<Option<u32>, TokenizerError> {
    first_token(tokenizer, &normalize(original))
}
