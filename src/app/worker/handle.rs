//! What the worker does for each request (everything but cancel and upload chunks, which are
//! handled as they arrive).

use super::{
    Responder, Shared, WorkerError, analyse, backend_reply, beyond_words, device, games, load,
    speed, token_requests, word_requests,
};
use crate::runtime::protocol::{InitRequest, Reply, Request};

pub(super) async fn handle(state: &Shared, request: Request, responder: &Responder) -> Reply {
    // A request cancelled before it started never runs.
    gloo_timers::future::TimeoutFuture::new(0).await;
    if state.borrow().cancelled.contains(&responder.id) {
        return Reply::Cancelled;
    }
    let again = request.clone();
    let reply = run(state, request, responder).await;
    // The GPU went away during (or before) this request, or gave wrong results: on the CPU,
    // with the model loaded again, the request runs once more; the page hears of the switch
    // first.
    match super::lost::fall_back_to_cpu(state, responder, &reply).await {
        None => reply,
        Some(Ok(())) => run(state, again, responder).await,
        Some(Err(e)) => Reply::Failed(e.to_string()),
    }
}

/// One call per request: each request's work lives beside the others of its kind.
async fn run(state: &Shared, request: Request, responder: &Responder) -> Reply {
    let result: Result<Reply, WorkerError> = match request {
        Request::Init(init) => Ok(backend_reply(&device(state, &init).await)),
        Request::Backend => Ok(backend_reply(&device(state, &InitRequest::default()).await)),
        Request::LoadUrl(folder) => load::load_url(state, responder, folder.base).await,
        Request::UploadEnd => load::upload_end(state, responder).await,
        Request::NextTokens(request) => {
            token_requests::next_tokens(state, &request.context, request.k).await
        }
        Request::SequenceLogProbs(request) => {
            token_requests::sequence_log_probs(state, &request.context, &request.tokens).await
        }
        Request::SampleWords(request) => word_requests::sample(state, responder, request).await,
        Request::WordProbs(request) => {
            word_requests::probabilities(
                state,
                responder,
                &request.context,
                &request.words,
                request.temperature,
            )
            .await
        }
        Request::Tokenize(request) => token_requests::tokenize(state, &request.text),
        Request::TokenStats(request) => token_requests::stats(state, &request).await,
        Request::SimulateBias(request) => {
            games::simulate_bias(state, responder, &request.texts, &request.setup).await
        }
        Request::LoadOpponentUrl(folder) => {
            games::load_opponent(state, responder, &folder.base).await
        }
        Request::OpponentLogProbs(request) => {
            games::opponent_logprobs(state, &request.context_ids, &request.tokens).await
        }
        Request::Analyse(request) => analyse::analyse(state, request),
        Request::TokenLevel(request) => {
            analyse::token_level(state, responder, request.ece, &request.model).await
        }
        Request::TargetSurprisal(request) => {
            analyse::target_surprisal(state, responder, &request.model).await
        }
        Request::Participant(request) => analyse::participant(state, &request.participant),
        Request::ContextFigure(request) => {
            analyse::context_figure(state, request.key, &request.system)
        }
        Request::ClassTvd(request) => beyond_words::class_tvd(state, responder, &request).await,
        Request::Probes(request) => beyond_words::probes(state, responder, &request).await,
        Request::MeasureSpeed(setup) => speed::measure(state, responder, &setup).await,
        Request::DecodeSteps(setup) => speed::decode_steps(state, setup).await,
        Request::Cancel(_) => Err(WorkerError::NotQueued("Cancel")),
        Request::UploadBegin(_) | Request::UploadChunk(_) => {
            Err(WorkerError::NotQueued("an upload message"))
        }
    };
    result.unwrap_or_else(|e| Reply::Failed(e.to_string()))
}
