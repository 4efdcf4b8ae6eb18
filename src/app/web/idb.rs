//! IndexedDB behind the core's `ResponseStore`: one object store of responses keyed by run
//! (study, run, participant), passage and position (saving a trial twice keeps one copy; a run
//! reads only its own keys). A save resolves only when its transaction has completed, so the
//! game moves on after the data is on disk.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use super::idb_requests::{committed, unavailable, wait, wait_open};
use crate::data::ResponseRecord;
use crate::game::design::run_scope::RunScope;
use crate::game::run::store::{ResponseStore, StoreError};

const DB_NAME: &str = "clozelab";
pub(super) const STORE: &str = "responses";
/// The next-token games' records (JSON of `TokenRecords` rows), added in version 2.
pub(super) const TOKEN_STORE: &str = "token_records";
/// Results worth keeping across reloads (GPT-2's samples per context on the Analysis page).
const CACHE_STORE: &str = "analysis_cache";
/// Submissions the study's server has not acknowledged yet (JSON of `Pending`), version 4.
pub(super) const OUTBOX_STORE: &str = "outbox";
const DB_VERSION: u32 = 4;

/// An open database.
#[derive(Clone)]
pub struct IdbStore {
    pub(super) db: web_sys::IdbDatabase,
}

fn key(scope: &RunScope, r: &ResponseRecord) -> String {
    // Unit separators: they cannot be typed, so ids cannot collide.
    format!(
        "{}{}\u{1f}{:06}",
        scope.storage_prefix(),
        r.passage,
        r.position
    )
}

impl IdbStore {
    /// Opens (or creates) the database; `Err` in private modes or browsers without IndexedDB.
    pub async fn open() -> Result<Self, StoreError> {
        let window =
            web_sys::window().ok_or_else(|| StoreError::Unavailable("no window".into()))?;
        let factory = window
            .indexed_db()
            .map_err(unavailable)?
            .ok_or_else(|| StoreError::Unavailable("IndexedDB is not available".into()))?;
        let request = factory
            .open_with_u32(DB_NAME, DB_VERSION)
            .map_err(unavailable)?;
        let upgrade_target = request.clone();
        let upgrade = Closure::once_into_js(move || {
            // New database, or one from an older version: create whichever store is missing
            // (what older versions stored stays).
            if let Ok(result) = upgrade_target.result()
                && let Ok(db) = result.dyn_into::<web_sys::IdbDatabase>()
            {
                for name in [STORE, TOKEN_STORE, CACHE_STORE, OUTBOX_STORE] {
                    if !db.object_store_names().contains(name) {
                        let _ = db.create_object_store(name);
                    }
                }
            }
        });
        request.set_onupgradeneeded(Some(upgrade.unchecked_ref()));
        let db = wait_open(&request)
            .await?
            .dyn_into::<web_sys::IdbDatabase>()
            .map_err(unavailable)?;
        // A newer version of the app in another tab wants to upgrade the database: this tab
        // lets go at once instead of blocking it until closed (its next save then fails with a
        // stated reason, and what is in memory can still be downloaded).
        let closing = db.clone();
        let on_version_change = Closure::once_into_js(move || closing.close());
        db.set_onversionchange(Some(on_version_change.unchecked_ref()));
        Ok(Self { db })
    }

    /// Every stored response (all participants).
    pub async fn all(&self) -> Result<Vec<ResponseRecord>, StoreError> {
        let tx = self.db.transaction_with_str(STORE).map_err(unavailable)?;
        let store = tx.object_store(STORE).map_err(unavailable)?;
        let values = wait(&store.get_all().map_err(unavailable)?).await?;
        let array: js_sys::Array = values.dyn_into().map_err(unavailable)?;
        let mut all: Vec<ResponseRecord> = array
            .iter()
            .filter_map(|v| v.as_string())
            .filter_map(|s| serde_json::from_str(&s).ok())
            .collect();
        // Keys hold positions as text (2, 20, 3): order by the numbers instead.
        all.sort_by(|a, b| {
            (&a.participant, &a.run, &a.passage, a.position).cmp(&(
                &b.participant,
                &b.run,
                &b.passage,
                b.position,
            ))
        });
        Ok(all)
    }
}

impl IdbStore {
    /// Saves one next-token game record as JSON under `key`; resolves once it is on disk.
    pub async fn save_token_record(&self, key: &str, json: &str) -> Result<(), StoreError> {
        self.put_text(TOKEN_STORE, key, json).await
    }

