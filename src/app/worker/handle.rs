//! What the worker does for each request (everything but cancel and upload chunks, which are
//! handled as they arrive).

use super::{
    Responder, Shared, WorkerError, analyse, backend_reply, beyond_words, device, games, load,
    token_requests, word_requests,
};
use crate::runtime::protocol::{Reply, Request};

pub(super) async fn handle(state: &Shared, request: Request, responder: &Responder) -> Reply {
    // A request cancelled before it started never runs.
    gloo_timers::future::TimeoutFuture::new(0).await;
    if state.borrow().cancelled.contains(&responder.id) {
        return Reply::Cancelled;
    }
    let again = request.clone();
    let reply = run(state, request, responder).await;
    // The GPU went away during (or before) this request: on the CPU, with the model loaded
    // again, the request runs once more; the page hears of the switch first.
    let grace_ms = super::lost::loss_grace_ms(&reply);
    match super::lost::fall_back_to_cpu(state, responder, grace_ms).await {
        None => reply,
        Some(Ok(())) => run(state, again, responder).await,
        Some(Err(e)) => Reply::Failed(e.to_string()),
    }
}

/// One call per request: each request's work lives beside the others of its kind.
async fn run(state: &Shared, request: Request, responder: &Responder) -> Reply {
    let result: Result<Reply, WorkerError> = match request {
        Request::Init { force_cpu } => Ok(backend_reply(&device(state, force_cpu).await)),
        Request::Backend => Ok(backend_reply(&device(state, false).await)),
        Request::LoadUrl { base } => load::load_url(state, responder, base).await,
        Request::UploadEnd => load::upload_end(state, responder).await,
        Request::NextTokens { context, k } => token_requests::next_tokens(state, &context, k).await,
        Request::SequenceLogProbs { context, tokens } => {
            token_requests::sequence_log_probs(state, &context, &tokens).await
        }
        Request::SampleWords {
            context,
            samples,
            seed,
            decoding,
            token_budget,
        } => {
            let request = word_requests::SampleWords {
                context,
                samples,
                seed,
                decoding,
                token_budget,
            };
            word_requests::sample(state, responder, request).await
        }
        Request::WordProbs {
            context,
            words,
            temperature,
        } => word_requests::probabilities(state, responder, &context, &words, temperature).await,
        Request::Tokenize { text } => token_requests::tokenize(state, &text),
        Request::TokenStats {
            context_ids,
            tokens,
            top,
            sample_seed,
        } => token_requests::stats(state, &context_ids, &tokens, top, sample_seed).await,
        Request::SimulateBias { texts, setup } => {
            games::simulate_bias(state, responder, &texts, &setup).await
        }
        Request::LoadOpponentUrl { base } => games::load_opponent(state, responder, &base).await,
        Request::OpponentLogProbs {
            context_ids,
            tokens,
        } => games::opponent_logprobs(state, &context_ids, &tokens).await,
        Request::Analyse {
            files,
            extra,
            options,
        } => analyse::analyse(state, &files, extra, &options),
        Request::TokenLevel { ece, model } => {
            analyse::token_level(state, responder, ece, &model).await
        }
        Request::Participant {
            participant,
            system,
        } => analyse::participant(state, &participant, &system),
        Request::ContextFigure { key, system } => analyse::context_figure(state, key, &system),
        Request::ClassTvd(request) => beyond_words::class_tvd(state, responder, &request).await,
        Request::Probes(request) => beyond_words::probes(state, responder, &request).await,
        Request::Cancel { .. } => Err(WorkerError::NotQueued("Cancel")),
        Request::UploadBegin { .. } | Request::UploadChunk { .. } => {
            Err(WorkerError::NotQueued("an upload message"))
        }
    };
    result.unwrap_or_else(|e| Reply::Failed(e.to_string()))
}
