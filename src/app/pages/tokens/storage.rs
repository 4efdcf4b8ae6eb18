//! Where the next-token games keep answers: IndexedDB, one JSON record per (participant, game,
//! passage, position, round), read back by key prefix (participant and game) on resume and
//! before a study submits.

use leptos::prelude::*;

use super::controller::{TokenGame, game_name};
use crate::app::web::idb::IdbStore;
use crate::game::study::GameKind;
use crate::game::tokens::records::TokenRecords;
use crate::game::tokens::schedule::Slot;
use crate::game::tokens::top1::Top1Record;
use crate::game::tokens::two_token::TwoTokenRecord;

/// `participant␟game␟passage␟position␟round`, so one participant's passage loads by prefix.
fn record_key(
    participant: &str,
    game: GameKind,
    slot_passage: &str,
    position: u32,
    round: u32,
) -> String {
    format!(
        "{}\u{1f}{}\u{1f}{slot_passage}\u{1f}{position:06}\u{1f}{round:03}",
        participant,
        game_name(game)
    )
}

impl TokenGame {
    fn key_prefix(self) -> String {
        format!(
            "{}\u{1f}{}\u{1f}",
            self.participant.get_value(),
            game_name(self.game),
        )
    }

    /// This participant's saved answers to this game on the plan's passages.
    pub(super) async fn load_saved(self) -> Result<TokenRecords, String> {
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

    /// Saves one record; the caller shows the next round only after this succeeds. With the
    /// study's `send_each_response`, it is then also put in the outbox and POSTed (a bundle of
    /// one) in the background.
    pub async fn save<T>(self, slot: &Slot, record: &T) -> Result<(), String>
    where
        T: serde::Serialize + Clone + Into<TokenRecords>,
    {
        let key = record_key(
            &self.participant.get_value(),
            self.game,
            &slot.passage,
            slot.position,
            slot.round,
        );
        let json = serde_json::to_string(record).map_err(|e| e.to_string())?;
        let store = IdbStore::open().await.map_err(|e| e.to_string())?;
        store
            .save_token_record(&key, &json)
            .await
            .map_err(|e| e.to_string())?;
        self.send_each(slot, record.clone().into()).await;
        Ok(())
    }

    /// Sends a just-saved round: a bundle of one under its own key, or in JATOS every round
    /// saved so far (replacing the last send), kept in the outbox before this returns and sent
    /// in the background (see
    /// [`keep_then_send_in_background`](crate::app::web::outbox::keep_then_send_in_background)).
    async fn send_each(self, slot: &Slot, one: TokenRecords) {
        let study = self.study.get_value();
        if !study.send_each_response || study.submit_url.is_none() {
            return;
        }
        let mut key = crate::game::outbox::response_key(
            &self.participant.get_value(),
            &slot.passage,
            slot.position,
        );
        if matches!(one, TokenRecords::TwoToken(_)) {
            key.push_str(&format!("/{}", slot.round));
        }
        let records = if study.sends_everything_each_time() {
            match self.load_saved().await {
                Ok(all) => all,
                Err(_) => return,
            }
        } else {
            one
        };
        let Some(pending) = records
            .to_bundle(&self.manifest())
            .ok()
            .and_then(|body| study.submission(key, body))
        else {
            return;
        };
        crate::app::web::outbox::keep_then_send_in_background(pending, 5_000.0).await;
    }
}
