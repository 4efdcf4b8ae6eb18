//! The next-token games' state, shared by their components through context: the passage in
//! GPT-2's tokens (from the worker), the schedule, the saved records, and the round on screen.
//! Every answer is saved to IndexedDB before the next round appears; a reload resumes there.

use crate::app::web::clock::now_ms;
use leptos::prelude::*;

use crate::app::components::attention_check::Attention;
use crate::app::state::RuntimeContext;
use crate::app::texts::{TextsContext, use_texts};
use crate::app::worker_client::CallError;
use crate::game::design::participant_texts::Say;
use crate::game::design::plan::Plan;
use crate::game::design::study::{GameKind, StudyConfig};
use crate::game::tokens::TokenPassage;
use crate::game::tokens::records::TokenRecords;
use crate::game::tokens::schedule::{Schedule, Slot};
use crate::game::tokens::top1::Top1Record;
use crate::game::tokens::two_token::{ModelScores, TwoTokenRecord};
use crate::runtime::distributions::TokenStats;
use crate::runtime::protocol::{Reply, Request, TokenStatsRequest};

/// Rounds at the start of a passage marked practice (not scored) in play mode.
pub const PRACTICE_ROUNDS: u32 = 2;

/// What the page shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Stage {
    /// Waiting for a model, or tokenising the passage and loading saved answers.
    Preparing(String),
    /// A study's consent and instructions (first visit only).
    Consent,
    /// A block of the study's questions.
    Questions(crate::game::design::questions::Block),
    /// A round on screen; `shown_ms` is when it appeared (for the answer time).
    Playing {
        slot: Slot,
        shown_ms: f64,
    },
    /// The answer is being scored (and saved).
    Scoring,
    Finished,
    Failed(String),
    /// The participant declined or withdrew; what they were told.
    Left(String),
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
    /// The study (in play mode, one passage with the defaults).
    pub study: StoredValue<StudyConfig>,
    /// Experiment mode: a study's participant (consent, completion, submit, redirect).
    pub experiment: bool,
    /// The passages in playing order, practice first.
    pub plan: StoredValue<Plan>,
    pub participant: StoredValue<String>,
    /// The plan's passages in GPT-2's tokens, once the worker has cut them.
    pub tokens: RwSignal<Vec<TokenPassage>>,
    pub schedule: RwSignal<Option<Schedule>>,
    pub top1: RwSignal<Vec<Top1Record>>,
    pub two_token: RwSignal<Vec<TwoTokenRecord>>,
    pub stage: RwSignal<Stage>,
    pub last: RwSignal<Option<LastRound>>,
    /// Seed for positions, sampled tokens and sides (the study's; fixed in play mode so a reload
    /// shows the same rounds).
    pub seed: u64,
    /// Rounds per position in the two-token game.
    pub rounds: u32,
    /// Sending and redirecting at the end of a study.
    pub redirect_status: crate::app::components::completion::SubmitStatus,
    /// A second model playing the two-token game beside GPT-2, once loaded.
    pub opponent: RwSignal<Option<ModelScores>>,
    /// The study's attention checks and this participant's answers to them.
    pub attention: Attention,
    /// The study's questions, this participant's answers and when they agreed to the consent.
    pub questionnaire: crate::app::components::questionnaire::Questionnaire,
    /// The texts participants read.
    pub say: TextsContext,
    /// The answers live in this page only: the browser's storage failed in a study whose
    /// server receives every answer (see `storage.rs`); what the page says about it.
    pub memory_only: RwSignal<Option<String>>,
}

pub fn use_token_game() -> TokenGame {
    expect_context::<TokenGame>()
}

