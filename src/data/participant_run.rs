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
    /// A question screened the participant out before the passages: only that answer is kept.
    ScreenedOut,
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Complete => "complete",
            Self::Incomplete => "incomplete",
            Self::Withdrawn => "withdrawn",
            Self::ScreenedOut => "screened_out",
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
    /// Why adaptive norming chose that list (its contexts' shortfall against the target).
    #[serde(default)]
    pub list_reason: Option<String>,
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
    /// The study's id, from the bundles' manifest.
    #[serde(default)]
    pub study_id: String,
    /// JATOS's worker type (`Jatos`: a test run from JATOS's GUI), inside JATOS.
    #[serde(default)]
    pub worker_type: Option<String>,
    /// When the participant agreed to the consent (RFC 3339).
    #[serde(default)]
    pub consent_at: Option<String>,
    /// Browser and device: user agent, screen `W×H` CSS pixels, touch.
    #[serde(default)]
    pub user_agent: Option<String>,
    #[serde(default)]
    pub screen: Option<String>,
    #[serde(default)]
    pub touch: Option<bool>,
    /// The answers to the study's questions: (question id, answer).
    #[serde(default)]
    pub questions: Vec<(String, String)>,
    /// Median milliseconds from a context being shown to its answer (next-word game).
    #[serde(default)]
    pub median_response_ms: Option<f64>,
    /// Prolific's `STUDY_ID` and `SESSION_ID` from the study link, when it carried them.
    #[serde(default)]
    pub prolific_study_id: Option<String>,
    #[serde(default)]
    pub prolific_session_id: Option<String>,
}

impl ParticipantRun {
    /// A run known only by who and where it stands (no bundle of it was read).
    pub fn bare(participant: String, run: String, state: RunState) -> Self {
        Self {
            participant,
            run,
            study: String::new(),
            list: None,
            list_chosen_by: None,
            list_reason: None,
            pilot: false,
            answered: 0,
            planned: None,
            state,
            bundles: 0,
            attention_passed: 0,
            attention_failed: 0,
            warnings: Vec::new(),
            study_id: String::new(),
            worker_type: None,
            consent_at: None,
            user_agent: None,
            screen: None,
            touch: None,
            questions: Vec::new(),
            median_response_ms: None,
            prolific_study_id: None,
            prolific_session_id: None,
        }
    }

    /// A JATOS test run (started from JATOS's GUI, worker type `Jatos`).
    pub fn is_test_run(&self) -> bool {
        self.worker_type.as_deref() == Some("Jatos")
    }
}
