//! What a study's link says: the participant (the configured URL parameter, Prolific's id,
//! JATOS's worker, or the browser's own), the run (JATOS's study result, Prolific's session, a
//! preview's). (Inside JATOS, the claim of a list in the batch session is
//! [`crate::game::run::jatos_batch::batch_list_claim`].) The same
//! [`StudyConfig`] as [`super::study`], its link-reading half.

use std::collections::BTreeMap;

use super::study::{MAX_ID_LEN, PREVIEW_PARTICIPANT, StudyConfig, StudyError};

impl StudyConfig {
    /// The run named by JATOS (its study result) or the study link (Prolific's `SESSION_ID`);
    /// a preview's own; `None` when the page must make one.
    pub fn run_from_link(&self, params: &BTreeMap<String, String>) -> Option<String> {
        use crate::game::design::run_scope::{PREVIEW_RUN, outside_run_id};
        if self.preview {
            return Some(PREVIEW_RUN.to_string());
        }
        if let Some(run) = &self.jatos {
            let id = run
                .ids
                .get("studyResultId")
                .unwrap_or(&run.study_result_uuid);
            return outside_run_id("jatos", id);
        }
        outside_run_id("prolific", self.parameters(params).get("SESSION_ID")?)
    }

    /// The page's URL parameters, with those of JATOS's study link over them in JATOS.
    pub(crate) fn parameters(&self, page: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut all = page.clone();
        if let Some(run) = &self.jatos {
            all.extend(run.url_parameters.clone());
        }
        all
    }

    /// Whether JATOS or the study link names the participant; when neither does, the browser's
    /// own id plays, and a shared computer's next person needs a new one (`?new_participant`).
    ///
    /// ```
    /// use clozelab::game::design::study::StudyConfig;
    /// let config = StudyConfig::from_json("{}").unwrap();
    /// let link = [("PROLIFIC_PID".to_string(), "P1".to_string())].into();
    /// assert!(config.link_names_participant(&link));
    /// assert!(!config.link_names_participant(&Default::default()));
    /// ```
    pub fn link_names_participant(&self, params: &BTreeMap<String, String>) -> bool {
        let params = self.parameters(params);
        self.jatos.is_some()
            || self
                .participant_params()
                .iter()
                .any(|n| params.contains_key(*n))
    }

    /// The URL parameters that name the participant, first found first.
    fn participant_params(&self) -> [&str; 3] {
        [
            self.participant_param.as_deref().unwrap_or("PROLIFIC_PID"),
            "PROLIFIC_PID",
            "participant",
        ]
    }

    /// The participant id: the configured URL parameter, else `PROLIFIC_PID`, else (in JATOS)
    /// JATOS's worker id, else `fallback` (a generated id the caller keeps across reloads).
    pub fn participant_id(
        &self,
        params: &BTreeMap<String, String>,
        fallback: &str,
    ) -> Result<String, StudyError> {
        if self.preview {
            return Ok(PREVIEW_PARTICIPANT.to_string());
        }
        let params = &self.parameters(params);
        let fallback = self
            .jatos
            .as_ref()
            .and_then(crate::game::design::jatos_run::JatosRun::worker_participant_id)
            .unwrap_or_else(|| fallback.to_string());
        let id = self
            .participant_params()
            .iter()
            .find_map(|n| params.get(*n))
            .map(|s| s.trim().to_string())
            .unwrap_or(fallback);
        if id.is_empty() || id.chars().count() > MAX_ID_LEN || id.chars().any(char::is_control) {
            return Err(StudyError::ParticipantId);
        }
        Ok(id)
    }
}
