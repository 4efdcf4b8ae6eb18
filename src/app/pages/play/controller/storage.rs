//! Where a game's responses are kept: IndexedDB, or the page's memory — from the start where
//! the browser has no storage, or once storage has refused saves one after another (full) in a
//! study whose server gets every answer as it is given.

use leptos::prelude::*;

use super::GameController;
use crate::app::web::idb::IdbStore;
use crate::data::ResponseRecord;
use crate::game::design::participant_texts::Say;
use crate::game::design::run_scope::RunScope;
use crate::game::run::store::{MemoryStore, ResponseStore, StoreError};

/// IndexedDB when it works; memory otherwise (the page then says so and offers downloads).
#[derive(Clone)]
pub enum AnyStore {
    Idb(IdbStore),
    Memory(MemoryStore),
}

impl ResponseStore for AnyStore {
    async fn save(&mut self, scope: &RunScope, record: &ResponseRecord) -> Result<(), StoreError> {
        match self {
            AnyStore::Idb(s) => s.save(scope, record).await,
            AnyStore::Memory(s) => s.save(scope, record).await,
        }
    }
    async fn load(&self, scope: &RunScope) -> Result<Vec<ResponseRecord>, StoreError> {
        match self {
            AnyStore::Idb(s) => s.load(scope).await,
            AnyStore::Memory(s) => s.load(scope).await,
        }
    }
}

/// Failed saves in a row after which a study with a server goes on in memory: one failure may
/// pass (the participant types the word again), two in a row mean the storage is full.
pub const SAVES_BEFORE_MEMORY: u32 = 2;

impl GameController {
    /// Moves a study whose server receives every answer to the page's memory, with what this
    /// run saved so far; `false` (nothing changed) where there is no such server, or the store
    /// is memory already.
    pub(super) async fn switch_to_memory(self, error: &StoreError) -> bool {
        let study = self.study.get_value();
        let has_server = study.submit_url.is_some() && study.send_each_response;
        if !has_server || self.memory_only.get_untracked() {
            return false;
        }
        let Some(scope) = self
            .session
            .with_value(|s| s.as_ref().map(|g| g.plan().scope()))
        else {
            return false;
        };
        let mut memory = MemoryStore::default();
        for record in self.records.get_untracked() {
            let _ = memory.save(&scope, &record).await;
        }
        self.store.set_value(Some(AnyStore::Memory(memory)));
        self.memory_only.set(true);
        self.storage_problem.set(Some(
            self.say
                .fill(Say::MemoryOnlyServer, &[("error", &error.to_string())]),
        ));
        true
    }
}