impl TokenGame {
    /// `rounds` is the two-token game's rounds per position in play mode (a study says its own).
    pub fn provide(
        study: StudyConfig,
        plan: Plan,
        experiment: bool,
        rounds: u32,
        runtime: RuntimeContext,
    ) -> Self {
        let say = use_texts();
        let rounds = if experiment {
            study.rounds()
        } else {
            rounds.max(1)
        };
        let plan = plan.in_run(crate::app::web::participant::local_run_id);
        let this = Self {
            game: study.game,
            runtime,
            seed: study.seed,
            study: StoredValue::new(study),
            experiment,
            participant: StoredValue::new(plan.participant.clone()),
            plan: StoredValue::new(plan),
            tokens: RwSignal::new(Vec::new()),
            schedule: RwSignal::new(None),
            top1: RwSignal::new(Vec::new()),
            two_token: RwSignal::new(Vec::new()),
            stage: RwSignal::new(Stage::Preparing(say.get(Say::WaitingForModel))),
            last: RwSignal::new(None),
            rounds,
            redirect_status: crate::app::components::completion::SubmitStatus::new(),
            opponent: RwSignal::new(None),
            attention: Attention::new(),
            questionnaire: crate::app::components::questionnaire::Questionnaire::new(),
            say,
            memory_only: RwSignal::new(None),
        };
        provide_context(this);
        this
    }

    /// Where this run's answers are kept.
    pub fn scope(self) -> crate::game::design::run_scope::RunScope {
        self.plan.with_value(Plan::scope)
    }

    pub fn fail(self, message: String) {
        self.stage.set(Stage::Failed(message));
    }

    /// Shows the next unanswered round, or the end.
    pub fn show_current(self) {
        use crate::game::design::questions::Block;
        if self.experiment && !self.questionnaire.due(Block::Before).is_empty() {
            return self.stage.set(Stage::Questions(Block::Before));
        }
        let (next, place) = self.schedule.with_untracked(|s| {
            s.as_ref()
                .map(|s| (s.current().cloned(), s.place_in_passage()))
                .unwrap_or_default()
        });
        match place {
            Some((passage, answered, answers)) => {
                self.attention.ask_if_due(&passage, answered, answers);
            }
            None => self.attention.pending.set(None),
        }
        let after_due = self.experiment && !self.questionnaire.due(Block::After).is_empty();
        self.stage.set(match next.clone() {
            Some(slot) => Stage::Playing {
                slot,
                shown_ms: now_ms(),
            },
            None if after_due => return self.stage.set(Stage::Questions(Block::After)),
            None => Stage::Finished,
        });
        if next.is_none() && self.experiment {
            leptos::task::spawn_local(self.finish());
        }
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

    /// `f` of the tokens of `passage` (`None` before they are cut, or for another passage).
    pub fn with_tokens<R>(self, passage: &str, f: impl FnOnce(&TokenPassage) -> R) -> Option<R> {
        self.tokens
            .with_untracked(|all| all.iter().find(|t| t.passage == passage).map(f))
    }

    /// The context before `slot` as the passage's own token ids.
    pub fn context_ids(self, slot: &Slot) -> Vec<u32> {
        self.with_tokens(&slot.passage, |t| {
            t.context_ids(slot.position as usize).to_vec()
        })
        .unwrap_or_default()
    }

    /// The context before `slot` as text.
    pub fn context_text(self, slot: &Slot) -> String {
        self.with_tokens(&slot.passage, |t| t.context(slot.position as usize))
            .unwrap_or_default()
    }

    /// The true token at `slot`: id and text.
    pub fn true_token(self, slot: &Slot) -> Option<(u32, Vec<u8>)> {
        self.with_tokens(&slot.passage, |t| {
            let i = slot.position as usize;
            Some((*t.ids.get(i)?, t.bytes.get(i)?.clone()))
        })
        .flatten()
    }

    /// GPT-2's numbers at `slot` for `tokens` (and a sampled token with `sample_seed`).
    pub async fn stats(
        self,
        slot: &Slot,
        tokens: Vec<u32>,
        sample_seed: Option<u64>,
    ) -> Result<TokenStats, CallError> {
        let request = Request::TokenStats(TokenStatsRequest {
            context_ids: self.context_ids(slot),
            tokens,
            top: 10,
            sample_seed,
        });
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
