//! Deleting from the browser's store: a preview's token answers, and everything of a run whose
//! participant declined or withdrew (responses, token answers, unsent submissions).

use wasm_bindgen::JsValue;

use super::idb::{IdbStore, OUTBOX_STORE, STORE, TOKEN_STORE};
use super::idb_requests::{committed, unavailable};
use crate::game::design::run_scope::RunScope;
use crate::game::run::store::StoreError;

impl IdbStore {
    /// Deletes every entry of `store_name` whose key `doomed` picks; returns how many.
    async fn delete_where(
        &self,
        store_name: &str,
        doomed: impl Fn(&str) -> bool,
    ) -> Result<usize, StoreError> {
        let keys: Vec<String> = self
            .keys_with_prefix(store_name, "")
            .await?
            .into_iter()
            .filter(|k| doomed(k))
            .collect();
        if keys.is_empty() {
            return Ok(0);
        }
        let tx = self
            .db
            .transaction_with_str_and_mode(store_name, web_sys::IdbTransactionMode::Readwrite)
            .map_err(unavailable)?;
        let store = tx.object_store(store_name).map_err(unavailable)?;
        for key in &keys {
            store.delete(&JsValue::from_str(key)).map_err(unavailable)?;
        }
        committed(&tx).await?;
        Ok(keys.len())
    }

    /// Deletes every next-token record whose key holds `part` (a preview's answers, whatever
    /// the study).
    pub async fn delete_token_records(&self, part: &str) -> Result<(), StoreError> {
        self.delete_where(TOKEN_STORE, |k| k.contains(part))
            .await
            .map(|_| ())
    }

    /// Deletes everything of the run `scope`: its responses, token answers and attention
    /// checks (keys start with the run's prefix), and its unsent submissions (each answer's
    /// key starts with `participant/run/`, the final one is the run's submission key); returns
    /// how many.
    pub async fn forget_run(&self, scope: &RunScope) -> Result<usize, StoreError> {
        let record_prefix = scope.storage_prefix();
        let answer_prefix = format!("{}/{}/", scope.participant, scope.run);
        let submission = scope.submission_key();
        let mut deleted = 0;
        for store in [STORE, TOKEN_STORE] {
            deleted += self
                .delete_where(store, |k| k.starts_with(&record_prefix))
                .await?;
        }
        deleted += self
            .delete_where(OUTBOX_STORE, |k| {
                k.starts_with(&answer_prefix) || k == submission
            })
            .await?;
        Ok(deleted)
    }
}
