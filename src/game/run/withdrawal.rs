//! A participant leaving a study without taking part: declining consent, or withdrawing during
//! it. Either way nothing of theirs is kept in the browser; a study server is told with a
//! withdrawal notice (so that it, and the results reader, drop what it already holds), JATOS by
//! aborting the run (JATOS then deletes the run's result data itself).

use crate::game::design::participant_texts::Say;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the participant left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaving {
    /// "I do not agree" on the consent screen: nothing was answered.
    Declined,
    /// "Withdraw" during the study: the answers so far are deleted.
    Withdrew,
}

/// What a study server receives when a participant withdraws.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WithdrawalNotice {
    pub participant: String,
    /// The study's title.
    pub study: String,
    pub withdrawn_at: String,
    /// The run withdrawn from (see `game::run_scope`); empty in notices made before runs were
    /// kept, which then stand for every run of the participant.
    #[serde(default)]
    pub run: String,
}

impl WithdrawalNotice {
    /// The notice as JSON: `{"withdrawal": {"participant", "study", "withdrawn_at"}}`.
    ///
    /// ```
    /// use clozelab::game::run::withdrawal::WithdrawalNotice;
    /// let notice = WithdrawalNotice { participant: "P1".into(), study: "S".into(),
    ///     withdrawn_at: "2026-11-24T10:00:00Z".into(), run: "local-1".into() };
    /// let value: serde_json::Value = serde_json::from_str(&notice.to_json()).unwrap();
    /// assert_eq!(WithdrawalNotice::from_value(&value), Some(notice));
    /// ```
    pub fn to_json(&self) -> String {
        serde_json::json!({ "withdrawal": self }).to_string()
    }

    /// Reads a notice from a JSON value (`None` when it is something else).
    pub fn from_value(value: &Value) -> Option<Self> {
        serde_json::from_value(value.get("withdrawal")?.clone()).ok()
    }

    /// The notice's idempotency key: `participant/study/run/withdrawn`.
    pub fn key(&self) -> String {
        format!("{}/{}/{}/withdrawn", self.participant, self.study, self.run)
    }
}

/// What the participant is told once they have left.
pub fn farewell(leaving: Leaving, told_server: bool) -> Say {
    match (leaving, told_server) {
        (Leaving::Declined, _) => Say::LeftDeclined,
        (Leaving::Withdrew, true) => Say::LeftWithdrewTold,
        (Leaving::Withdrew, false) => Say::LeftWithdrew,
    }
}
