//! The game's controller (the Leptos todomvc pattern): one `Copy` handle of signals and actions
//! that the play components share through context. The rules it applies live in `crate::game`.

use leptos::prelude::*;

use crate::app::data::{LabData, use_lab_data};
use crate::app::state::{BackendState, RuntimeContext, use_runtime};
use crate::app::web::{self, files::download_text, idb::IdbStore};
use crate::data::ResponseRecord;
use crate::estimators::sampler::DEFAULT_TOKEN_BUDGET;
use crate::game::export::{ExportKind, Manifest, ModelInfo};
use crate::game::passages::Passage;
use crate::game::score::Score;
use crate::game::session::{GameSession, Reveal, SubmitError, Timing, Trial, confirm_saved};
use crate::game::store::{MemoryStore, ResponseStore, StoreError};
use crate::game::study::StudyConfig;
use crate::runtime::protocol::{DecodingSpec, Reply, Request};

/// Samples per context for play-mode feedback (the paper's cheap setting is 40).
pub const FEEDBACK_SAMPLES: usize = 100;

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

#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    Loading,
    Consent,
    Playing,
    Feedback,
    Complete,
    Failed(String),
}

/// GPT-2's side of the feedback for one context.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelFeedback {
    NoModel,
    Computing,
    Ready(std::collections::BTreeMap<String, f64>),
    Failed(String),
}

impl ModelFeedback {
    /// A short name for the state (a data attribute for tests and styling).
    pub fn state_name(&self) -> &'static str {
        match self {
            ModelFeedback::NoModel => "none",
            ModelFeedback::Computing => "computing",
            ModelFeedback::Ready(_) => "ready",
            ModelFeedback::Failed(_) => "failed",
        }
    }
}

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

fn timestamp() -> String {
    String::from(js_sys::Date::new_0().to_iso_string())
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
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
    pub trial: RwSignal<Option<Trial>>,
    pub reveal: RwSignal<Option<Reveal>>,
    pub model_feedback: RwSignal<ModelFeedback>,
    pub score: RwSignal<Score>,
    /// This participant's stored responses.
    pub records: RwSignal<Vec<ResponseRecord>>,
    pub redirect_status: RwSignal<String>,
    pub entry_error: RwSignal<String>,
    shown_at: StoredValue<f64>,
    first_key: StoredValue<Option<f64>>,
    feedback_call: StoredValue<Option<u64>, LocalStorage>,
    /// Saves one answer (its `pending()` disables the input meanwhile).
    pub submit: Action<String, ()>,
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
        trial,
        reveal,
        model_feedback,
        score: RwSignal::new(Score::default()),
        records,
        redirect_status: RwSignal::new(String::new()),
        entry_error,
        shown_at,
        first_key,
        feedback_call: StoredValue::new_local(None),
        submit,
    };
    controller_cell.set_value(Some(controller));
    provide_context(controller);
    // Leaving the page stops GPT-2's work on a context nobody will see.
    on_cleanup(move || controller.cancel_feedback());
    controller
}

pub fn use_game() -> GameController {
    expect_context::<GameController>()
}

impl GameController {
    /// Starts (or resumes from storage) `config` for this browser's participant.
    pub fn start(self, config: StudyConfig, experiment: bool) {
        leptos::task::spawn_local(async move {
            let params = web::query_params();
            let participant = match config.participant_id(&params, &local_participant_id()) {
                Ok(id) => id,
                Err(e) => return self.phase.set(Phase::Failed(e.to_string())),
            };
            let plan = match config.plan(&participant, &params) {
                Ok(p) => p,
                Err(e) => return self.phase.set(Phase::Failed(e.to_string())),
            };
            let store = match IdbStore::open().await {
                Ok(s) => AnyStore::Idb(s),
                Err(e) => {
                    self.storage_problem.set(Some(format!("Responses cannot be stored in this browser ({e}); they are kept in memory only: download them below before closing the page.")));
                    AnyStore::Memory(MemoryStore::default())
                }
            };
            let stored = store.load(&participant).await.unwrap_or_default();
            // A first visit starts on the consent/instructions screen when the study has either.
            let consent_needed = stored.is_empty()
                && !(config.consent.trim().is_empty() && config.instructions.trim().is_empty());
            self.records.set(stored.clone());
            self.session
                .set_value(Some(GameSession::resume(plan, &stored)));
            self.store.set_value(Some(store));
            self.study.set_value(config);
            self.experiment.set(experiment);
            if consent_needed {
                self.phase.set(Phase::Consent)
            } else {
                self.show_next()
            }
        });
    }

