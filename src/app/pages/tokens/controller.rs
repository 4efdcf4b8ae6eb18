//! The next-token games' state, shared by their components through context: the passage in
//! GPT-2's tokens (from the worker), the schedule, the saved records, and the round on screen.
//! Every answer is saved to IndexedDB before the next round appears; a reload resumes there.

use leptos::prelude::*;

use crate::app::inference::CallError;
use crate::app::state::RuntimeContext;
use crate::game::passages::Passage;
use crate::game::study::GameKind;
use crate::game::tokens::records::TokenRecords;
use crate::game::tokens::schedule::{Schedule, Slot};
use crate::game::tokens::top1::Top1Record;
use crate::game::tokens::two_token::TwoTokenRecord;
use crate::game::tokens::{TokenPassage, positions};
use crate::runtime::inference::TokenStats;
use crate::runtime::protocol::{Reply, Request};

/// Rounds at the start of a passage marked practice (not scored) in play mode.
pub const PRACTICE_ROUNDS: u32 = 2;

/// What the page shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Stage {
    /// Waiting for a model, or tokenising the passage and loading saved answers.
    Preparing(String),
    /// A round on screen; `shown_ms` is when it appeared (for the answer time).
    Playing {
        slot: Slot,
        shown_ms: f64,
    },
    /// The answer is being scored (and saved).
    Scoring,
    Finished,
    Failed(String),
}

/// The last answered round, for feedback.
#[derive(Clone, Debug, PartialEq)]
pub enum LastRound {
    Top1(Top1Record, TokenStats),
    TwoToken(TwoTokenRecord, TokenStats),
}

#[derive(Clone, Copy)]
pub struct TokenGame {
    pub game: GameKind,
    pub runtime: RuntimeContext,
    pub passage: StoredValue<Passage>,
    pub participant: StoredValue<String>,
    pub tokens: RwSignal<Option<TokenPassage>>,
    pub schedule: RwSignal<Option<Schedule>>,
    pub top1: RwSignal<Vec<Top1Record>>,
    pub two_token: RwSignal<Vec<TwoTokenRecord>>,
    pub stage: RwSignal<Stage>,
    pub last: RwSignal<Option<LastRound>>,
    /// Seed for sampled tokens and sides (fixed in play mode so a reload shows the same rounds).
    pub seed: u64,
}

pub fn use_token_game() -> TokenGame {
    expect_context::<TokenGame>()
}

pub fn now_ms() -> f64 {
    js_sys::Date::now()
}

pub fn timestamp() -> String {
    String::from(js_sys::Date::new_0().to_iso_string())
}

pub fn game_name(game: GameKind) -> &'static str {
    match game {
        GameKind::Top1 => "top1",
        GameKind::TwoToken => "two-token",
        GameKind::NextWord => "next-word",
    }
}

impl TokenGame {
    pub fn provide(
        game: GameKind,
        passage: Passage,
        participant: String,
        runtime: RuntimeContext,
    ) -> Self {
        let this = Self {
            game,
            runtime,
            passage: StoredValue::new(passage),
            participant: StoredValue::new(participant),
            tokens: RwSignal::new(None),
            schedule: RwSignal::new(None),
            top1: RwSignal::new(Vec::new()),
            two_token: RwSignal::new(Vec::new()),
            stage: RwSignal::new(Stage::Preparing("Waiting for GPT-2…".into())),
            last: RwSignal::new(None),
            seed: 0,
        };
        provide_context(this);
        this
    }

