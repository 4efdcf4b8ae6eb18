//! A study's attention checks inside any game: [`Attention`] holds the checks, the answers
//! given (saved in IndexedDB, in memory for a preview) and the one due now;
//! [`AttentionCheckView`] asks it, over the passage so far.

use leptos::prelude::*;

use crate::app::texts::use_texts;
use crate::app::web::clock::{now_ms, timestamp};
use crate::app::web::idb::IdbStore;
use crate::game::design::attention::{AttentionCheck, AttentionResult, due};
use crate::game::design::participant_texts::Say;
use crate::game::design::run_scope::RunScope;

/// The checks of one participant's run.
#[derive(Clone, Copy)]
pub struct Attention {
    checks: StoredValue<Vec<AttentionCheck>>,
    scope: StoredValue<RunScope>,
    /// A preview keeps its answers in this page only.
    in_memory: StoredValue<bool>,
    pub results: RwSignal<Vec<AttentionResult>>,
    /// The check on screen, if one is due.
    pub pending: RwSignal<Option<AttentionCheck>>,
}

impl Attention {
    /// No checks (play mode), until [`Self::start`].
    pub fn new() -> Self {
        Self {
            checks: StoredValue::new(Vec::new()),
            scope: StoredValue::new(RunScope::default()),
            in_memory: StoredValue::new(true),
            results: RwSignal::new(Vec::new()),
            pending: RwSignal::new(None),
        }
    }

    /// The study's checks for the run `scope`, with the answers an earlier visit of that run
    /// saved.
    pub async fn start(self, checks: Vec<AttentionCheck>, scope: RunScope, in_memory: bool) {
        self.checks.set_value(checks);
        self.scope.set_value(scope);
        self.in_memory.set_value(in_memory);
        self.clear();
        if in_memory || self.checks.with_value(Vec::is_empty) {
            return;
        }
        if let Ok(store) = IdbStore::open().await
            && let Ok(saved) = store.attention_results(&self.scope.get_value()).await
        {
            self.results.set(saved);
        }
    }

    /// Puts the check due once `answered` of `passage`'s `answers` are given on screen (none
    /// when nothing is due).
    pub fn ask_if_due(self, passage: &str, answered: usize, answers: usize) {
        let done: Vec<String> = self
            .results
            .with_untracked(|r| r.iter().map(|r| r.check.clone()).collect());
        let check = self
            .checks
            .with_value(|c| due(c, passage, answered, answers, &done).cloned());
        self.pending.set(check);
    }

    /// Forgets the answers and the check on screen (the participant left the study).
    pub fn clear(self) {
        self.results.set(Vec::new());
        self.pending.set(None);
    }

    /// Records the answer to the check on screen (saved, where the browser can, before it
    /// counts).
    pub async fn answer(self, text: String, response_time_ms: f64) {
        let Some(check) = self.pending.get_untracked() else {
            return;
        };
        let result = AttentionResult::new(
            &self.scope.with_value(|s| s.participant.clone()),
            &check,
            &text,
            Some(response_time_ms),
            &timestamp(),
        );
        if !self.in_memory.get_value() {
            // Where the browser cannot store it, the answer still counts for this page: it goes
            // to the study's server in every bundle's manifest, and a reload asks again.
            if let Ok(store) = IdbStore::open().await {
                let _ = store.save_attention(&self.scope.get_value(), &result).await;
            }
        }
        self.results.update(|all| {
            all.retain(|r| r.check != result.check);
            all.push(result);
        });
        self.pending.set(None);
    }
}

/// The check due now, over `context` (the passage so far); `on_done` runs once it is saved.
#[component]
pub fn AttentionCheckView(
    attention: Attention,
    check: AttentionCheck,
    context: String,
    on_done: Callback<()>,
) -> impl IntoView {
    let shown_at = now_ms();
    let say = use_texts();
    let typed = RwSignal::new(String::new());
    let problem = RwSignal::new(String::new());
    let send = Action::new_local(move |text: &String| {
        let text = text.clone();
        async move {
            attention.answer(text, now_ms() - shown_at).await;
            on_done.run(());
        }
    });
    let submit = move || {
        let text = typed.get_untracked();
        if text.trim().is_empty() {
            problem.set(say.get(Say::AttentionEmpty));
        } else {
            send.dispatch(text);
        }
    };
    view! {
        <div class="attention-check" data-testid="attention-check">
            <p class="context">{context}</p>
            <p class="instruction" data-testid="attention-instruction">
                {check.instruction.clone()}
            </p>
            <form on:submit=move |ev| {
                ev.prevent_default();
                submit();
            }>
                <input
                    type="text"
                    data-testid="attention-answer"
                    aria-label=check.instruction
                    autocomplete="off"
                    autocapitalize="off"
                    spellcheck="false"
                    maxlength="100"
                    prop:value=typed
                    on:input=move |ev| typed.set(event_target_value(&ev))
                />
                <button type="submit" data-testid="attention-submit" disabled=send.pending()>
                    {say.get(Say::AttentionContinue)}
                </button>
            </form>
            <p class="error" role="alert">
                {problem}
            </p>
        </div>
    }
}
