//! The next-word cloze game: play mode (feedback after each guess) and experiment mode (a
//! study config from `?study=URL`, no feedback, completion code and redirect after saving).
//! All rules live in `crate::game`; this page wires them to the DOM.

use std::collections::BTreeMap;

use leptos::html::Input;
use leptos::prelude::*;

use crate::app::components::word_bars::WordBars;
use crate::app::state::use_runtime;
use crate::app::web::files::{download_text, read_file_list};
use crate::app::web::idb::IdbStore;
use crate::app::web::yield_to_browser;
use crate::data::{Delimiter, ResponseRecord, export_long_csv};
use crate::game::export::{ExportBundle, Manifest, ModelInfo, import_bundle, merge_responses, provo_aggregate_csv};
use crate::game::passages::{Passage, from_norms, parse_plain_text};
use crate::game::score::Score;
use crate::game::session::{GameSession, Reveal, Timing};
use crate::game::store::{MemoryStore, ResponseStore, StoreError};
use crate::game::study::StudyConfig;
use crate::metrics::{WordDistribution, tvd};
use crate::progress::Unmonitored;
use crate::wordsampler::{SamplerConfig, sample_words};

/// Samples per context for play-mode feedback (the paper's cheap setting is 40).
const FEEDBACK_SAMPLES: usize = 100;

/// IndexedDB when it works; memory otherwise (the page then says so and offers downloads).
#[derive(Clone)]
enum AnyStore {
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
enum Phase {
    Loading,
    Consent,
    Playing,
    Feedback,
    Complete,
    Failed(String),
}

/// GPT-2's side of the feedback for one context.
#[derive(Clone, Debug, PartialEq)]
enum ModelFeedback {
    NoModel,
    Computing,
    Ready(BTreeMap<String, f64>),
    Failed(String),
}

fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

fn timestamp() -> String {
    String::from(js_sys::Date::new_0().to_iso_string())
}

fn url_params() -> BTreeMap<String, String> {
    let Some(search) = web_sys::window().and_then(|w| w.location().search().ok()) else { return BTreeMap::new() };
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else { return BTreeMap::new() };
    let mut out = BTreeMap::new();
    for entry in js_sys::try_iter(&params).ok().flatten().into_iter().flatten().flatten() {
        let pair = js_sys::Array::from(&entry);
        if let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
            out.insert(k, v);
        }
    }
    out
}

/// A participant id kept in localStorage, so a reload continues the same participant.
fn local_participant_id() -> String {
    let storage = web_sys::window().and_then(|w| w.local_storage().ok().flatten());
    if let Some(id) = storage.as_ref().and_then(|s| s.get_item("clozelab-participant").ok().flatten()) {
        return id;
    }
    let id = format!("anon-{:08x}{:08x}", (js_sys::Math::random() * 4294967296.0) as u32, (js_sys::Math::random() * 4294967296.0) as u32);
    if let Some(s) = storage {
        let _ = s.set_item("clozelab-participant", &id);
    }
    id
}

async fn fetch_text(url: &str) -> Result<String, String> {
    let bytes = crate::app::web::fetch::fetch_bytes_uncached(url).await?;
    String::from_utf8(bytes).map_err(|_| format!("{url} is not UTF-8 text"))
}