    /// Every stored next-token record whose key starts with `prefix`, as JSON text.
    pub async fn token_records(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        Ok(self
            .texts_with_prefix(TOKEN_STORE, prefix)
            .await?
            .into_iter()
            .map(|(_, v)| v)
            .collect())
    }

    /// Caches `json` under `key` (Analysis page results).
    pub async fn cache_put(&self, key: &str, json: &str) -> Result<(), StoreError> {
        self.put_text(CACHE_STORE, key, json).await
    }

    /// Cached (key, JSON) pairs whose key starts with `prefix`.
    pub async fn cached(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError> {
        self.texts_with_prefix(CACHE_STORE, prefix).await
    }

    pub(super) async fn put_text(
        &self,
        store_name: &str,
        key: &str,
        text: &str,
    ) -> Result<(), StoreError> {
        let tx = self
            .db
            .transaction_with_str_and_mode(store_name, web_sys::IdbTransactionMode::Readwrite)
            .map_err(unavailable)?;
        let store = tx.object_store(store_name).map_err(unavailable)?;
        store
            .put_with_key(&JsValue::from_str(text), &JsValue::from_str(key))
            .map_err(unavailable)?;
        committed(&tx).await
    }

    pub(super) async fn texts_with_prefix(
        &self,
        store_name: &str,
        prefix: &str,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let tx = self
            .db
            .transaction_with_str(store_name)
            .map_err(unavailable)?;
        let store = tx.object_store(store_name).map_err(unavailable)?;
        let range = prefix_range(prefix)?;
        let keys = wait(&store.get_all_keys_with_key(&range).map_err(unavailable)?).await?;
        let values = wait(&store.get_all_with_key(&range).map_err(unavailable)?).await?;
        let keys: js_sys::Array = keys.dyn_into().map_err(unavailable)?;
        let values: js_sys::Array = values.dyn_into().map_err(unavailable)?;
        Ok(keys
            .iter()
            .zip(values.iter())
            .filter_map(|(k, v)| Some((k.as_string()?, v.as_string()?)))
            .filter(|(k, _)| k.starts_with(prefix))
            .collect())
    }
}

/// The keys that start with `prefix` (every key is a string here): from `prefix` itself up to
/// `prefix` followed by the highest UTF-16 unit, so the store reads only those.
fn prefix_range(prefix: &str) -> Result<JsValue, StoreError> {
    web_sys::IdbKeyRange::bound(
        &JsValue::from_str(prefix),
        &JsValue::from_str(&format!("{prefix}\u{ffff}")),
    )
    .map(JsValue::from)
    .map_err(unavailable)
}

impl IdbStore {
    /// The keys of `store_name` that start with `prefix`, without reading their values.
    pub(super) async fn keys_with_prefix(
        &self,
        store_name: &str,
        prefix: &str,
    ) -> Result<Vec<String>, StoreError> {
        let tx = self
            .db
            .transaction_with_str(store_name)
            .map_err(unavailable)?;
        let store = tx.object_store(store_name).map_err(unavailable)?;
        let keys = wait(
            &store
                .get_all_keys_with_key(&prefix_range(prefix)?)
                .map_err(unavailable)?,
        )
        .await?;
        let keys: js_sys::Array = keys.dyn_into().map_err(unavailable)?;
        Ok(keys
            .iter()
            .filter_map(|k| k.as_string())
            .filter(|k| k.starts_with(prefix))
            .collect())
    }
}

impl ResponseStore for IdbStore {
    async fn save(&mut self, scope: &RunScope, record: &ResponseRecord) -> Result<(), StoreError> {
        let json =
            serde_json::to_string(record).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let tx = self
            .db
            .transaction_with_str_and_mode(STORE, web_sys::IdbTransactionMode::Readwrite)
            .map_err(unavailable)?;
        let store = tx.object_store(STORE).map_err(unavailable)?;
        store
            .put_with_key(
                &JsValue::from_str(&json),
                &JsValue::from_str(&key(scope, record)),
            )
            .map_err(unavailable)?;
        committed(&tx).await
    }

    async fn load(&self, scope: &RunScope) -> Result<Vec<ResponseRecord>, StoreError> {
        let mut all: Vec<ResponseRecord> = self
            .texts_with_prefix(STORE, &scope.storage_prefix())
            .await?
            .iter()
            .filter_map(|(_, json)| serde_json::from_str::<ResponseRecord>(json).ok())
            .filter(|r| r.participant == scope.participant && r.run == scope.run)
            .collect();
        all.sort_by(|a, b| (&a.passage, a.position).cmp(&(&b.passage, b.position)));
        Ok(all)
    }
}
