//! A participant's attention-check answers in IndexedDB: one JSON record per check in the
//! token games' store, keyed by the run's prefix (study, run, participant), `attention` and the
//! check, so a reload does not ask again, no other run sees them, and declining or withdrawing
//! deletes them with everything else of the run.

use super::idb::IdbStore;
use crate::game::design::attention::AttentionResult;
use crate::game::design::run_scope::RunScope;
use crate::game::run::store::StoreError;

pub(super) fn prefix(scope: &RunScope) -> String {
    format!("{}attention\u{1f}", scope.storage_prefix())
}

impl IdbStore {
    /// Saves one answer of the run `scope`; resolves once it is on disk.
    pub async fn save_attention(
        &self,
        scope: &RunScope,
        result: &AttentionResult,
    ) -> Result<(), StoreError> {
        let json =
            serde_json::to_string(result).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let key = format!("{}{}", prefix(scope), result.check);
        self.save_token_record(&key, &json).await
    }

    /// Every saved answer of the run `scope`.
    pub async fn attention_results(
        &self,
        scope: &RunScope,
    ) -> Result<Vec<AttentionResult>, StoreError> {
        Ok(self
            .token_records(&prefix(scope))
            .await?
            .iter()
            .filter_map(|json| serde_json::from_str(json).ok())
            .collect())
    }
}
