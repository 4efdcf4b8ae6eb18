//! Where a game's responses are kept.

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
