//! Where each participant of a study's results stands (complete, incomplete, withdrawn): read
//! from JATOS's export or a study server's bundles by the game layer's results reader, shown
//! beside the analyses.

use serde::{Deserialize, Serialize};

/// Where a participant's run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum RunState {
    /// Every planned answer is there (or JATOS says the run finished).
    Complete,
    /// Some answers are missing and the run did not finish.
    Incomplete,
    /// The participant withdrew: nothing of theirs is kept.
    Withdrawn,
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Complete => "complete",
            Self::Incomplete => "incomplete",
            Self::Withdrawn => "withdrawn",
        })
    }
}

/// One participant of the results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticipantRun {
    pub participant: String,
    /// The run (see `game::run_scope`): one participant may have several (a pilot and the
    /// study, JATOS test runs); empty for answers exported before runs were kept.
    pub run: String,
    /// The study's title, from the bundles' manifest.
    pub study: String,
    /// The counterbalanced list they played, when the study had lists. (Never skipped when
    /// empty: the worker's messages use a format that has no field names.)
    pub list: Option<String>,
    /// How that list was chosen, in words: "link", "JATOS batch" or "id hash".
    #[serde(default)]
    pub list_chosen_by: Option<String>,
    /// Whether their answers came from a preview of the study (the researcher's), not a
    /// participant.
    #[serde(default)]
    pub pilot: bool,
    /// Distinct answers kept (each idempotency key once).
    pub answered: usize,
    /// The answers the participant's plan asked for, when the bundles say.
    pub planned: Option<usize>,
    pub state: RunState,
    /// How many bundles carried this participant's answers (repeats included).
    pub bundles: usize,
    /// Attention checks answered right and wrong.
    #[serde(default)]
    pub attention_passed: usize,
    #[serde(default)]
    pub attention_failed: usize,
    /// What does not add up in this run's data (more answers than planned, two different
    /// answers under one key), for the researcher to look at; empty when all is well.
    #[serde(default)]
    pub warnings: Vec<String>,
}
