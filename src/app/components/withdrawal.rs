//! Declining and withdrawing, for every game: the "Withdraw" button shown during a study, and
//! what leaving does. The participant's answers are deleted from this browser (responses,
//! token answers, unsent submissions); JATOS's run is aborted (JATOS deletes its result data)
//! or the study server is sent a withdrawal notice; then the participant goes to the study's
//! decline URL, or is told what happened.

use leptos::prelude::*;

use crate::app::texts::{TextsContext, use_texts};
use crate::app::web::clock::timestamp;
use crate::app::web::fetch::{fetch_text_uncached, post_json};
use crate::app::web::idb::IdbStore;
use crate::game::participant_texts::Say;
use crate::game::study::StudyConfig;
use crate::game::withdrawal::{Leaving, WithdrawalNotice, farewell};

/// Leaves `study` as `participant` without keeping anything; returns what to tell them, in
/// the study's texts `say` (when the study has no decline URL to go to).
pub async fn leave_without_data(
    study: &StudyConfig,
    participant: &str,
    leaving: Leaving,
    say: TextsContext,
) -> String {
    let run_key = study.jatos.as_ref().map(|run| run.result_key());
    let mut problems = Vec::new();
    match IdbStore::open().await {
        Ok(store) => {
            if let Err(e) = store
                .forget_participant(participant, run_key.as_deref())
                .await
            {
                problems.push(format!("this browser's copy could not be deleted ({e})"));
            }
        }
        Err(e) => problems.push(format!("this browser's store could not be opened ({e})")),
    }
    let mut told_server = false;
    if let Some(run) = &study.jatos {
        let why = match leaving {
            Leaving::Declined => "declined consent",
            Leaving::Withdrew => "withdrew",
        };
        match fetch_text_uncached(&run.abort_url(&format!("The participant {why}"))).await {
            Ok(_) => told_server = true,
            Err(e) => problems.push(format!("JATOS could not be told ({e})")),
        }
    } else if let (Leaving::Withdrew, Some(url)) = (leaving, &study.submit_url) {
        let notice = WithdrawalNotice {
            participant: participant.to_string(),
            study: study.title.clone(),
            withdrawn_at: timestamp(),
        };
        match post_json(url, &notice.to_json(), &notice.key()).await {
            Ok(()) => told_server = true,
            Err(e) => problems.push(format!("the study's server could not be told ({e})")),
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
