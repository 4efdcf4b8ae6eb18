//! Where responses live: a trait the game saves through, an in-memory store for tests and the
//! CLI, and (in the browser layer) IndexedDB. Responses are keyed by (participant, passage,
//! position), so saving the same trial twice keeps one copy.

use std::collections::BTreeMap;

use crate::data::ResponseRecord;

#[derive(Debug, thiserror::Error, PartialEq, Clone)]
pub enum StoreError {
    #[error("storage is full or unavailable: {0}")]
    Unavailable(String),
}

/// The key that makes saving idempotent.
pub fn record_key(r: &ResponseRecord) -> (String, String, u32) {
    (r.participant.clone(), r.passage.clone(), r.position)
}

#[allow(async_fn_in_trait)]
pub trait ResponseStore {
    /// Saves (or overwrites) one response; resolves only once it is stored.
    async fn save(&mut self, record: &ResponseRecord) -> Result<(), StoreError>;
    /// Every stored response of `participant`, in (passage, position) order.
    async fn load(&self, participant: &str) -> Result<Vec<ResponseRecord>, StoreError>;
}

/// Responses in memory; `fail_after` makes saves fail after that many (to test quota errors).
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    pub records: BTreeMap<(String, String, u32), ResponseRecord>,
    pub fail_after: Option<usize>,
}

impl ResponseStore for MemoryStore {
    async fn save(&mut self, record: &ResponseRecord) -> Result<(), StoreError> {
        if self.fail_after.is_some_and(|n| self.records.len() >= n) {
            return Err(StoreError::Unavailable("quota exceeded".into()));
        }
        self.records.insert(record_key(record), record.clone());
        Ok(())
    }

    async fn load(&self, participant: &str) -> Result<Vec<ResponseRecord>, StoreError> {
        Ok(self
            .records
            .values()
            .filter(|r| r.participant == participant)
            .cloned()
            .collect())
    }
}
