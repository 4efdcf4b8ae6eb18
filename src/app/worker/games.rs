//! The worker's part in the two-token game beyond one round: the estimator-bias simulation, and
//! a second model that plays beside GPT-2.

use std::rc::Rc;

use super::{Responder, Shared, WorkerError, device, engine, load};
use crate::analysis::perplexity::BiasSetup;
use crate::estimators::progress::Progress;
use crate::runtime::distributions::{simulate_bias as simulate, token_stats};
use crate::runtime::protocol::{InitRequest, Reply};

/// Runs the simulation over `texts`, reporting each position and stopping on cancel.
pub(super) async fn simulate_bias(
    state: &Shared,
    responder: &Responder,
    texts: &[String],
    setup: &BiasSetup,
) -> Result<Reply, WorkerError> {
    let engine = engine(state)?;
    let ids = texts
        .iter()
        .map(|t| engine.tokenizer.encode(t))
        .collect::<Result<Vec<_>, _>>()?;
    let started = js_sys::Date::now();
    let total = setup.positions;
    let before_each = |done: usize| async move {
        // Lets a Cancel arrive between forward passes.
        gloo_timers::future::TimeoutFuture::new(0).await;
        if state.borrow().cancelled.contains(&responder.id) {
            return false;
        }
        responder.send(Reply::Progress(Progress {
            contexts_done: done,
            contexts_total: total,
            samples_done: 0,
            elapsed_s: (js_sys::Date::now() - started) / 1000.0,
        }));
        true
    };
    Ok(
        match simulate(&engine.model, &ids, setup, before_each).await? {
            Some((contexts, points)) => Reply::Bias { contexts, points },
            None => Reply::Cancelled,
        },
    )
}

/// Loads the second model; it must share the first one's vocabulary.
pub(super) async fn load_opponent(
    state: &Shared,
    responder: &Responder,
    base: &str,
) -> Result<Reply, WorkerError> {
    let (compute, _) = device(state, &InitRequest::default()).await;
    let (opponent, summary) = load::from_url(base, &compute, |step, loaded, total| {
        responder.send(Reply::Loading {
            step: step.to_string(),
            loaded,
            total,
        })
    })
    .await?;
    let main = engine(state)?;
    let (theirs, ours) = (opponent.tokenizer.vocab_size(), main.tokenizer.vocab_size());
    if theirs != ours {
        return Err(WorkerError::OpponentVocabulary(theirs, ours));
    }
    let mut state = state.borrow_mut();
    state.opponent = Some(Rc::new(opponent));
    state.opponent_url = Some(base.to_string());
    Ok(Reply::ModelReady(summary))
}

/// The second model's log-probabilities of `tokens` after `context_ids`.
pub(super) async fn opponent_logprobs(
    state: &Shared,
    context_ids: &[u32],
    tokens: &[u32],
) -> Result<Reply, WorkerError> {
    let opponent = state
        .borrow()
        .opponent
        .clone()
        .ok_or(WorkerError::NoOpponent)?;
    let stats = token_stats(
        &opponent.model,
        &opponent.tokenizer,
        context_ids,
        tokens,
        0,
        None,
    )
    .await?;
    Ok(Reply::LogProbs(stats.logprobs))
}
