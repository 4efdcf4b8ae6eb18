//! The game's controller (the Leptos todomvc pattern): one `Copy` handle of signals and actions
//! that the play components share through context. The rules it applies live in `crate::game`.

use leptos::prelude::*;

use crate::app::components::attention_check::Attention;
use crate::app::components::questionnaire::Questionnaire;
use crate::app::data::{LabData, use_lab_data};
use crate::app::state::{RuntimeContext, use_runtime};
use crate::app::texts::{TextsContext, use_texts};
use crate::data::ResponseRecord;
use crate::game::design::participant_texts::Say;
use crate::game::design::passages::Passage;
use crate::game::design::questions::Block;
use crate::game::design::study::StudyConfig;
use crate::game::run::score::Score;
use crate::game::run::session::{GameSession, Reveal, SubmitError, Timing, Trial};

/// Samples per context for play-mode feedback (the paper's cheap setting is 40).
pub const FEEDBACK_SAMPLES: usize = 100;

use crate::app::web::clock::{now_ms, timestamp};

/// The handle every play component shares.
#[derive(Clone, Copy)]
pub struct GameController {
    runtime: RuntimeContext,
    lab: LabData,
    pub phase: RwSignal<Phase>,
    pub experiment: RwSignal<bool>,
    pub study: StoredValue<StudyConfig, LocalStorage>,
    session: StoredValue<Option<GameSession>, LocalStorage>,
    store: StoredValue<Option<AnyStore>, LocalStorage>,
    pub storage_problem: RwSignal<Option<String>>,
    /// The answers live in this page only (a preview, or a browser without storage).
    pub memory_only: RwSignal<bool>,
    /// Saves that failed one after another (storage full: see `storage::SAVES_BEFORE_MEMORY`).
    failed_saves: StoredValue<u32>,
    pub trial: RwSignal<Option<Trial>>,
    pub reveal: RwSignal<Option<Reveal>>,
    pub model_feedback: RwSignal<ModelFeedback>,
    pub score: RwSignal<Score>,
    /// This participant's stored responses.
    pub records: RwSignal<Vec<ResponseRecord>>,
    pub redirect_status: crate::app::components::completion::SubmitStatus,
    pub entry_error: RwSignal<String>,
    shown_at: StoredValue<f64>,
    first_key: StoredValue<Option<f64>>,
    feedback_call: StoredValue<Option<u64>, LocalStorage>,
    /// Saves one answer (its `pending()` disables the input meanwhile).
    pub submit: Action<String, ()>,
    /// The study's attention checks and this participant's answers to them.
    pub attention: Attention,
    /// The study's questions, this participant's answers and when they agreed to the consent.
    pub questionnaire: Questionnaire,
    /// The texts participants read.
    pub say: TextsContext,
}

pub fn provide_game_controller() -> GameController {
    let phase = RwSignal::new(Phase::Loading);
    let experiment = RwSignal::new(false);
    let session = StoredValue::new_local(None::<GameSession>);
    let store = StoredValue::new_local(None::<AnyStore>);
    let storage_problem = RwSignal::new(None::<String>);
    let trial = RwSignal::new(None::<Trial>);
    let reveal = RwSignal::new(None::<Reveal>);
    let model_feedback = RwSignal::new(ModelFeedback::NoModel);
    let records = RwSignal::new(Vec::new());
    let entry_error = RwSignal::new(String::new());
    let shown_at = StoredValue::new(0.0);
    let first_key = StoredValue::new(None);
    let controller_cell = StoredValue::new_local(None::<GameController>);
    let submit = Action::new_local(move |raw: &String| {
        let raw = raw.clone();
        async move {
            let Some(c) = controller_cell.get_value() else {
                return;
            };
            c.save_answer(raw).await;
        }
    });
    let controller = GameController {
        runtime: use_runtime(),
        lab: use_lab_data(),
        phase,
        experiment,
        study: StoredValue::new_local(StudyConfig::default_play()),
        session,
        store,
        storage_problem,
        memory_only: RwSignal::new(false),
        failed_saves: StoredValue::new(0),
        trial,
        reveal,
        model_feedback,
        score: RwSignal::new(Score::default()),
        records,
        redirect_status: crate::app::components::completion::SubmitStatus::new(),
        entry_error,
        shown_at,
        first_key,
        feedback_call: StoredValue::new_local(None),
        submit,
        attention: Attention::new(),
        questionnaire: Questionnaire::new(),
        say: use_texts(),
    };
    controller_cell.set_value(Some(controller));
    provide_context(controller);
    // Leaving the page stops GPT-2's work on a context nobody will see.
    on_cleanup(move || controller.cancel_feedback());
    controller
}

