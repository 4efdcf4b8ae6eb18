//! Where a game's responses are kept, and the participant id this browser plays as.

use crate::app::web::idb::IdbStore;
use crate::data::ResponseRecord;
use crate::game::store::{MemoryStore, ResponseStore, StoreError};

/// IndexedDB when it works; memory otherwise (the page then says so and offers downloads).
#[derive(Clone)]
pub enum AnyStore {
    Idb(IdbStore),
    Memory(MemoryStore),
}

impl ResponseStore for AnyStore {
    async fn save(&mut self, record: &ResponseRecord) -> Result<(), StoreError> {
        match self {
            AnyStore::Idb(s) => s.save(record).await,
            AnyStore::Memory(s) => s.save(record).await,
        }
    }
    async fn load(&self, participant: &str) -> Result<Vec<ResponseRecord>, StoreError> {
        match self {
            AnyStore::Idb(s) => s.load(participant).await,
            AnyStore::Memory(s) => s.load(participant).await,
        }
    }
}

/// A participant id kept in localStorage, so a reload continues the same participant.
pub fn local_participant_id() -> String {
    use gloo_storage::Storage;
    const KEY: &str = "clozelab-participant";
    if let Ok(id) = gloo_storage::LocalStorage::get::<String>(KEY) {
        return id;
    }
    let id = format!(
        "anon-{:08x}{:08x}",
        (js_sys::Math::random() * 4294967296.0) as u32,
        (js_sys::Math::random() * 4294967296.0) as u32
    );
    // Without localStorage the id lives as long as the page: stated by the storage warning.
    let _ = gloo_storage::LocalStorage::set(KEY, &id);
    id
}
