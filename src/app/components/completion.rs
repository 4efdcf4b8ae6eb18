//! The end of a game: thanks, the completion code, and what happened to the responses.

use leptos::prelude::*;

use crate::app::texts::{TextsContext, use_texts};
use crate::game::design::participant_texts::Say;
use crate::game::design::study::StudyConfig;
use crate::game::run::outbox::Pending;

/// A final submission the server has not acknowledged, with where the study goes once it has.
#[derive(Clone, Debug)]
pub struct Unsent {
    /// The submission (also kept in IndexedDB when it can be).
    pub pending: Pending,
    pub redirect: Option<String>,
    /// The JATOS run's delivery key (see `jatos_client::delivered_run_key`).
    pub jatos_run: Option<String>,
}

/// How a finished study's results are doing, for the completion screen.
#[derive(Clone, Copy)]
pub struct SubmitStatus {
    pub text: RwSignal<String>,
    /// Set while the server has not acknowledged the results, for "Try sending again".
    pub unconfirmed: RwSignal<Option<Unsent>>,
    /// The study's texts (in context where the status is made).
    say: TextsContext,
}

impl SubmitStatus {
    pub fn new() -> Self {
        Self {
            text: RwSignal::new(String::new()),
            unconfirmed: RwSignal::new(None),
            say: use_texts(),
        }
    }
}

impl Default for SubmitStatus {
    fn default() -> Self {
        Self::new()
    }
}

#[component]
pub fn CompletionScreen(
    /// The study's completion code (empty: none shown).
    code: String,
    experiment: bool,
    /// Sending and redirecting, as it goes.
    status: SubmitStatus,
    /// Where play mode offers to go next.
    back_href: String,
    done_text: &'static str,
    /// A study played on a shared computer (no id from the link): offers to start the next
    /// person, whose answers then go into a run of their own.
    #[prop(optional)]
    next_participant: bool,
) -> impl IntoView {
    let say = use_texts();
    let retry = move |_| {
        if let Some(unsent) = status.unconfirmed.get_untracked() {
            status.unconfirmed.set(None);
            // Sent again as it is: a copy the server already has is acknowledged, not stored.
            leptos::task::spawn_local(send(status, unsent));
        }
    };
    view! {
        <div class="complete" data-testid="complete">
            <p>{if experiment { say.get(Say::Finished) } else { done_text.to_string() }}</p>
            {(!code.is_empty())
                .then(|| {
                    view! {
                        <p>
                            {say.get(Say::CompletionCode)} " "
                            <strong data-testid="completion-code">{code}</strong>
                        </p>
                    }
                })}
            <p aria-live="polite" data-testid="redirect-status">
                {move || status.text.get()}
            </p>
            {move || {
                status
                    .unconfirmed
                    .get()
                    .map(|Unsent { redirect, .. }| {
                        view! {
                            <p class="warning" data-testid="unconfirmed">
                                <button data-testid="submit-retry" on:click=retry>
                                    {say.get(Say::TryAgain)}
                                </button>
                                {redirect
                                    .map(|url| {
                                        view! {
                                            " "
                                            <a href=url data-testid="leave-unconfirmed">
                                                {say.get(Say::OrContinue)}
                                            </a>
                                            " "
                                            {say.get(Say::MayAskFile)}
                                        }
                                    })}
                            </p>
                        }
                    })
            }}
            {(!experiment)
                .then(|| {
                    view! {
                        <a href=back_href data-testid="back-to-passages">
                            "Choose another passage"
                        </a>
                    }
                })}
            {(experiment && next_participant)
                .then(crate::app::web::participant::next_participant_href)
                .flatten()
                .map(|href| {
                    view! {
                        <p>
                            <a href=href data-testid="next-participant" rel="external">
                                {say.get(Say::NextParticipant)}
                            </a>
                        </p>
                    }
                })}
        </div>
    }
}

/// What a finished study does, for every game: once every response is confirmed in storage
/// (`confirmed`), sends `body` to the study's server (if any: its submit path, or JATOS) under
/// the idempotency key `key` — kept in this browser until the server acknowledges it — then
/// redirects (if asked; in JATOS through JATOS's end, which redirects on). Each step's outcome
/// shows in `status`; nothing is sent or left before the one before it succeeded.
pub async fn leave_study(
    status: SubmitStatus,
    confirmed: Result<(), String>,
    body: impl FnOnce() -> Result<String, String>,
    study: &StudyConfig,
    key: String,
) {
    if let Err(e) = confirmed {
        return status.text.set(e);
    }
    let redirect = study.redirect_url.clone();
    if crate::app::web::delivered::was_delivered(&key) {
        // Back after the end: the server has it all. JATOS's run is closed (its end answers
        // 403 now), elsewhere the redirect is only shown again.
        status.text.set(status.say.get(Say::Sent));
        return go(status, redirect.filter(|_| study.jatos.is_none()));
    }
    if study.submit_url.is_none() {
        return go(status, redirect);
    }
    let pending = match body() {
        Ok(body) => crate::game::run::outbox::submission(study, key, body),
        Err(e) => {
            return status
                .text
                .set(status.say.fill(Say::CannotPrepare, &[("error", &e)]));
        }
    };
    if let Some(pending) = pending {
        let jatos_run = study
            .jatos
            .as_ref()
            .map(crate::app::web::jatos_client::delivered_run_key);
        let unsent = Unsent {
            pending,
            redirect,
            jatos_run,
        };
        send(status, unsent).await;
    }
}

async fn send(status: SubmitStatus, unsent: Unsent) {
    let Unsent {
        pending,
        redirect,
        jatos_run,
    } = unsent;
    use crate::app::web::outbox::{WAIT_ON_COMPLETION_MS, deliver};
    let kept = pending.clone();
    let on_attempt = move |attempt: u32| {
        status.text.set(if attempt == 0 {
            status.say.get(Say::Sending)
        } else {
            let attempt = (attempt + 1).to_string();
            status.say.fill(Say::SendingAgain, &[("attempt", &attempt)])
        });
    };
    let key = pending.key.clone();
    match deliver(pending, WAIT_ON_COMPLETION_MS, on_attempt).await {
        Ok(()) => {
            crate::app::web::delivered::mark_delivered(&key);
            if let Some(run) = &jatos_run {
                crate::app::web::delivered::mark_delivered(run);
            }
            status.text.set(status.say.get(Say::Sent));
            go(status, redirect);
        }
        Err(e) if e.refused => {
            status
                .text
                .set(status.say.fill(Say::Refused, &[("error", &e.reason)]));
            status.unconfirmed.set(Some(Unsent {
                pending: kept,
                redirect,
                jatos_run,
            }));
        }
        Err(e) => {
            let keeping = match e.kept {
                Ok(()) => status.say.get(Say::KeptForLater),
                Err(why) => status.say.fill(Say::CannotKeep, &[("error", &why)]),
            };
            let unconfirmed = status.say.fill(Say::NotConfirmed, &[("error", &e.reason)]);
            status.text.set(format!("{unconfirmed} {keeping}"));
            status.unconfirmed.set(Some(Unsent {
                pending: kept,
                redirect,
                jatos_run,
            }));
        }
    }
}

fn go(status: SubmitStatus, redirect: Option<String>) {
    let Some(url) = redirect else { return };
    status.text.update(|t| {
        if !t.is_empty() {
            t.push(' ');
        }
        t.push_str(&status.say.get(Say::Redirecting));
    });
    if let Some(w) = web_sys::window() {
        let _ = w.location().assign(&url);
    }
}