#[component]
pub fn GamePage() -> impl IntoView {
    let ctx = use_runtime();
    let phase = RwSignal::new(Phase::Loading);
    let study = StoredValue::new_local(StudyConfig::default_play());
    let experiment = RwSignal::new(false);
    let session: StoredValue<Option<GameSession>, LocalStorage> = StoredValue::new_local(None);
    let store: StoredValue<Option<AnyStore>, LocalStorage> = StoredValue::new_local(None);
    let storage_problem = RwSignal::new(None::<String>);
    let trial = RwSignal::new(None);
    let entry = RwSignal::new(String::new());
    let entry_error = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let reveal = RwSignal::new(None::<Reveal>);
    let model_feedback = RwSignal::new(ModelFeedback::NoModel);
    let score = RwSignal::new(Score::default());
    let humans = RwSignal::new(BTreeMap::<(String, u32), BTreeMap<String, u32>>::new());
    let records = RwSignal::new(Vec::<ResponseRecord>::new());
    let shown_at = StoredValue::new(0.0f64);
    let first_key = StoredValue::new(None::<f64>);
    let input_ref = NodeRef::<Input>::new();
    let import_status = RwSignal::new(String::new());
    let imported = RwSignal::new(Vec::<ResponseRecord>::new());

    let show_next = move || {
        let current = session.with_value(|s| s.as_ref().and_then(GameSession::current));
        let finished = current.is_none();
        trial.set(current);
        entry.set(String::new());
        entry_error.set(String::new());
        shown_at.set_value(now_ms());
        first_key.set_value(None);
        phase.set(if finished { Phase::Complete } else { Phase::Playing });
    };

    let start = move |config: StudyConfig, is_experiment: bool| {
        leptos::task::spawn_local(async move {
            let params = url_params();
            let participant = match config.participant_id(&params, &local_participant_id()) {
                Ok(id) => id,
                Err(e) => return phase.set(Phase::Failed(e.to_string())),
            };
            let plan = match config.plan(&participant, &params) {
                Ok(p) => p,
                Err(e) => return phase.set(Phase::Failed(e.to_string())),
            };
            let any = match IdbStore::open().await {
                Ok(s) => AnyStore::Idb(s),
                Err(e) => {
                    storage_problem.set(Some(format!("Responses cannot be stored in this browser ({e}); they are kept in memory only: download them before closing the page.")));
                    AnyStore::Memory(MemoryStore::default())
                }
            };
            let stored = any.load(&participant).await.unwrap_or_default();
            records.set(stored.clone());
            // A first visit starts on the consent/instructions screen when the study has either.
            let consent_needed = stored.is_empty() && !(config.consent.trim().is_empty() && config.instructions.trim().is_empty());
            session.set_value(Some(GameSession::resume(plan, &stored)));
            store.set_value(Some(any));
            study.set_value(config);
            experiment.set(is_experiment);
            if consent_needed { phase.set(Phase::Consent) } else { show_next() }
        });
    };

    // Study from ?study=URL (experiment mode), else play mode over the built-in passages.
    Effect::new(move |_| {
        leptos::task::spawn_local(async move {
            match crate::app::web::query_param("study") {
                Some(url) => match fetch_text(&url).await.and_then(|t| StudyConfig::from_json(&t).map_err(|e| e.to_string())) {
                    Ok(config) => start(config, true),
                    Err(e) => phase.set(Phase::Failed(format!("Cannot load the study: {e}"))),
                },
                None => start(StudyConfig::default_play(), false),
            }
        });
    });

    // Focus the input whenever a trial is shown.
    Effect::new(move |_| {
        if phase.get() == Phase::Playing
            && let Some(input) = input_ref.get()
        {
            // Safari's non-standard switch (not in leptos' attribute list).
            let _ = input.set_attribute("autocorrect", "off");
            let _ = input.focus();
        }
    });

    let compute_feedback = move |context: String, reveal_now: Reveal| {
        let human_dist = humans.with_untracked(|h| h.get(&(reveal_now.record.passage.clone(), reveal_now.record.position)).cloned());
        let human = human_dist.as_ref().and_then(|h| WordDistribution::from_counts(h.iter().map(|(w, c)| (w.clone(), *c as f64))).ok());
        let Some(engine) = ctx.engine.get_value() else {
            model_feedback.set(ModelFeedback::NoModel);
            score.update(|s| s.add(&reveal_now.true_word, &reveal_now.record.response, None, human.as_ref()));
            return;
        };
        model_feedback.set(ModelFeedback::Computing);
        leptos::task::spawn_local(async move {
            yield_to_browser().await;
            let seed = crate::game::study::stable_hash(&format!("{}:{}", reveal_now.record.passage, reveal_now.record.position));
            // Fixed batch sizes pay off only where kernels are compiled per shape (WebGPU).
            let on_gpu = ctx.device.with_value(|d| d.as_ref().is_some_and(|d| d.kind == crate::backend::BackendKind::Wgpu));
            let result = match SamplerConfig::new(FEEDBACK_SAMPLES, seed) {
                Ok(config) => {
                    let config = config.with_batch_buckets(on_gpu);
                    let mut progress = crate::progress::Progress { contexts_done: 0, contexts_total: 1, samples_done: 0, elapsed_s: 0.0 };
                    sample_words(&engine.model, &engine.tokenizer, &context, &config, &mut Unmonitored, &mut progress).await.map_err(|e| e.to_string())
                }
                Err(e) => Err(e.to_string()),
            };
            match result {
                Ok(samples) => {
                    let model = samples.distribution().ok();
                    score.update(|s| s.add(&reveal_now.true_word, &reveal_now.record.response, model.as_ref(), human.as_ref()));
                    model_feedback.set(ModelFeedback::Ready(samples.relative_frequencies()));
                }
                Err(e) => {
                    score.update(|s| s.add(&reveal_now.true_word, &reveal_now.record.response, None, human.as_ref()));
                    model_feedback.set(ModelFeedback::Failed(e));
                }
            }
        });
    };

    let submit = move || {
        if busy.get_untracked() {
            return;
        }
        let (Some(mut game), Some(mut target)) = (session.get_value(), store.get_value()) else { return };
        let raw = entry.get_untracked();
        let timing = Timing { first_keystroke_ms: first_key.get_value(), submit_ms: Some(now_ms() - shown_at.get_value()) };
        let context = trial.get_untracked().map(|t| t.context).unwrap_or_default();
        busy.set(true);
        leptos::task::spawn_local(async move {
            match game.submit(&mut target, &raw, timing, &timestamp()).await {
                Ok(r) => {
                    records.update(|all| all.push(r.record.clone()));
                    session.set_value(Some(game));
                    store.set_value(Some(target));
                    if experiment.get_untracked() {
                        show_next();
                    } else {
                        compute_feedback(context, r.clone());
                        reveal.set(Some(r));
                        phase.set(Phase::Feedback);
                    }
                }
                Err(crate::game::session::SubmitError::Store(e)) => {
                    storage_problem.set(Some(format!("Your last answer could not be saved ({e}). Download your responses below; nothing already saved is lost.")));
                }
                Err(e) => entry_error.set(e.to_string()),
            }
            busy.set(false);
        });
    };

    let manifest = move || {
        let plan = session.with_value(|s| s.as_ref().map(|g| g.plan().clone()))?;
        let backend = match ctx.backend.get_untracked() {
            crate::app::state::BackendState::Ready { kind, adapter, .. } => (kind.name().to_string(), adapter),
            _ => (String::new(), String::new()),
        };
        let (model_name, weight_sha256) = ctx.model_info.get_value();
        let info = ModelInfo { model_name, weight_sha256, tokenizer: "GPT-2 BPE (50257)".into(), backend: backend.0, adapter: backend.1 };
        Some(Manifest::new(&info, &study.get_value(), &plan, 0, &timestamp()))
    };
    // Completion: responses are sent (when the study names a submit path) and the participant
    // redirected only once every response is confirmed in storage (and accepted by the server).
    let redirect_status = RwSignal::new(String::new());
    Effect::new(move |_| {
        if phase.get() != Phase::Complete {
            return;
        }
        let (submit_path, redirect) = study.with_value(|s| (s.submit_url.clone(), s.redirect_url.clone()));
        if submit_path.is_none() && redirect.is_none() {
            return;
        }
        let (Some(game), Some(target)) = (session.get_value(), store.get_value()) else { return };
        leptos::task::spawn_local(async move {
            let total = game.progress().1;
            let saved = match target.load(&game.plan().participant).await {
                Ok(saved) if saved.len() >= total => saved,
                Ok(saved) => return redirect_status.set(format!("Only {} of {total} responses are in storage: download them below before leaving.", saved.len())),
                Err(e) => return redirect_status.set(format!("Cannot confirm your responses were saved ({e}): download them below.")),
            };
            if let Some(path) = submit_path {
                redirect_status.set("Sending your responses…".into());
                let Some(manifest) = manifest() else { return };
                let body = serde_json::to_string(&ExportBundle { manifest, responses: saved }).unwrap_or_default();
                if let Err(e) = crate::app::web::fetch::post_json(&path, &body).await {
                    return redirect_status.set(format!("Your responses could not be sent ({e}). They are saved on this device: download them below and send them to the researcher."));
                }
                redirect_status.set("Your responses were sent. Thank you!".into());
            }
            let Some(url) = redirect else { return };
            if matches!(target, AnyStore::Memory(_)) {
                return redirect_status.set("Responses are only in memory here: download them below before leaving.".into());
            }
            redirect_status.set("All responses saved. Redirecting…".into());
            if let Some(w) = web_sys::window() {
                let _ = w.location().assign(&url);
            }
        });
    });

    let plan_passages = move || session.with_value(|s| s.as_ref().map(|g| g.plan().items.iter().map(|(p, _)| p.clone()).collect::<Vec<Passage>>()).unwrap_or_default());
    let download = move |kind: &'static str| {
        let all = records.get_untracked();
        let participant = session.with_value(|s| s.as_ref().map(|g| g.plan().participant.clone())).unwrap_or_default();
        let safe: String = participant.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(40).collect();
        let result = match kind {
            "long" => download_text(&format!("clozelab-{safe}-long.csv"), "text/csv", &export_long_csv(&all, Delimiter::Comma)),
            "provo" => download_text(&format!("clozelab-{safe}-provo.csv"), "text/csv", &provo_aggregate_csv(&all, &plan_passages(), Delimiter::Comma)),
            _ => match manifest() {
                Some(m) => download_text(&format!("clozelab-{safe}.json"), "application/json", &serde_json::to_string_pretty(&ExportBundle { manifest: m, responses: all }).unwrap_or_default()),
                None => Err("nothing to export yet".into()),
            },
        };
        if let Err(e) = result {
            import_status.set(format!("Download failed: {e}"));
        }
    };

    let import_files = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let Some(files) = input.files() else { return };
        leptos::task::spawn_local(async move {
            let files = match read_file_list(&files).await {
                Ok(f) => f,
                Err(e) => return import_status.set(e),
            };
            let mut merged: Vec<Vec<ResponseRecord>> = Vec::new();
            let mut messages = Vec::new();
            let mut new_passages: Option<Vec<Passage>> = None;
            for (name, bytes) in files {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let lower = name.to_lowercase();
                let result: Result<String, String> = if lower.ends_with(".txt") {
                    parse_plain_text(&text).map(|ps| {
                        let n = ps.len();
                        new_passages = Some(ps);
                        format!("{n} passages")
                    }).map_err(|e| e.to_string())
                } else if lower.ends_with(".json") && let Ok(config) = StudyConfig::from_json(&text) {
                    // A study config from a file: run it as an experiment, as `?study=URL` would.
                    start(config, true);
                    Ok("study loaded".to_string())
                } else if lower.ends_with(".json") {
                    import_bundle(&name, &text).map(|r| {
                        let n = r.len();
                        merged.push(r);
                        format!("{n} responses")
                    }).map_err(|e| e.to_string())
                } else if text.contains("Response_Count") {
                    crate::data::import_provo_norms(&name, &text).map(|(norms, skipped)| {
                        humans.update(|h| {
                            for ((id, num), ctx) in &norms.contexts {
                                let entry = h.entry((id.to_string(), *num)).or_default();
                                for (resp, n) in &ctx.responses {
                                    *entry.entry(crate::words::normalize(resp)).or_default() += n;
                                }
                            }
                        });
                        new_passages = Some(from_norms(&norms));
                        format!("{} contexts with human norms ({} rows skipped)", norms.contexts.len(), skipped.len())
                    }).map_err(|e| e.to_string())
                } else {
                    crate::data::import_long_csv(&name, &text).map(|r| {
                        let n = r.len();
                        merged.push(r);
                        format!("{n} responses")
                    }).map_err(|e| e.to_string())
                };
                messages.push(match result {
                    Ok(m) => format!("{name}: {m}"),
                    Err(e) => format!("{name}: {e}"),
                });
            }
            if !merged.is_empty() {
                imported.update(|all| all.extend(merged.iter().flatten().cloned()));
                let add = merge_responses(merged.iter().map(Vec::as_slice));
                humans.update(|h| {
                    for (key, counts) in add {
                        let entry = h.entry(key).or_default();
                        for (w, n) in counts {
                            *entry.entry(w).or_default() += n;
                        }
                    }
                });
            }
            if let Some(passages) = new_passages.filter(|_| !experiment.get_untracked()) {
                let mut config = StudyConfig::default_play();
                config.passages = passages.iter().map(|p| p.id.clone()).collect();
                config.texts = passages;
                start(config, false);
            }
            import_status.set(messages.join("; "));
        });
    };

    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if first_key.get_value().is_none() && ev.key().chars().count() == 1 {
            first_key.set_value(Some(now_ms() - shown_at.get_value()));
        }
        if ev.key() == "Enter" {
            ev.prevent_default();
            submit();
        }
    };
    // In feedback the Next button has the focus, so Enter (a button's own key) moves on.
    let next_ref = NodeRef::<leptos::html::Button>::new();
    Effect::new(move |_| {
        if phase.get() == Phase::Feedback
            && let Some(button) = next_ref.get()
        {
            let _ = button.focus();
        }
    });

    let progress_text = move || {
        trial.track();
        let (done, total) = session.with_value(|s| s.as_ref().map(GameSession::progress)).unwrap_or((0, 0));
        format!("{done} of {total}")
    };

    view! {
        <section class="game" aria-labelledby="game-heading">
            <h2 id="game-heading">{move || if experiment.get() { study.with_value(|s| if s.title.is_empty() { "Study".to_string() } else { s.title.clone() }) } else { "Guess the next word".to_string() }}</h2>
            {move || storage_problem.get().map(|m| view! { <p class="warning" role="alert" data-testid="storage-problem">{m}</p> })}
            {move || match phase.get() {
                Phase::Loading => view! { <p>"Loading…"</p> }.into_any(),
                Phase::Failed(m) => view! { <p class="error" role="alert" data-testid="game-error">{m}</p> }.into_any(),
                Phase::Consent => view! {
                    <div class="consent" data-testid="consent">
                        <p class="study-text">{study.with_value(|s| s.consent.clone())}</p>
                        <p class="study-text">{study.with_value(|s| s.instructions.clone())}</p>
                        <button data-testid="consent-accept" on:click=move |_| show_next()>{study.with_value(|s| if s.consent.trim().is_empty() { "Start" } else { "I agree — start" })}</button>
                    </div>
                }.into_any(),
                Phase::Playing | Phase::Feedback => {
                    let t = trial.get();
                    let practice = t.as_ref().is_some_and(|t| t.practice);
                    view! {
                        <p class="game-progress" data-testid="game-progress">{progress_text}{if practice { " · practice" } else { "" }}</p>
                        <p class="passage" data-testid="passage-context"
                            data-passage=t.as_ref().map(|t| t.passage_id.clone()).unwrap_or_default()
                            data-position=t.as_ref().map(|t| t.position.to_string()).unwrap_or_default()>
                            {t.as_ref().map(|t| t.context.clone()).unwrap_or_default()}
                            {move || reveal.get().filter(|_| phase.get() == Phase::Feedback).map(|r| view! { " " <mark class="true-word">{r.true_word}</mark> })}
                        </p>
                        <Show when=move || phase.get() == Phase::Playing>
                            <label for="guess">"Your guess for the next word"</label>
                            <input id="guess" data-testid="guess" node_ref=input_ref type="text" inputmode="text"
                                autocomplete="off" autocapitalize="off" spellcheck="false" maxlength="60"
                                prop:value=move || entry.get() on:input=move |ev| entry.set(event_target_value(&ev))
                                prop:disabled=move || busy.get() on:keydown=on_keydown />
                            <button data-testid="submit-guess" on:click=move |_| submit()>"Submit (Enter)"</button>
                            <p class="error" aria-live="assertive" data-testid="entry-error">{move || entry_error.get()}</p>
                        </Show>
                        <Show when=move || phase.get() == Phase::Feedback>
                            {move || reveal.get().map(|r| feedback_view(r, model_feedback, humans, score))}
                            <button data-testid="next-context" node_ref=next_ref on:click=move |_| show_next()>"Next (Enter)"</button>
                        </Show>
                    }.into_any()
                }
                Phase::Complete => view! {
                    <div class="complete" data-testid="complete">
                        <p>"Thank you — you have finished."</p>
                        {move || { let code = study.with_value(|s| s.completion_code.clone()); (!code.is_empty()).then(|| view! { <p>"Completion code: " <strong data-testid="completion-code">{code}</strong></p> }) }}
                        <p aria-live="polite" data-testid="redirect-status">{move || redirect_status.get()}</p>
                    </div>
                }.into_any(),
            }}
            <details class="data-panel" open=move || storage_problem.get().is_some()>
                <summary>"Your data"</summary>
                <p data-testid="record-count">{move || format!("{} responses stored on this device", records.get().len())}</p>
                <button data-testid="download-long" on:click=move |_| download("long")>"Download responses (CSV)"</button>
                <button data-testid="download-provo" on:click=move |_| download("provo")>"Download Provo-format counts (CSV)"</button>
                <button data-testid="download-json" on:click=move |_| download("json")>"Download everything (JSON + manifest)"</button>
                <label for="import-data">"Import passages (.txt), Provo norms (.csv), exports (.csv/.json) or a study config (.json)"</label>
                <input id="import-data" data-testid="import-data" type="file" multiple=true accept=".txt,.csv,.tsv,.json" on:change=import_files />
                <p aria-live="polite" data-testid="import-status">{move || import_status.get()}</p>
                <Show when=move || !imported.get().is_empty()>
                    <table class="imported" data-testid="imported-responses">
                        <caption>{move || format!("Imported responses (first 50 of {})", imported.get().len())}</caption>
                        <thead><tr><th>"participant"</th><th>"passage"</th><th>"position"</th><th>"response"</th></tr></thead>
                        <tbody>
                            {move || imported.get().into_iter().take(50).map(|r| view! {
                                <tr><td>{r.participant}</td><td>{r.passage}</td><td>{r.position}</td><td>{r.response}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </Show>
            </details>
        </section>
    }
}

/// Play mode's feedback for one guess.
fn feedback_view(
    r: Reveal,
    model: RwSignal<ModelFeedback>,
    humans: RwSignal<BTreeMap<(String, u32), BTreeMap<String, u32>>>,
    score: RwSignal<Score>,
) -> impl IntoView {
    let truth = crate::words::normalize(&r.true_word);
    let mine = r.record.normalized.clone();
    let human = humans.with_untracked(|h| h.get(&(r.record.passage.clone(), r.record.position)).cloned());
    let human_dist: Option<BTreeMap<String, f64>> = human.as_ref().map(|h| {
        let total: u32 = h.values().sum();
        h.iter().map(|(w, c)| (w.clone(), *c as f64 / total.max(1) as f64)).collect()
    });
    let human_n: u32 = human.as_ref().map_or(0, |h| h.values().sum());
    let (truth2, mine2, human_dist2) = (truth.clone(), mine.clone(), human_dist.clone());
    let pct = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{:.0}%", v * 100.0));
    view! {
        <div class="feedback" data-testid="feedback">
            <p data-testid="verdict" data-correct=r.correct.to_string() class=if r.correct { "right" } else { "wrong" }>
                {if r.correct { "Right! " } else { "Not this time. " }} "The word was " <strong>{r.true_word.clone()}</strong> "; you said " <strong>{r.record.response.clone()}</strong> "."
            </p>
            <div class="bars-pair">
                {human_dist.clone().map(|d| view! { <WordBars title=format!("Humans ({human_n} responses)") dist=d mine=mine.clone() truth=truth.clone() testid="human-bars"/> })}
                {move || match model.get() {
                    ModelFeedback::NoModel => view! { <p>"Load a model to compare with GPT-2."</p> }.into_any(),
                    ModelFeedback::Computing => view! { <p aria-live="polite">"GPT-2 is guessing…"</p> }.into_any(),
                    ModelFeedback::Failed(e) => view! { <p class="error">{format!("GPT-2 could not guess: {e}")}</p> }.into_any(),
                    ModelFeedback::Ready(d) => {
                        let distance = human_dist2.as_ref().and_then(|h| {
                            let a = WordDistribution::from_counts(h.iter().map(|(w, p)| (w.clone(), *p))).ok()?;
                            let b = WordDistribution::from_counts(d.iter().map(|(w, p)| (w.clone(), *p))).ok()?;
                            Some(tvd(&a, &b))
                        });
                        view! {
                            <WordBars title=format!("GPT-2 ({FEEDBACK_SAMPLES} samples)") dist=d mine=mine2.clone() truth=truth2.clone() testid="model-bars"/>
                            {distance.map(|t| view! { <p data-testid="tvd">{format!("Total variation distance, GPT-2 vs humans: {t:.2}")}</p> })}
                        }.into_any()
                    }
                }}
            </div>
            <p class="score" data-testid="score">{move || {
                let s = score.get();
                format!("Top-1 accuracy — you: {} · GPT-2: {} · average human: {}", pct(s.participant_accuracy()), pct(s.model_accuracy()), pct(s.human_accuracy()))
            }}</p>
        </div>
    }
}
