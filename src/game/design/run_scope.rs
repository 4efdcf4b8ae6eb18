//! Which run an answer belongs to. A participant id alone does not say: the same Prolific id
//! plays a pilot and then the main study, JATOS's test runs all share one worker, and on a lab
//! computer the next person inherits the browser. So every stored answer, attention check,
//! outbox entry and resume point is kept under a [`RunScope`]: the study (a stable id in its
//! config), the run inside it (JATOS's study result, Prolific's session, or an id the page
//! makes once per participant and study) and the participant.

use serde::{Deserialize, Serialize};

/// Longest study or run id accepted.
pub const MAX_SCOPE_ID_LEN: usize = 128;

/// The run of a preview: its answers live in the page only.
pub const PREVIEW_RUN: &str = "preview";

#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum RunScopeError {
    #[error("study_id must be 1 to {MAX_SCOPE_ID_LEN} letters, digits, '-', '_' or '.', got {0:?}")]
    StudyId(String),
}

/// Where one run's answers are kept: study, run and participant.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RunScope {
    pub study: String,
    pub run: String,
    pub participant: String,
}

/// Whether `id` can name a study: `[A-Za-z0-9._-]`, 1 to [`MAX_SCOPE_ID_LEN`] characters.
///
/// ```
/// use clozelab::game::design::run_scope::check_study_id;
/// assert!(check_study_id("cloze-2026.pilot_1").is_ok());
/// assert!(check_study_id("").is_err() && check_study_id("a/b").is_err());
/// ```
pub fn check_study_id(id: &str) -> Result<(), RunScopeError> {
    let fine = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || id.len() > MAX_SCOPE_ID_LEN || !id.chars().all(fine) {
        return Err(RunScopeError::StudyId(id.to_string()));
    }
    Ok(())
}

/// A run id from an outside system's id (`jatos-12`, `prolific-…`), or `None` when that id is
/// empty, too long, holds control characters, or is Prolific's placeholder left unfilled
/// (`{{%SESSION_ID%}}`, a link tried outside Prolific): the page then makes its own.
///
/// ```
/// use clozelab::game::design::run_scope::outside_run_id;
/// assert_eq!(outside_run_id("prolific", " 5f1c "), Some("prolific-5f1c".to_string()));
/// assert_eq!(outside_run_id("jatos", ""), None);
/// assert_eq!(outside_run_id("jatos", "a\nb"), None);
/// assert_eq!(outside_run_id("prolific", "{{%SESSION_ID%}}"), None);
/// ```
pub fn outside_run_id(system: &str, id: &str) -> Option<String> {
    let id = id.trim();
    let placeholder = id.starts_with("{{%") && id.ends_with("%}}");
    (!id.is_empty()
        && !placeholder
        && id.chars().count() <= MAX_SCOPE_ID_LEN
        && !id.chars().any(char::is_control))
    .then(|| format!("{system}-{id}"))
}

/// A run id the page makes (no JATOS, no Prolific session): `local-` and 16 hex digits from
/// two random 32-bit numbers the caller draws.
///
/// ```
/// use clozelab::game::design::run_scope::page_run_id;
/// assert_eq!(page_run_id(0xdead_beef, 7), "local-deadbeef00000007");
/// ```
pub fn page_run_id(high: u32, low: u32) -> String {
    format!("local-{high:08x}{low:08x}")
}

/// A new study's id, as the Study page makes it: `study-` and 16 hex digits from two random
/// 32-bit numbers the caller draws.
///
/// ```
/// use clozelab::game::design::run_scope::{check_study_id, new_study_id};
/// assert_eq!(new_study_id(1, 2), "study-0000000100000002");
/// assert!(check_study_id(&new_study_id(u32::MAX, 0)).is_ok());
/// ```
pub fn new_study_id(high: u32, low: u32) -> String {
    format!("study-{high:08x}{low:08x}")
}

impl RunScope {
    /// The prefix of every storage key of this run (unit separators: they cannot be typed, so
    /// ids cannot run into each other).
    ///
    /// ```
    /// use clozelab::game::design::run_scope::RunScope;
    /// let scope = RunScope { study: "s".into(), run: "r".into(), participant: "p".into() };
    /// assert_eq!(scope.storage_prefix(), "s\u{1f}r\u{1f}p\u{1f}");
    /// ```
    pub fn storage_prefix(&self) -> String {
        format!(
            "{}\u{1f}{}\u{1f}{}\u{1f}",
            self.study, self.run, self.participant
        )
    }

    /// The idempotency key of one answer on the study's server:
    /// `participant/run/passage/position` (`participant/passage/position` for an answer of no
    /// run, as exports before runs were kept).
    ///
    /// ```
    /// use clozelab::game::design::run_scope::RunScope;
    /// let scope = RunScope { study: "s".into(), run: "jatos-4".into(), participant: "P1".into() };
    /// assert_eq!(scope.response_key("storm", 3), "P1/jatos-4/storm/3");
    /// ```
    pub fn response_key(&self, passage: &str, position: u32) -> String {
        response_key_in(&self.participant, &self.run, passage, position)
    }

    /// The idempotency key of the run's final submission: `participant/study/run/complete`.
    pub fn submission_key(&self) -> String {
        format!("{}/{}/{}/complete", self.participant, self.study, self.run)
    }

    /// The outbox key of the run's withdrawal (JATOS's abort): `participant/study/run/withdrawn`.
    pub fn withdrawal_key(&self) -> String {
        format!("{}/{}/{}/withdrawn", self.participant, self.study, self.run)
    }
}

/// [`RunScope::response_key`] from its parts.
pub fn response_key_in(participant: &str, run: &str, passage: &str, position: u32) -> String {
    if run.is_empty() {
        format!("{participant}/{passage}/{position}")
    } else {
        format!("{participant}/{run}/{passage}/{position}")
    }
}
