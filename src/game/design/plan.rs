//! One participant's plan: the passages they play in order, their list, and the study and run
//! their answers are kept under ([`crate::game::design::run_scope`]). Made by
//! [`super::study::StudyConfig::plan`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::lists::AssignedList;
use super::passages::Passage;
use crate::game::design::run_scope::RunScope;

/// One participant's plan: passages in order, and where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub participant: String,
    /// Study and session ids from the URL (`STUDY_ID`, `SESSION_ID`), when given.
    pub url_ids: BTreeMap<String, String>,
    pub order_seed: u64,
    /// (passage, practice?) in the order played.
    pub items: Vec<(Passage, bool)>,
    /// The study's id ([`super::study::StudyConfig::study_id`]).
    #[serde(default)]
    pub study_id: String,
    /// The run these answers belong to: JATOS's study result, Prolific's session, or (empty
    /// until the page makes one, [`Plan::in_run`]) an id of the page's.
    #[serde(default)]
    pub run: String,
    /// The participant's list, when the study has lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<AssignedList>,
}

impl Plan {
    /// Where this run's answers are kept.
    pub fn scope(&self) -> RunScope {
        RunScope {
            study: self.study_id.clone(),
            run: self.run.clone(),
            participant: self.participant.clone(),
        }
    }

    /// The plan in the run the page made (`make(study, participant)`), unless JATOS or the study
    /// link named one already.
    pub fn in_run(mut self, make: impl FnOnce(&str, &str) -> String) -> Self {
        if self.run.is_empty() {
            self.run = make(&self.study_id, &self.participant);
        }
        self
    }
}
