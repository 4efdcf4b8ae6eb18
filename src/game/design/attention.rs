//! Attention checks: an instruction with a known answer placed inside a passage ("to show you
//! are reading, type the word *purple*"), shown in every game between two of the passage's
//! answers. Each answer is recorded with whether it passed, travels in the export's manifest,
//! and lets the Analysis page leave out participants who failed one.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::text::words::normalize;

/// Longest accepted answer to a check, in characters.
pub const MAX_ANSWER_CHARS: usize = 100;

/// One check as the study config names it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttentionCheck {
    /// Names the check in the results; default `passage@after`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The passage it is shown in (built-in or the study's own).
    pub passage: String,
    /// Shown after this many of the passage's answers (0: before the first). A number past the
    /// passage's answers shows it before the passage's last answer, so it is never skipped.
    #[serde(default)]
    pub after: usize,
    /// What the participant reads, e.g. `To show you are reading, type the word "purple".`
    pub instruction: String,
    /// The answer that passes (compared as words are: case and punctuation aside).
    pub answer: String,
}

impl AttentionCheck {
    /// The id results name it by.
    pub fn name(&self) -> String {
        if self.id.trim().is_empty() {
            format!("{}@{}", self.passage, self.after)
        } else {
            self.id.trim().to_string()
        }
    }
}

/// Why a study's checks cannot be used.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum AttentionError {
    #[error("attention check {0:?} needs an instruction and an answer")]
    Empty(String),
    #[error("attention check {0:?} is named twice")]
    Duplicate(String),
    #[error("attention check {check:?} is in passage {passage:?}, which the study does not have")]
    UnknownPassage { check: String, passage: String },
}

/// Checks a study's attention checks: each has an instruction and an answer, a name of its
/// own, and a passage `known` says the study has.
pub fn check_all(
    checks: &[AttentionCheck],
    known: impl Fn(&str) -> bool,
) -> Result<(), AttentionError> {
    let mut names = BTreeSet::new();
    for check in checks {
        let name = check.name();
        if check.instruction.trim().is_empty() || normalize(&check.answer).is_empty() {
            return Err(AttentionError::Empty(name));
        }
        if !known(&check.passage) {
            return Err(AttentionError::UnknownPassage {
                check: name,
                passage: check.passage.clone(),
            });
        }
        if !names.insert(name.clone()) {
            return Err(AttentionError::Duplicate(name));
        }
    }
    Ok(())
}

/// The check to show now, if any: in `passage`, once `answered` of its `answers` are given,
/// the first not yet `done` (by name) whose place has come.
///
/// ```
/// use clozelab::game::design::attention::{AttentionCheck, due};
/// let check = AttentionCheck { id: String::new(), passage: "p1".into(), after: 2,
///     instruction: "Type purple.".into(), answer: "purple".into() };
/// let checks = [check];
/// assert!(due(&checks, "p1", 1, 10, &[]).is_none());
/// assert_eq!(due(&checks, "p1", 2, 10, &[]).unwrap().name(), "p1@2");
/// assert!(due(&checks, "p1", 2, 10, &["p1@2".to_string()]).is_none());
/// assert!(due(&checks, "p2", 2, 10, &[]).is_none());
/// // Past the passage's end: before its last answer.
/// assert!(due(&checks, "p1", 1, 2, &[]).is_some());
/// ```
pub fn due<'a>(
    checks: &'a [AttentionCheck],
    passage: &str,
    answered: usize,
    answers: usize,
    done: &[String],
) -> Option<&'a AttentionCheck> {
    checks.iter().find(|c| {
        c.passage == passage
            && c.after.min(answers.saturating_sub(1)) <= answered
            && !done.contains(&c.name())
    })
}

/// A participant's answer to one check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttentionResult {
    pub participant: String,
    pub check: String,
    pub passage: String,
    pub expected: String,
    pub answer: String,
    pub passed: bool,
    /// Milliseconds from the check being shown to the answer.
    pub response_time_ms: Option<f64>,
    pub timestamp: String,
}

impl AttentionResult {
    /// Scores `answer` against the check: it passes when it is the expected word(s), whatever
    /// the case and punctuation.
    ///
    /// ```
    /// use clozelab::game::design::attention::{AttentionCheck, AttentionResult};
    /// let check = AttentionCheck { id: "c1".into(), passage: "p1".into(), after: 0,
    ///     instruction: "Type purple.".into(), answer: "purple".into() };
    /// assert!(AttentionResult::new("P1", &check, " Purple. ", None, "t").passed);
    /// assert!(!AttentionResult::new("P1", &check, "the", None, "t").passed);
    /// ```
    pub fn new(
        participant: &str,
        check: &AttentionCheck,
        answer: &str,
        response_time_ms: Option<f64>,
        timestamp: &str,
    ) -> Self {
        let answer: String = answer.trim().chars().take(MAX_ANSWER_CHARS).collect();
        Self {
            participant: participant.to_string(),
            check: check.name(),
            passage: check.passage.clone(),
            expected: check.answer.clone(),
            passed: normalize(&answer) == normalize(&check.answer),
            answer,
            response_time_ms,
            timestamp: timestamp.to_string(),
        }
    }
}

/// (passed, failed) among `results`.
pub fn tally(results: &[AttentionResult]) -> (usize, usize) {
    let passed = results.iter().filter(|r| r.passed).count();
    (passed, results.len() - passed)
}
