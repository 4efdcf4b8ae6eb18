//! Where responses live: a trait the game saves through, an in-memory store for tests and the
//! CLI, and (in the browser layer) IndexedDB. Responses are kept per run ([`RunScope`]: study,
//! run, participant) and keyed within it by passage and position, so saving the same trial
//! twice keeps one copy and no run ever loads another's answers.

use std::collections::BTreeMap;

use crate::data::ResponseRecord;
use crate::game::design::run_scope::RunScope;

#[derive(Debug, thiserror::Error, PartialEq, Clone)]
pub enum StoreError {
    #[error("storage is full or unavailable: {0}")]
    Unavailable(String),
}

/// The key that makes saving idempotent: the run's scope, then passage and position.
pub fn record_key(scope: &RunScope, r: &ResponseRecord) -> (RunScope, String, u32) {
    (scope.clone(), r.passage.clone(), r.position)
}

#[allow(async_fn_in_trait)]
pub trait ResponseStore {
    /// Saves (or overwrites) one response of the run `scope`; resolves only once it is stored.
    async fn save(&mut self, scope: &RunScope, record: &ResponseRecord) -> Result<(), StoreError>;
    /// Every stored response of the run `scope`, in (passage, position) order.
    async fn load(&self, scope: &RunScope) -> Result<Vec<ResponseRecord>, StoreError>;
}

/// Responses in memory; `fail_after` makes saves fail after that many (to test quota errors).
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    pub records: BTreeMap<(RunScope, String, u32), ResponseRecord>,
    pub fail_after: Option<usize>,
}

impl ResponseStore for MemoryStore {
    async fn save(&mut self, scope: &RunScope, record: &ResponseRecord) -> Result<(), StoreError> {
        if self.fail_after.is_some_and(|n| self.records.len() >= n) {
            return Err(StoreError::Unavailable("quota exceeded".into()));
        }
        self.records
            .insert(record_key(scope, record), record.clone());
        Ok(())
    }

    async fn load(&self, scope: &RunScope) -> Result<Vec<ResponseRecord>, StoreError> {
        Ok(self
            .records
            .iter()
            .filter(|((s, _, _), _)| s == scope)
            .map(|(_, r)| r.clone())
            .collect())
    }
}
