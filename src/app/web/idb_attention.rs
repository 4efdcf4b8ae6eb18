//! A participant's attention-check answers in IndexedDB: one JSON record per check in the
//! token games' store, keyed `participant␟attention␟check`, so a reload does not ask again and
//! declining or withdrawing deletes them with everything else of the participant.

use super::idb::IdbStore;
use crate::game::attention::AttentionResult;
use crate::game::store::StoreError;

fn prefix(participant: &str) -> String {
    format!("{participant}\u{1f}attention\u{1f}")
}

impl IdbStore {
    /// Saves one answer; resolves once it is on disk.
    pub async fn save_attention(&self, result: &AttentionResult) -> Result<(), StoreError> {
        let json =
            serde_json::to_string(result).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let key = format!("{}{}", prefix(&result.participant), result.check);
        self.save_token_record(&key, &json).await
    }

    /// Every saved answer of `participant`.
    pub async fn attention_results(
        &self,
        participant: &str,
    ) -> Result<Vec<AttentionResult>, StoreError> {
        Ok(self
            .token_records(&prefix(participant))
            .await?
            .iter()
            .filter_map(|json| serde_json::from_str(json).ok())
            .collect())
    }
}
