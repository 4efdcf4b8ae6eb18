//! The two-token game: the true next token beside one GPT-2 sampled, in random order; the player
//! answers with one of 11 buttons how likely the left one is the original.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::schedule::Slot;
use crate::analysis::perplexity::{PTrue, Pair, PerplexityError, Round, reward};
use crate::rng::{SplitMix64, stable_hash};

/// One answered round (a row of the long-format export).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TwoTokenRecord {
    pub participant: String,
    pub passage: String,
    /// 0-based token position.
    pub position: u32,
    /// 0-based round at this position.
    pub round: u32,
    pub context: String,
    pub true_token: u32,
    pub true_token_text: String,
    pub other_token: u32,
    pub other_token_text: String,
    /// Whether the true token was shown on the left.
    pub true_left: bool,
    /// The button pressed: percent that the left token is the original (50 when both were the
    /// same token, answered automatically).
    pub button: u8,
    /// The answer as the probability that the true token is the original.
    pub p_true: f64,
    /// R = 1000 · g(true) · (ln p_true − ln 0.5).
    pub reward: f64,
    /// g(true|c) and g(other|c) under the generator (GPT-2 as loaded).
    pub g_true: f64,
    pub g_other: f64,
    pub ms_to_answer: Option<f64>,
    pub timestamp: String,
    pub practice: bool,
    /// The run the answer was given in (see `crate::game::design::run_scope`); empty in exports made
    /// before runs were kept.
    #[serde(default)]
    pub run: String,
}

/// How a round is set up before the player sees it: the seed for drawing the other token and
/// the side of the true token, both fixed by the study seed and the slot (a reload shows the
/// same round).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundSetup {
    pub sample_seed: u64,
    pub true_left: bool,
}

impl RoundSetup {
    pub fn for_slot(seed: u64, slot: &Slot) -> Self {
        let key = format!(
            "{}\u{1f}{}\u{1f}{}",
            slot.passage, slot.position, slot.round
        );
        let mut rng = SplitMix64::new(seed ^ stable_hash(&key));
        let sample_seed = rng.next_u64();
        Self {
            sample_seed,
            true_left: rng.next_u64() & 1 == 0,
        }
    }
}

/// The record of a round once answered (`button` is ignored and 50 used when both tokens are
/// the same, as the game then answers by itself).
pub struct Answer<'a> {
    pub participant: &'a str,
    /// The run (see `crate::game::design::run_scope`).
    pub run: &'a str,
    pub slot: &'a Slot,
    pub context: &'a str,
    pub true_token: (u32, &'a str),
    pub other_token: (u32, &'a str),
    pub g_true: f64,
    pub g_other: f64,
    pub true_left: bool,
    pub button: u8,
    pub ms_to_answer: Option<f64>,
    pub timestamp: &'a str,
}

impl Answer<'_> {
    pub fn record(&self) -> Result<TwoTokenRecord, PerplexityError> {
        let same = self.true_token.0 == self.other_token.0;
        let button = if same { 50 } else { self.button };
        let p_true = PTrue::from_button(button, self.true_left)?;
        Ok(TwoTokenRecord {
            participant: self.participant.to_string(),
            passage: self.slot.passage.clone(),
            position: self.slot.position,
            round: self.slot.round,
            context: self.context.to_string(),
            true_token: self.true_token.0,
            true_token_text: self.true_token.1.to_string(),
            other_token: self.other_token.0,
            other_token_text: self.other_token.1.to_string(),
            true_left: self.true_left,
            button,
            p_true: p_true.get(),
            reward: reward(self.g_true, p_true),
            g_true: self.g_true,
            g_other: self.g_other,
            ms_to_answer: self.ms_to_answer,
            timestamp: self.timestamp.to_string(),
            practice: self.slot.practice,
            run: self.run.to_string(),
        })
    }
}

/// Importance-sampling pairs from records (practice left out): one pair per (passage,
/// position), pooling every participant's rounds there, or only `participant`'s.
pub fn pairs(
    records: &[TwoTokenRecord],
    participant: Option<&str>,
) -> Result<Vec<Pair>, PerplexityError> {
    let mut by: BTreeMap<(&str, u32), Pair> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| !r.practice && participant.is_none_or(|p| p == r.participant))
    {
        let pair = by.entry((&r.passage, r.position)).or_insert_with(|| Pair {
            logp_true: r.g_true.ln(),
            rounds: Vec::new(),
        });
        pair.rounds.push(Round {
            logp_other: r.g_other.ln(),
            p_true: PTrue::new(r.p_true)?,
        });
    }
    if by.is_empty() {
        return Err(PerplexityError::Empty);
    }
    Ok(by.into_values().collect())
}

/// Another model's log-probabilities on the rounds of [`pairs`], in the same order, for
/// [`crate::analysis::perplexity::model_player_pairs`]: (ln m(true), [ln m(other) per round]) per
/// pair. `lookup` gives (ln m(true|c), ln m(other|c)) for a record; `None` while any scored
/// record has none yet.
pub fn model_logprobs_for_pairs(
    records: &[TwoTokenRecord],
    participant: Option<&str>,
    lookup: impl Fn(&TwoTokenRecord) -> Option<(f64, f64)>,
) -> Option<Vec<(f64, Vec<f64>)>> {
    let mut by: BTreeMap<(&str, u32), (f64, Vec<f64>)> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| !r.practice && participant.is_none_or(|p| p == r.participant))
    {
        let (m_true, m_other) = lookup(r)?;
        by.entry((&r.passage, r.position))
            .or_insert_with(|| (m_true, Vec::new()))
            .1
            .push(m_other);
    }
    Some(by.into_values().collect())
}

/// Another model's log-probabilities on answered rounds (a second player beside GPT-2), kept
/// per round as they are computed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelScores {
    pub name: String,
    by_round: BTreeMap<(String, String, u32, u32), (f64, f64)>,
}

impl ModelScores {
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            by_round: BTreeMap::new(),
        }
    }

    fn key(r: &TwoTokenRecord) -> (String, String, u32, u32) {
        (
            r.participant.clone(),
            r.passage.clone(),
            r.position,
            r.round,
        )
    }

    /// Stores ln m(true|c) and ln m(other|c) for the round of `record`.
    pub fn insert(&mut self, record: &TwoTokenRecord, m_true: f64, m_other: f64) {
        self.by_round.insert(Self::key(record), (m_true, m_other));
    }

    /// Scored (non-practice) records this model has no numbers for yet.
    pub fn missing<'a>(&self, records: &'a [TwoTokenRecord]) -> Vec<&'a TwoTokenRecord> {
        records
            .iter()
            .filter(|r| !r.practice && !self.by_round.contains_key(&Self::key(r)))
            .collect()
    }

    /// The numbers in the order of [`pairs`] (`None` while some are missing).
    pub fn for_pairs(&self, records: &[TwoTokenRecord]) -> Option<Vec<(f64, Vec<f64>)>> {
        model_logprobs_for_pairs(records, None, |r| self.by_round.get(&Self::key(r)).copied())
    }
}

/// Total shown reward (practice left out).
pub fn total_reward(records: &[TwoTokenRecord]) -> f64 {
    // `+ 0.0`: an empty float sum is −0.0, shown as "-0".
    records
        .iter()
        .filter(|r| !r.practice)
        .map(|r| r.reward)
        .sum::<f64>()
        + 0.0
}
