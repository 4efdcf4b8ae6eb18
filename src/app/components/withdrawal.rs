//! Declining and withdrawing, for every game: the "Withdraw" button shown during a study, and
//! what leaving does. The participant's answers are deleted from this browser (responses,
//! token answers, unsent submissions); JATOS's run is aborted (JATOS deletes its result data)
//! or the study server is sent a withdrawal notice; then the participant goes to the study's
//! decline URL, or is told what happened.

use leptos::prelude::*;

use crate::app::texts::{TextsContext, use_texts};
use crate::app::web::clock::timestamp;
use crate::app::web::idb::IdbStore;
use crate::app::web::outbox::deliver;
use crate::game::design::participant_texts::Say;
use crate::game::design::run_scope::RunScope;
use crate::game::design::study::StudyConfig;
use crate::game::run::outbox::{Pending, SendMethod};
use crate::game::run::withdrawal::{Leaving, WithdrawalNotice, farewell};

/// How long a participant who leaves waits while the server is told (tries with backoff).
const WITHDRAWAL_WAIT_MS: f64 = 8_000.0;

/// Leaves `study`'s run `scope` without keeping anything; returns what to tell them, in the
/// study's texts `say` (when the study has no decline URL to go to).
pub async fn leave_without_data(
    study: &StudyConfig,
    scope: &RunScope,
    leaving: Leaving,
    say: TextsContext,
) -> String {
    let mut problems = Vec::new();
    match IdbStore::open().await {
        Ok(store) => {
            if let Err(e) = store.forget_run(scope).await {
                problems.push(format!("this browser's copy could not be deleted ({e})"));
            }
        }
        Err(e) => problems.push(format!("this browser's store could not be opened ({e})")),
    }
    // Told like any send: kept in the outbox and retried, so a call that fails now goes out on
    // the next visit (after the local copy, and the sends still waiting, are gone above).
    let told = if let Some(run) = &study.jatos {
        let why = match leaving {
            Leaving::Declined => "declined consent",
            Leaving::Withdrew => "withdrew",
        };
        Some(Pending {
            key: scope.withdrawal_key(),
            url: run.abort_url(&format!("The participant {why}")),
            body: String::new(),
            attempts: 0,
            method: SendMethod::Get,
        })
    } else if let (Leaving::Withdrew, Some(url)) = (leaving, &study.submit_url) {
        let notice = WithdrawalNotice {
            participant: scope.participant.clone(),
            study: study.title.clone(),
            withdrawn_at: timestamp(),
            run: scope.run.clone(),
        };
        Some(Pending {
            key: notice.key(),
            url: url.clone(),
            body: notice.to_json(),
            attempts: 0,
            method: SendMethod::PostJson,
        })
    } else {
        None
    };
    let mut told_server = false;
    if let Some(pending) = told {
        match deliver(pending, WITHDRAWAL_WAIT_MS, |_| {}).await {
            Ok(()) => told_server = true,
            Err(e) if e.refused => {
                problems.push(format!("the study's server refused to hear it ({})", e.reason))
            }
            Err(e) => problems.push(format!(
                "the study's server could not be told yet ({}); this browser tells it on your next visit",
                e.reason
            )),
        }
    }
    if problems.is_empty()
        && let Some(url) = &study.decline_url
        && let Some(window) = web_sys::window()
        && window.location().assign(url).is_ok()
    {
        return say.get(Say::Leaving);
    }
    let mut message = say.get(farewell(leaving, told_server));
    if !problems.is_empty() {
        message.push_str(&format!(" But {}.", problems.join("; ")));
    }
    message
}

/// "Withdraw from the study", asked twice before anything is deleted.
#[component]
pub fn WithdrawButton(on_withdraw: Callback<()>) -> impl IntoView {
    let confirming = RwSignal::new(false);
    let say = use_texts();
    view! {
        <div class="withdraw">
            <Show
                when=move || confirming.get()
                fallback=move || {
                    view! {
                        <button
                            type="button"
                            class="link"
                            data-testid="withdraw"
                            on:click=move |_| confirming.set(true)
                        >
                            {say.get(Say::Withdraw)}
                        </button>
                    }
                }
            >
                <p role="alert">{say.get(Say::WithdrawConfirm)}</p>
                <button
                    type="button"
                    data-testid="withdraw-confirm"
                    on:click=move |_| on_withdraw.run(())
                >
                    {say.get(Say::WithdrawYes)}
                </button>
                <button type="button" on:click=move |_| confirming.set(false)>
                    {say.get(Say::WithdrawNo)}
                </button>
            </Show>
        </div>
    }
}

/// What a participant who declined or withdrew is told (when the study has no decline URL).
#[component]
pub fn LeftStudy(message: String) -> impl IntoView {
    view! {
        <p class="study-text" data-testid="left-study">
            {message}
        </p>
    }
}
