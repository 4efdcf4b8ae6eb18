//! Deleting from the browser's store: a preview's token answers, and everything of a
//! participant who declined or withdrew (responses, token answers, unsent submissions).

use wasm_bindgen::JsValue;

use super::idb::{IdbStore, OUTBOX_STORE, STORE, TOKEN_STORE};
use super::idb_requests::{committed, unavailable};
use crate::game::store::StoreError;

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

    /// Deletes every next-token record whose key starts with `prefix` (a preview's answers).
    pub async fn delete_token_records(&self, prefix: &str) -> Result<(), StoreError> {
        self.delete_where(TOKEN_STORE, |k| k.starts_with(prefix))
            .await
            .map(|_| ())
    }

    /// Deletes everything of `participant`: their responses and token answers (keys start
    /// with the participant and a unit separator), and their unsent submissions (keys start
    /// with `participant/`, or are `run_key`, a JATOS run's one key); returns how many.
    pub async fn forget_participant(
        &self,
        participant: &str,
        run_key: Option<&str>,
    ) -> Result<usize, StoreError> {
        let record_prefix = format!("{participant}\u{1f}");
        let outbox_prefix = format!("{participant}/");
        let mut deleted = 0;
        for store in [STORE, TOKEN_STORE] {
            deleted += self
                .delete_where(store, |k| k.starts_with(&record_prefix))
                .await?;
        }
        deleted += self
            .delete_where(OUTBOX_STORE, |k| {
                k.starts_with(&outbox_prefix) || Some(k) == run_key
            })
            .await?;
        Ok(deleted)
    }
}
