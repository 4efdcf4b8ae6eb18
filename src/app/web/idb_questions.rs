//! A participant's answers to the study's questions, and when they agreed to the consent, in
//! IndexedDB: one JSON record each in the token games' store under the run's prefix and
//! `questions`, so a reload does not ask again, no other run sees them, and declining or
//! withdrawing deletes them with everything else of the run.

use super::idb::IdbStore;
use crate::game::design::questions::QuestionAnswer;
use crate::game::design::run_scope::RunScope;
use crate::game::run::store::StoreError;

fn prefix(scope: &RunScope) -> String {
    format!("{}questions\u{1f}", scope.storage_prefix())
}

/// The consent's record, beside the answers (a question id never starts with `~`).
const CONSENT: &str = "~consent";

impl IdbStore {
    /// Saves one answer of the run `scope`; resolves once it is on disk.
    pub async fn save_question_answer(
        &self,
        scope: &RunScope,
        answer: &QuestionAnswer,
    ) -> Result<(), StoreError> {
        let json =
            serde_json::to_string(answer).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let key = format!("{}{}", prefix(scope), answer.question);
        self.save_token_record(&key, &json).await
    }

    /// Saves when the participant of the run `scope` agreed to the consent.
    pub async fn save_consent(&self, scope: &RunScope, at: &str) -> Result<(), StoreError> {
        let json = serde_json::to_string(at).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        self.save_token_record(&format!("{}{CONSENT}", prefix(scope)), &json)
            .await
    }

    /// Every saved answer of the run `scope`, and the consent's time.
    pub async fn question_answers(
        &self,
        scope: &RunScope,
    ) -> Result<(Vec<QuestionAnswer>, Option<String>), StoreError> {
        let texts = self.token_records(&prefix(scope)).await?;
        let answers = texts
            .iter()
            .filter_map(|json| serde_json::from_str(json).ok())
            .collect();
        let consent = texts
            .iter()
            .find_map(|json| serde_json::from_str::<String>(json).ok());
        Ok((answers, consent))
    }
}
