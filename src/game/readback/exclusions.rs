//! Who the analyses leave out, and why, as a reviewer can audit it: each rule the researcher
//! chose is applied to every run of the results, and every run left out becomes a row of
//! `exclusions.csv` with its reasons. JATOS test runs and the page's previews are left out by
//! default; runs whose data does not add up (flagged by the merge) always.

use serde::{Deserialize, Serialize};

use crate::data::participant_run::{ParticipantRun, RunState};
use crate::data::{Delimiter, write_delimited};

/// Which runs the analyses leave out.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExclusionRules {
    /// JATOS's test runs (worker type `Jatos`) and the Study page's previews.
    pub test_runs: bool,
    /// Runs that did not complete.
    pub incomplete: bool,
    /// Runs that failed any attention check.
    pub failed_attention: bool,
    /// Participants a question screened out (they have no answers to the passages).
    pub screened_out: bool,
    /// Runs whose median response time (next-word game, practice aside) is under this many
    /// milliseconds.
    pub min_median_response_ms: Option<f64>,
}

impl Default for ExclusionRules {
    fn default() -> Self {
        Self {
            test_runs: true,
            incomplete: false,
            failed_attention: false,
            screened_out: false,
            min_median_response_ms: None,
        }
    }
}

/// Why a run is left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExclusionReason {
    /// Its data does not add up (more answers than planned, two answers under one key).
    Flagged,
    JatosTestRun,
    Preview,
    Incomplete,
    FailedAttention,
    ScreenedOut,
    TooFast,
}

impl ExclusionReason {
    /// Every reason, in the order they are checked (and a run's first reason is counted by).
    pub const ALL: [Self; 7] = [
        Self::Flagged,
        Self::JatosTestRun,
        Self::Preview,
        Self::Incomplete,
        Self::FailedAttention,
        Self::ScreenedOut,
        Self::TooFast,
    ];

    /// The reason as `exclusions.csv` and the trial table write it.
    pub fn code(self) -> &'static str {
        match self {
            Self::Flagged => "flagged",
            Self::JatosTestRun => "jatos_test_run",
            Self::Preview => "preview",
            Self::Incomplete => "incomplete",
            Self::FailedAttention => "failed_attention",
            Self::ScreenedOut => "screened_out",
            Self::TooFast => "too_fast",
        }
    }
}

/// One run left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exclusion {
    pub participant: String,
    pub run: String,
    pub study_id: String,
    pub reasons: Vec<ExclusionReason>,
    /// The reasons in words, with the numbers behind them.
    pub detail: String,
}

impl Exclusion {
    /// The reasons' codes joined with `;`, as the tables write them.
    pub fn reason(&self) -> String {
        self.reasons
            .iter()
            .map(|r| r.code())
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// The runs `rules` leave out, each with every reason that applies; withdrawn runs (whose data
/// was deleted) are not listed.
///
/// ```
/// use clozelab::data::participant_run::{ParticipantRun, RunState};
/// use clozelab::game::readback::exclusions::{ExclusionRules, decide};
/// let mut test = ParticipantRun::bare("P1".into(), "jatos-1".into(), RunState::Complete);
/// test.worker_type = Some("Jatos".into());
/// let mut fast = ParticipantRun::bare("P2".into(), "jatos-2".into(), RunState::Complete);
/// fast.median_response_ms = Some(300.0);
/// let rules = ExclusionRules { min_median_response_ms: Some(500.0), ..Default::default() };
/// let left_out = decide(&[test, fast], &rules);
/// assert_eq!(left_out[0].reason(), "jatos_test_run");
/// assert_eq!(left_out[1].reason(), "too_fast");
/// ```
pub fn decide(runs: &[ParticipantRun], rules: &ExclusionRules) -> Vec<Exclusion> {
    runs.iter()
        .filter(|r| r.state != RunState::Withdrawn)
        .filter_map(|r| {
            let mut reasons = Vec::new();
            let mut detail = Vec::new();
            if !r.warnings.is_empty() {
                reasons.push(ExclusionReason::Flagged);
                detail.push(r.warnings.join("; "));
            }
            if rules.test_runs && r.is_test_run() {
                reasons.push(ExclusionReason::JatosTestRun);
                detail.push("a test run from JATOS's GUI".to_string());
            }
            if rules.test_runs && r.pilot {
                reasons.push(ExclusionReason::Preview);
                detail.push("the Study page's preview".to_string());
            }
            if rules.incomplete && r.state == RunState::Incomplete {
                reasons.push(ExclusionReason::Incomplete);
                let planned = r.planned.map_or("?".to_string(), |n| n.to_string());
                detail.push(format!("{} of {planned} answers", r.answered));
            }
            if rules.failed_attention && r.attention_failed > 0 {
                reasons.push(ExclusionReason::FailedAttention);
                detail.push(format!(
                    "failed {} of {} attention checks",
                    r.attention_failed,
                    r.attention_failed + r.attention_passed
                ));
            }
            if rules.screened_out && r.state == RunState::ScreenedOut {
                reasons.push(ExclusionReason::ScreenedOut);
                let answers: Vec<String> = r
                    .questions
                    .iter()
                    .map(|(q, a)| format!("{q} = {a}"))
                    .collect();
                detail.push(format!("screened out ({})", answers.join(", ")));
            }
            if let (Some(min), Some(median)) = (rules.min_median_response_ms, r.median_response_ms)
                && median < min
            {
                reasons.push(ExclusionReason::TooFast);
                detail.push(format!(
                    "median response time {median:.0} ms, under {min:.0} ms"
                ));
            }
            (!reasons.is_empty()).then(|| Exclusion {
                participant: r.participant.clone(),
                run: r.run.clone(),
                study_id: r.study_id.clone(),
                reasons,
                detail: detail.join("; "),
            })
        })
        .collect()
}

/// `exclusions.csv`: one row per run left out (participant, run, study_id, reason, detail).
pub fn exclusions_csv(exclusions: &[Exclusion]) -> String {
    write_delimited(
        &["participant", "run", "study_id", "reason", "detail"],
        exclusions.iter().map(|e| {
            vec![
                e.participant.clone(),
                e.run.clone(),
                e.study_id.clone(),
                e.reason(),
                e.detail.clone(),
            ]
        }),
        Delimiter::Comma,
    )
}

/// One sentence for Table 1 and the figures: how many runs were left out, by reason.
///
/// ```
/// use clozelab::game::readback::exclusions::{Exclusion, ExclusionReason, left_out_sentence};
/// let e = |r| Exclusion { participant: "P".into(), run: "r".into(), study_id: "s".into(),
///     reasons: vec![r], detail: String::new() };
/// let all = [e(ExclusionReason::JatosTestRun), e(ExclusionReason::TooFast), e(ExclusionReason::TooFast)];
/// assert_eq!(left_out_sentence(&all).unwrap(),
///     "3 runs left out (see exclusions.csv): jatos_test_run 1, too_fast 2");
/// ```
pub fn left_out_sentence(exclusions: &[Exclusion]) -> Option<String> {
    if exclusions.is_empty() {
        return None;
    }
    let mut by_reason = std::collections::BTreeMap::new();
    for reason in exclusions.iter().flat_map(|e| e.reasons.iter()) {
        *by_reason.entry(*reason).or_insert(0usize) += 1;
    }
    let reasons: Vec<String> = by_reason
        .iter()
        .map(|(r, n)| format!("{} {n}", r.code()))
        .collect();
    Some(format!(
        "{} left out (see exclusions.csv): {}",
        super::results_merge::counted(exclusions.len(), "run"),
        reasons.join(", ")
    ))
}
