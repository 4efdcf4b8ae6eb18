//! Adaptive norming as a study states it: the precision every context's norms should reach
//! (see [`crate::analysis::norming::precision`]), and where participants go once they have.
//! Each new participant inside JATOS gets the list whose contexts are furthest from the target
//! (`game::run::norming_state`), so the option works per list, the unit a Latin square
//! rotates: the design stays valid.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::norming::precision::{PrecisionTarget, TargetError};

/// The study config's `adaptive_norming` section.
///
/// ```
/// use clozelab::game::design::adaptive_norming::AdaptiveNorming;
/// let section: AdaptiveNorming = serde_json::from_str(
///     r#"{"max_interval_width": 0.3, "share": 0.9, "full_url": "https://example.org/full"}"#,
/// ).unwrap();
/// let target = section.target().unwrap();
/// assert_eq!(target.describe(), "90% of the contexts with the target word's 95% interval at most 0.3 wide");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveNorming {
    /// Bound on the width of each context's 95% interval of the target word's cloze
    /// probability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_interval_width: Option<f64>,
    /// Bound on each context's estimated probability of a word nobody has given yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unseen_mass: Option<f64>,
    /// The share of contexts that must meet the bounds (default: all).
    #[serde(default = "all_contexts")]
    pub share: f64,
    /// The model's probability of each context's next word before anyone has answered
    /// (context key `passage:position` → probability), written by `clozelab norming-prior`:
    /// where it is missing, 0.5, the most uncertain.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prior: BTreeMap<String, f64>,
    /// Where a participant who arrives after the target is met goes (e.g. Prolific's
    /// "study full" return URL); without it they are told the study is full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_url: Option<String>,
}

fn all_contexts() -> f64 {
    1.0
}

/// Why a study's adaptive norming cannot run as configured.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum AdaptiveNormingError {
    #[error("adaptive_norming: {0}")]
    Target(#[from] TargetError),
    #[error(
        "adaptive_norming chooses among lists of passages: give the study at least two `lists` (or a `latin_square`), so that each new participant can be sent to the one whose contexts are least certain"
    )]
    NeedsLists,
    #[error(
        "adaptive_norming needs cloze answers to measure precision: it runs with the next-word game only"
    )]
    NeedsNextWordGame,
    #[error(
        "adaptive_norming: the prior of {0:?} is not a probability in (0, 1) (or names no context of the study)"
    )]
    Prior(String),
    #[error("adaptive_norming: full_url must be an http(s) address, got {0:?}")]
    FullUrl(String),
}

impl AdaptiveNorming {
    /// The target the section states.
    pub fn target(&self) -> Result<PrecisionTarget, TargetError> {
        PrecisionTarget::new(self.max_interval_width, self.max_unseen_mass, self.share)
    }

    /// The model's probability of a context's next word before any answer.
    pub fn prior_of(&self, context: &str) -> f64 {
        self.prior.get(context).copied().unwrap_or(0.5)
    }

    /// Checks the section against the design: a valid target, at least two lists, the
    /// next-word game, a prior of probabilities for known contexts, a web address to send
    /// participants to when full. `is_context` says whether a prior's key names a context.
    pub fn check(
        &self,
        lists: usize,
        next_word_game: bool,
        is_context: impl Fn(&str) -> bool,
        is_web_address: impl Fn(&str) -> bool,
    ) -> Result<(), AdaptiveNormingError> {
        self.target()?;
        if lists < 2 {
            return Err(AdaptiveNormingError::NeedsLists);
        }
        if !next_word_game {
            return Err(AdaptiveNormingError::NeedsNextWordGame);
        }
        if let Some((key, _)) = self
            .prior
            .iter()
            .find(|(key, p)| !(**p > 0.0 && **p < 1.0 && is_context(key)))
        {
            return Err(AdaptiveNormingError::Prior(key.clone()));
        }
        if let Some(url) = self.full_url.as_ref().filter(|u| !is_web_address(u)) {
            return Err(AdaptiveNormingError::FullUrl(url.clone()));
        }
        Ok(())
    }
}

/// A context's key in the norming state and the prior: `passage:position` (1-based).
///
/// ```
/// assert_eq!(clozelab::game::design::adaptive_norming::context_key("storm", 4), "storm:4");
/// ```
pub fn context_key(passage: &str, position: usize) -> String {
    format!("{passage}:{position}")
}

/// What adaptive norming decided for a participant: a list and why, or that the study is full.
#[derive(Clone, Debug, PartialEq)]
pub enum NormingAssignment {
    List { name: String, reason: String },
    Full { reason: String },
}

/// Adaptive norming outside JATOS, where no browser hears of another: the state the researcher
/// writes from the results so far (`clozelab norming-state`, or the Analysis page) and serves
/// beside the study's config as [`STATE_FILE`]. Every participant's page reads it at the start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NormingStateFile {
    /// When it was written (RFC 3339), said in each run's reason.
    pub written_at: String,
    /// Completed runs per list.
    pub runs: BTreeMap<String, u64>,
    /// Completed runs' answers per context: context key → normalised word → count.
    pub counts: BTreeMap<String, BTreeMap<String, u32>>,
}

/// The state file's name, beside the study's config.
pub const STATE_FILE: &str = "norming-state.json";
