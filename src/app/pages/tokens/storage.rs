//! Where the next-token games keep answers: IndexedDB, one JSON record per (run, game, passage,
//! position, round), read back by key prefix (the run's and the game's) on resume and before a
//! study submits. Where the browser cannot store them (IndexedDB missing, blocked or full) in a
//! study whose server receives every answer as it is given, the page keeps them instead (the
//! game's record lists) and the study goes on; elsewhere a failed save stops the round.

use leptos::prelude::*;

use super::controller::TokenGame;
use crate::app::web::idb::IdbStore;
use crate::game::design::participant_texts::Say;
use crate::game::design::run_scope::RunScope;
use crate::game::design::study::GameKind;
use crate::game::tokens::records::TokenRecords;
use crate::game::tokens::schedule::Slot;
use crate::game::tokens::top1::Top1Record;
use crate::game::tokens::two_token::TwoTokenRecord;

/// `study␟run␟participant␟game␟`: the prefix of one run's answers to one game.
fn game_prefix(scope: &RunScope, game: GameKind) -> String {
    format!("{}{}\u{1f}", scope.storage_prefix(), game.name())
}

impl TokenGame {
    fn key_prefix(self) -> String {
        game_prefix(&self.scope(), self.game)
    }

    /// This participant's saved answers to this game on the plan's passages.
    pub(super) async fn load_saved(self) -> Result<TokenRecords, String> {
        if self.memory_only.get_untracked().is_some() {
            return Ok(self.records());
        }
        match self.load_from_browser().await {
            Err(e) if self.keeps_in_memory(&e) => Ok(self.records()),
            loaded => loaded,
        }
    }

    async fn load_from_browser(self) -> Result<TokenRecords, String> {
        let in_plan = |passage: &str| {
            self.plan
                .with_value(|p| p.items.iter().any(|(q, _)| q.id == passage))
        };
        let store = IdbStore::open().await.map_err(|e| e.to_string())?;
        let rows = store
            .token_records(&self.key_prefix())
            .await
            .map_err(|e| e.to_string())?;
        Ok(match self.game {
            GameKind::TwoToken => {
                let mut r: Vec<TwoTokenRecord> = rows
                    .iter()
                    .filter_map(|j| serde_json::from_str::<TwoTokenRecord>(j).ok())
                    .filter(|r| in_plan(&r.passage))
                    .collect();
                r.sort_by_key(|r| (r.timestamp.clone(), r.position, r.round));
                TokenRecords::TwoToken(r)
            }
            _ => {
                let mut r: Vec<Top1Record> = rows
                    .iter()
                    .filter_map(|j| serde_json::from_str::<Top1Record>(j).ok())
                    .filter(|r| in_plan(&r.passage))
                    .collect();
                r.sort_by_key(|r| (r.timestamp.clone(), r.position));
                TokenRecords::Top1(r)
            }
        })
    }

    /// After the browser's storage failed with `error`: in a study whose server receives every
    /// answer, the page keeps the answers from now on (and says so) and this is `true`.
    fn keeps_in_memory(self, error: &str) -> bool {
        let has_server = self
            .study
            .with_value(|s| s.submit_url.is_some() && s.send_each_response);
        if has_server && self.memory_only.get_untracked().is_none() {
            self.memory_only.set(Some(
                self.say.fill(Say::MemoryOnlyServer, &[("error", error)]),
            ));
        }
        has_server
    }

    /// Saves one record; the caller shows the next round only after this succeeds. With the
    /// study's `send_each_response`, it is then also put in the outbox and POSTed (a bundle of
    /// one) in the background.
    pub async fn save<T>(self, slot: &Slot, record: &T) -> Result<(), String>
    where
        T: serde::Serialize + Clone + Into<TokenRecords>,
    {
        if self.memory_only.get_untracked().is_none() {
            let key = format!(
                "{}{}\u{1f}{:06}\u{1f}{:03}",
                self.key_prefix(),
                slot.passage,
                slot.position,
                slot.round
            );
            let json = serde_json::to_string(record).map_err(|e| e.to_string())?;
            let saved = match IdbStore::open().await {
                Ok(store) => store
                    .save_token_record(&key, &json)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            if let Err(e) = saved
                && !self.keeps_in_memory(&e)
            {
                return Err(e);
            }
        }
        self.send_each(slot, record.clone().into()).await;
        Ok(())
    }

    /// Sends a just-saved round: a bundle of one under its own key (in JATOS appended to the
    /// run's result data), kept in the outbox before this returns and sent in the background
    /// (see [`keep_then_send_in_background`](crate::app::web::outbox::keep_then_send_in_background)).
    /// A refusal for good stops the game, saying so.
    async fn send_each(self, slot: &Slot, one: TokenRecords) {
        let study = self.study.get_value();
        if !study.send_each_response || study.submit_url.is_none() {
            return;
        }
        let mut key = self.scope().response_key(&slot.passage, slot.position);
        if matches!(one, TokenRecords::TwoToken(_)) {
            key.push_str(&format!("/{}", slot.round));
        }
        let Some(pending) = one
            .to_bundle(&self.manifest())
            .ok()
            .and_then(|body| crate::game::run::outbox::submission(&study, key, body))
        else {
            return;
        };
        let on_refused = move |reason: String| {
            self.fail(self.say.fill(Say::RefusedMidStudy, &[("error", &reason)]));
        };
        crate::app::web::outbox::keep_then_send_in_background(pending, 5_000.0, on_refused).await;
    }
}