mod feedback;
mod leaving;
mod phase;
mod questions;
mod screening;
mod start;
mod storage;
mod submission;

pub use phase::{ModelFeedback, Phase};
pub use storage::AnyStore;

pub fn use_game() -> GameController {
    expect_context::<GameController>()
}

impl GameController {
    /// Shows the questions due before the passages, the next trial, the questions due after
    /// them, or the completion screen.
    pub fn show_next(self) {
        if !self.questionnaire.due(Block::Before).is_empty() {
            return self.phase.set(Phase::Questions(Block::Before));
        }
        let current = self
            .session
            .with_value(|s| s.as_ref().and_then(GameSession::current));
        let finished = current.is_none();
        self.trial.set(current.clone());
        if let Some(t) = &current {
            self.attention.ask_if_due(
                &t.passage_id,
                t.position.saturating_sub(2),
                t.positions_in_passage,
            );
        }
        self.entry_error.set(String::new());
        self.shown_at.set_value(now_ms());
        self.first_key.set_value(None);
        if finished && !self.questionnaire.due(Block::After).is_empty() {
            self.phase.set(Phase::Questions(Block::After));
        } else if finished {
            self.phase.set(Phase::Complete);
            self.finish();
        } else {
            self.phase.set(Phase::Playing);
        }
    }

    /// Records the first keystroke's time for the current trial.
    pub fn key_typed(self) {
        if self.first_key.get_value().is_none() {
            self.first_key
                .set_value(Some(now_ms() - self.shown_at.get_value()));
        }
    }

    /// (done, total) trials of the plan.
    pub fn progress(self) -> (usize, usize) {
        self.session
            .with_value(|s| s.as_ref().map(GameSession::progress))
            .unwrap_or((0, 0))
    }

    /// The passages of the plan, in order.
    pub fn passages(self) -> Vec<Passage> {
        self.session.with_value(|s| {
            s.as_ref()
                .map(|g| g.plan().items.iter().map(|(p, _)| p.clone()).collect())
                .unwrap_or_default()
        })
    }

    pub fn participant(self) -> String {
        self.session
            .with_value(|s| s.as_ref().map(|g| g.plan().participant.clone()))
            .unwrap_or_default()
    }

    async fn save_answer(self, raw: String) {
        let (Some(mut game), Some(mut target)) = (self.session.get_value(), self.store.get_value())
        else {
            return;
        };
        let timing = Timing {
            first_keystroke_ms: self.first_key.get_value(),
            submit_ms: Some(now_ms() - self.shown_at.get_value()),
        };
        let context = self
            .trial
            .get_untracked()
            .map(|t| t.context)
            .unwrap_or_default();
        match game.submit(&mut target, &raw, timing, &timestamp()).await {
            Ok(r) => {
                self.failed_saves.set_value(0);
                self.records.update(|all| all.push(r.record.clone()));
                self.send_response(&r.record).await;
                self.session.set_value(Some(game));
                self.store.set_value(Some(target));
                if self.experiment.get_untracked() {
                    self.show_next();
                } else {
                    self.compute_feedback(context, &r);
                    self.reveal.set(Some(r));
                    self.phase.set(Phase::Feedback);
                }
            }
            Err(SubmitError::Store(e)) => {
                let failed = self.failed_saves.get_value() + 1;
                self.failed_saves.set_value(failed);
                if failed >= storage::SAVES_BEFORE_MEMORY && self.switch_to_memory(&e).await {
                    // Kept in the page from now on, and sent to the server as every answer is.
                    return Box::pin(self.save_answer(raw)).await;
                }
                self.storage_problem.set(Some(
                    self.say
                        .fill(Say::AnswerNotSaved, &[("error", &e.to_string())]),
                ));
            }
            Err(SubmitError::Entry(e)) => self.entry_error.set(self.say.get(e.say())),
            Err(e) => self.entry_error.set(e.to_string()),
        }
    }
}