    /// Shows the next trial, or the completion screen.
    pub fn show_next(self) {
        let current = self
            .session
            .with_value(|s| s.as_ref().and_then(GameSession::current));
        let finished = current.is_none();
        self.trial.set(current);
        self.entry_error.set(String::new());
        self.shown_at.set_value(now_ms());
        self.first_key.set_value(None);
        if finished {
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
                self.records.update(|all| all.push(r.record.clone()));
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
                self.storage_problem.set(Some(format!("Your last answer could not be saved ({e}). Download your responses below; nothing already saved is lost.")));
            }
            Err(e) => self.entry_error.set(e.to_string()),
        }
    }

    fn cancel_feedback(self) {
        if let Some(old) = self.feedback_call.get_value() {
            self.runtime.cancel(old);
            self.feedback_call.set_value(None);
        }
    }

    /// Asks the worker for GPT-2's word distribution after `context` (cancelling the last one)
    /// and adds the guess to the score when it is there.
    fn compute_feedback(self, context: String, reveal: &Reveal) {
        let ctx = self.runtime;
        let human = self
            .lab
            .humans
            .with_untracked(|h| h.distribution(&reveal.record.passage, reveal.record.position));
        let (truth, guess) = (reveal.true_word.clone(), reveal.record.response.clone());
        if ctx.model.with_untracked(|m| m.summary().is_none()) {
            self.model_feedback.set(ModelFeedback::NoModel);
            self.score
                .update(|s| s.add(&truth, &guess, None, human.as_ref()));
            return;
        }
        self.model_feedback.set(ModelFeedback::Computing);
        self.cancel_feedback();
        let seed = crate::rng::stable_hash(&format!(
            "{}:{}",
            reveal.record.passage, reveal.record.position
        ));
        let request = Request::SampleWords {
            context,
            samples: FEEDBACK_SAMPLES,
            seed,
            decoding: DecodingSpec::default(),
            token_budget: DEFAULT_TOKEN_BUDGET,
        };
        let call = ctx.client().start(request, None);
        self.feedback_call.set_value(Some(call.id));
        leptos::task::spawn_local(async move {
            let reply = call.reply().await;
            let (model, shown) = match reply {
                Reply::Cancelled => return,
                Reply::Words(samples) => (
                    samples.distribution().ok(),
                    ModelFeedback::Ready(samples.relative_frequencies()),
                ),
                Reply::Failed(e) => (None, ModelFeedback::Failed(e)),
                other => (
                    None,
                    ModelFeedback::Failed(format!("unexpected reply {other:?}")),
                ),
            };
            self.score
                .update(|s| s.add(&truth, &guess, model.as_ref(), human.as_ref()));
            self.model_feedback.set(shown);
        });
    }

    /// The export manifest of this session (`None` before it starts).
    pub fn manifest(self) -> Option<Manifest> {
        let ctx = self.runtime;
        let plan = self
            .session
            .with_value(|s| s.as_ref().map(|g| g.plan().clone()))?;
        let (backend, adapter) = match ctx.backend.get_untracked() {
            BackendState::Ready { kind, adapter, .. } => (kind.name().to_string(), adapter),
            _ => (String::new(), String::new()),
        };
        let (model_name, weight_sha256) = ctx
            .model
            .with_untracked(|m| {
                m.summary()
                    .map(|s| (s.name.clone(), s.weight_sha256.clone()))
            })
            .unwrap_or_default();
        let info = ModelInfo {
            model_name,
            weight_sha256,
            tokenizer: "GPT-2 BPE (50257)".into(),
            backend,
            adapter,
        };
        Some(Manifest::new(
            &info,
            &self.study.get_value(),
            &plan,
            0,
            &timestamp(),
        ))
    }

    /// Offers one export as a download; problems are shown, never an empty file.
    pub fn download(self, kind: ExportKind) -> Result<(), String> {
        let text = self
            .records
            .with_untracked(|all| kind.render(all, &self.passages(), self.manifest().as_ref()))
            .map_err(|e| e.to_string())?;
        download_text(&kind.file_name(&self.participant()), kind.mime(), &text)
    }

    /// Completion: responses are sent (when the study names a submit path) and the participant
    /// redirected only once every response is confirmed in storage (and accepted by the server).
    fn finish(self) {
        let (submit_path, redirect) = self
            .study
            .with_value(|s| (s.submit_url.clone(), s.redirect_url.clone()));
        if submit_path.is_none() && redirect.is_none() {
            return;
        }
        let (Some(game), Some(target)) = (self.session.get_value(), self.store.get_value()) else {
            return;
        };
        let status = self.redirect_status;
        leptos::task::spawn_local(async move {
            let total = game.progress().1;
            let saved = match target.load(&game.plan().participant).await {
                Ok(saved) => saved,
                Err(e) => {
                    return status.set(format!(
                        "Cannot confirm your responses were saved ({e}): download them below."
                    ));
                }
            };
            if let Err(e) =
                confirm_saved(saved.len(), total, !matches!(target, AnyStore::Memory(_)))
            {
                return status.set(capitalised(&e.to_string()));
            }
            if let Some(path) = submit_path {
                status.set("Sending your responses…".into());
                let body = match ExportKind::Bundle.render(&saved, &[], self.manifest().as_ref()) {
                    Ok(body) => body,
                    Err(e) => {
                        return status.set(format!(
                            "Your responses could not be prepared ({e}): download them below."
                        ));
                    }
                };
                if let Err(e) = web::fetch::post_json(&path, &body).await {
                    return status.set(format!("Your responses could not be sent ({e}). They are saved on this device: download them below and send them to the researcher."));
                }
                status.set("Your responses were sent. Thank you!".into());
            }
            let Some(url) = redirect else { return };
            status.set("All responses saved. Redirecting…".into());
            if let Some(w) = web_sys::window() {
                let _ = w.location().assign(&url);
            }
        });
    }
}