    /// Tokenises the passage in the worker, loads this player's saved answers, and shows the
    /// first unanswered round.
    pub async fn prepare(self) {
        self.stage.set(Stage::Preparing(
            "Cutting the passage into GPT-2 tokens…".into(),
        ));
        let passage = self.passage.get_value();
        let reply = self
            .runtime
            .client()
            .call(Request::Tokenize {
                text: passage.text.clone(),
            })
            .await;
        let tokens = match reply {
            Reply::Tokens(tokens) => TokenPassage {
                passage: passage.id.clone(),
                ids: tokens.iter().map(|(id, _)| *id).collect(),
                bytes: tokens.into_iter().map(|(_, b)| b).collect(),
            },
            other => return self.fail(CallError::from_reply(other).to_string()),
        };
        let all = positions(tokens.len(), None, self.seed, &passage.id);
        let (practice, scored) = all.split_at((PRACTICE_ROUNDS as usize).min(all.len()));
        let plan = [
            (passage.id.clone(), practice.to_vec(), true),
            (passage.id.clone(), scored.to_vec(), false),
        ];
        let mut schedule = Schedule::new(&plan, 1);
        match self.load_saved().await {
            Ok(saved) => {
                let done: Vec<(String, u32, u32)> = match &saved {
                    TokenRecords::Top1(r) => r
                        .iter()
                        .map(|r| (r.passage.clone(), r.position, 0))
                        .collect(),
                    TokenRecords::TwoToken(r) => r
                        .iter()
                        .map(|r| (r.passage.clone(), r.position, r.round))
                        .collect(),
                };
                schedule = schedule.resume(done.iter().map(|(p, pos, r)| (p.as_str(), *pos, *r)));
                match saved {
                    TokenRecords::Top1(r) => self.top1.set(r),
                    TokenRecords::TwoToken(r) => self.two_token.set(r),
                }
            }
            Err(e) => return self.fail(format!("Your saved answers could not be read: {e}")),
        }
        self.tokens.set(Some(tokens));
        self.schedule.set(Some(schedule));
        self.show_current();
    }

    pub fn fail(self, message: String) {
        self.stage.set(Stage::Failed(message));
    }

    /// Shows the next unanswered round, or the end.
    pub fn show_current(self) {
        let next = self
            .schedule
            .with_untracked(|s| s.as_ref().and_then(|s| s.current().cloned()));
        self.stage.set(match next {
            Some(slot) => Stage::Playing {
                slot,
                shown_ms: now_ms(),
            },
            None => Stage::Finished,
        });
    }

    /// Marks `slot` answered and moves on.
    pub fn advance(self, slot: &Slot) {
        self.schedule.update(|s| {
            if let Some(s) = s {
                s.answer(slot);
            }
        });
        self.show_current();
    }

    /// The context before `slot` as the passage's own token ids.
    pub fn context_ids(self, slot: &Slot) -> Vec<u32> {
        self.tokens.with_untracked(|t| {
            t.as_ref()
                .map(|t| t.context_ids(slot.position as usize).to_vec())
                .unwrap_or_default()
        })
    }

    /// The true token at `slot`: id and text.
    pub fn true_token(self, slot: &Slot) -> Option<(u32, Vec<u8>)> {
        self.tokens.with_untracked(|t| {
            t.as_ref().and_then(|t| {
                let i = slot.position as usize;
                Some((*t.ids.get(i)?, t.bytes.get(i)?.clone()))
            })
        })
    }

    /// GPT-2's numbers at `slot` for `tokens` (and a sampled token with `sample_seed`).
    pub async fn stats(
        self,
        slot: &Slot,
        tokens: Vec<u32>,
        sample_seed: Option<u64>,
    ) -> Result<TokenStats, CallError> {
        let request = Request::TokenStats {
            context_ids: self.context_ids(slot),
            tokens,
            top: 10,
            sample_seed,
        };
        match self.runtime.client().call(request).await {
            Reply::TokenStats(stats) => Ok(stats),
            other => Err(CallError::from_reply(other)),
        }
    }

    /// Every record so far, for the exports.
    pub fn records(self) -> TokenRecords {
        match self.game {
            GameKind::TwoToken => TokenRecords::TwoToken(self.two_token.get_untracked()),
            _ => TokenRecords::Top1(self.top1.get_untracked()),
        }
    }
}
