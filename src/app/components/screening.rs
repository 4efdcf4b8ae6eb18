//! A question screened the participant out, in any game: the study ends before the passages,
//! keeping only the answers that screened them out (in `bundle`, the run's final bundle with
//! no answers). Those go to the study's server (in JATOS the run then ends as not successful),
//! the list's place is freed, this browser forgets the run, and the participant goes to the
//! study's screened-out URL (Prolific's screen-out link), even when saving or sending failed,
//! or is told.

use crate::app::texts::TextsContext;
use crate::app::web::idb::IdbStore;
use crate::app::web::outbox::deliver;
use crate::game::design::participant_texts::Say;
use crate::game::design::plan::Plan;
use crate::game::design::study::StudyConfig;
use crate::game::run::jatos_batch::LedgerState;
use crate::game::run::outbox::{Pending, SendMethod};

/// How long the participant waits while the server is told.
const SCREEN_OUT_WAIT_MS: f64 = 8_000.0;

/// Ends `study`'s run of `plan` for a participant screened out; returns what to tell them
/// (when the study has no screened-out URL to go to, or something failed on the way).
pub async fn end_screened_out(
    study: &StudyConfig,
    plan: &Plan,
    bundle: Option<String>,
    say: TextsContext,
) -> String {
    let scope = plan.scope();
    if let Some(list) = &plan.list {
        crate::app::web::jatos_batch::mark_list(
            study,
            &plan.participant,
            &list.name,
            LedgerState::Ended,
            Vec::new(),
        )
        .await;
    }
    let mut problems = Vec::new();
    if let Ok(store) = IdbStore::open().await
        && let Err(e) = store.forget_run(&scope).await
    {
        problems.push(format!("this browser's copy could not be deleted ({e})"));
    }
    let told = bundle
        .and_then(|body| crate::game::run::outbox::submission(study, scope.submission_key(), body));
    if let Some(pending) = told
        && let Err(e) = deliver(pending, SCREEN_OUT_WAIT_MS, |_| {}).await
    {
        problems.push(format!(
            "the study's server did not take the answer ({})",
            e.reason
        ));
    }
    if let Some(run) = &study.jatos {
        let end = Pending {
            key: format!("{}/screened_out", scope.submission_key()),
            url: run.end_failed_url("screened out"),
            body: String::new(),
            attempts: 0,
            method: SendMethod::Get,
        };
        if let Err(e) = deliver(end, SCREEN_OUT_WAIT_MS, |_| {}).await {
            problems.push(format!("JATOS did not end the run ({})", e.reason));
        }
    }
    // The participant goes on to the screened-out URL whatever failed on the way: Prolific
    // pays screening by that link, and an answer the server did not take stays in the
    // outbox, sent again on the next visit.
    if !problems.is_empty() {
        web_sys::console::warn_1(&format!("screened out: {}", problems.join("; ")).into());
    }
    if let Some(url) = &study.screened_out_url
        && let Some(window) = web_sys::window()
        && window.location().assign(url).is_ok()
    {
        return say.get(Say::Leaving);
    }
    let mut message = say.get(Say::ScreenedOut);
    if !problems.is_empty() {
        message.push_str(&format!(" ({})", problems.join("; ")));
    }
    message
}
