//! The page's side of JATOS's batch channel: carries [`ListClaim`]'s messages over the WebSocket
//! JATOS opens for a run, so that a participant gets the list fewest completed (or still
//! playing) participants have, and the ledger learns how each run ended.

use std::collections::BTreeMap;

use futures::future::Either;
use futures::{SinkExt, StreamExt};
use gloo_net::websocket::{Message, futures::WebSocket};

use crate::game::design::study::StudyConfig;
use crate::game::run::jatos_batch::{
    BatchOutcome, ClaimStep, LedgerState, ListClaim, ledger_channel,
};
use crate::game::run::norming_state::NormingPlan;

/// How long a participant waits for JATOS's batch channel before the list comes from the URL
/// or the hash of their id instead (a proxy without WebSockets never answers).
const CLAIM_TIMEOUT_MS: u32 = 10_000;

/// The list JATOS's batch session gives `participant` (or that adaptive norming's target is
/// met), or `None` outside JATOS, for a study without lists, or when the batch channel fails
/// (said in the console; the export then records how the list was chosen instead).
pub async fn batch_list(
    config: &StudyConfig,
    participant: &str,
    params: &BTreeMap<String, String>,
) -> Option<BatchOutcome> {
    let now = crate::app::web::clock::epoch_ms();
    let (path, claim) =
        crate::game::run::jatos_batch::batch_list_claim(config, participant, params, now)?;
    run_exchange(&path, claim).await
}

/// Records in JATOS's batch session how `participant`'s run of `list` ended (`state`), so that
/// a run that completed counts for its list and one that ended otherwise frees its place; with
/// adaptive norming a completed run's `answers` (context key, word) join the counts. Does
/// nothing where the run keeps no ledger (outside JATOS, a study without lists, a preview or
/// JATOS's test run); a failure is said in the console.
pub async fn mark_list(
    config: &StudyConfig,
    participant: &str,
    list: &str,
    state: LedgerState,
    answers: Vec<(String, String)>,
) {
    let Some(path) = ledger_channel(config) else {
        return;
    };
    let now = crate::app::web::clock::epoch_ms();
    let mut mark = ListClaim::mark(participant, list, state, now);
    if let Some(plan) = NormingPlan::of(config) {
        mark = mark.with_norming(plan, answers);
    }
    run_exchange(&path, mark).await;
}

/// Runs a claim or a mark over the batch channel at `path`, giving up after
/// [`CLAIM_TIMEOUT_MS`].
async fn run_exchange(path: &str, claim: ListClaim) -> Option<BatchOutcome> {
    let location = web_sys::window()?.location();
    let scheme = if location.protocol().ok()? == "https:" {
        "wss"
    } else {
        "ws"
    };
    let url = format!("{scheme}://{}{path}", location.host().ok()?);
    let timeout = gloo_timers::future::TimeoutFuture::new(CLAIM_TIMEOUT_MS);
    let claiming = std::pin::pin!(claim_over(&url, claim));
    let outcome = match futures::future::select(claiming, timeout).await {
        Either::Left((outcome, _)) => outcome,
        Either::Right(_) => Err("JATOS's batch channel did not answer in time".to_string()),
    };
    match outcome {
        Ok(outcome) => Some(outcome),
        Err(why) => {
            leptos::logging::warn!("JATOS's batch session: {why}");
            None
        }
    }
}

/// Runs `claim` to its end over (re)opened channels at `url`.
async fn claim_over(url: &str, mut claim: ListClaim) -> Result<BatchOutcome, String> {
    'channel: loop {
        let mut socket = WebSocket::open(url).map_err(|e| e.to_string())?;
        while let Some(message) = socket.next().await {
            let text = match message {
                Ok(Message::Text(text)) => text,
                Ok(Message::Bytes(_)) => continue,
                Err(e) => return Err(e.to_string()),
            };
            match claim.on_message(&text) {
                ClaimStep::Wait => {}
                ClaimStep::Send(out) => {
                    socket
                        .send(Message::Text(out))
                        .await
                        .map_err(|e| e.to_string())?;
                }
                ClaimStep::Reopen => {
                    let _ = socket.close(None, None);
                    continue 'channel;
                }
                ClaimStep::Chosen(name) => {
                    let _ = socket.close(None, None);
                    let reason = claim.reason().map(str::to_string);
                    return Ok(BatchOutcome::List { name, reason });
                }
                ClaimStep::Full(reason) => {
                    let _ = socket.close(None, None);
                    return Ok(BatchOutcome::Full(reason));
                }
                ClaimStep::Failed(e) => {
                    let _ = socket.close(None, None);
                    return Err(e.to_string());
                }
            }
        }
        return Err("JATOS closed the batch channel".to_string());
    }
}
