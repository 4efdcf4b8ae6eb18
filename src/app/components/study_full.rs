//! A participant who arrives once adaptive norming's target is met: JATOS's run is aborted
//! (nothing was answered, so nothing is kept) and they go to the study's `full_url`, or are told
//! the study is full.

use crate::app::texts::TextsContext;
use crate::app::web::outbox::deliver;
use crate::game::design::participant_texts::Say;
use crate::game::design::study::StudyConfig;
use crate::game::run::outbox::{Pending, SendMethod};

/// How long the participant waits while JATOS is told (tries with backoff).
const ABORT_WAIT_MS: f64 = 8_000.0;

/// Ends the run of a participant the study no longer needs (`reason`: the target met, in
/// words, for JATOS's log); returns what to tell them when there is no `full_url` to go to.
pub async fn leave_full_study(study: &StudyConfig, reason: &str, say: TextsContext) -> String {
    if let Some(run) = &study.jatos {
        let pending = Pending {
            key: format!("jatos-full/{}", run.study_result_uuid),
            url: run.abort_url(&format!("The study was full: {reason}")),
            body: String::new(),
            attempts: 0,
            method: SendMethod::Get,
        };
        if let Err(e) = deliver(pending, ABORT_WAIT_MS, |_| {}).await {
            leptos::logging::warn!(
                "JATOS could not be told that the study is full: {}",
                e.reason
            );
        }
    }
    let full_url = study
        .adaptive_norming
        .as_ref()
        .and_then(|n| n.full_url.as_ref());
    if let Some(url) = full_url
        && let Some(window) = web_sys::window()
        && window.location().assign(url).is_ok()
    {
        return say.get(Say::Leaving);
    }
    say.get(Say::StudyFull)
}
