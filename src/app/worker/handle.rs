//! What the worker does for each request (everything but cancel and upload chunks, which are
//! handled as they arrive).

use super::{
    Responder, Shared, WorkerError, analyse, backend_reply, beyond_words, device, engine, games,
    load,
};
use crate::estimators::progress::{Monitor, Pause, Progress};
use crate::estimators::sampler::{SamplerConfig, sample_words};
use crate::estimators::wordprob::WordScorer;
use crate::runtime::distributions::{sequence_logprobs, token_stats};
use crate::runtime::protocol::{Reply, Request};

/// Reports progress to the page and stops when the page cancels the request.
struct PageMonitor {
    state: Shared,
    responder: Responder,
}

impl Monitor for PageMonitor {
    fn now_s(&self) -> f64 {
        js_sys::Date::now() / 1000.0
    }
    fn report(&mut self, progress: &Progress) -> bool {
        if self.state.borrow().cancelled.contains(&self.responder.id) {
            return false;
        }
        self.responder.send(Reply::Progress(progress.clone()));
        true
    }
    fn pause(&mut self) -> Pause<'_> {
        // One macrotask: a Cancel message queued meanwhile is received before the next level.
        Box::pin(gloo_timers::future::TimeoutFuture::new(0))
    }
}

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

async fn run(state: &Shared, request: Request, responder: &Responder) -> Reply {
    let result: Result<Reply, WorkerError> = async {
        match request {
            Request::Init { force_cpu } => Ok(backend_reply(&device(state, force_cpu).await)),
            Request::Backend => Ok(backend_reply(&device(state, false).await)),
            Request::LoadUrl { base } => {
                let (compute, _) = device(state, false).await;
                let (engine, summary) = load::from_url(&base, &compute, |step, loaded, total| {
                    responder.send(Reply::Loading {
                        step: step.to_string(),
                        loaded,
                        total,
                    })
                })
                .await?;
                let mut state = state.borrow_mut();
                state.set_engine(engine);
                state.model_url = Some(base);
                Ok(Reply::ModelReady(summary))
            }
            Request::UploadEnd => {
                let (compute, _) = device(state, false).await;
                let upload = state
                    .borrow_mut()
                    .upload
                    .take()
                    .ok_or(crate::runtime::protocol::UploadError::NotStarted)?;
                let files = upload.finish()?;
                responder.send(Reply::Loading {
                    step: "building the model on the device".into(),
                    loaded: 0,
                    total: None,
                });
                let (engine, summary) = load::from_files(files, &compute)?;
                let mut state = state.borrow_mut();
                state.set_engine(engine);
                state.model_url = None;
                Ok(Reply::ModelReady(summary))
            }
            Request::NextTokens { context, k } => {
                let engine = engine(state)?;
                engine
                    .next_tokens(&context, k)
                    .await
                    .map(Reply::NextTokens)
                    .map_err(WorkerError::from)
            }
            Request::SequenceLogProbs { context, tokens } => {
                let engine = engine(state)?;
                let ids = engine.tokenizer.encode_context(&context)?;
                let logprobs = sequence_logprobs(&engine.model, &ids, &tokens).await?;
                Ok(Reply::LogProbs(
                    logprobs.into_iter().map(f64::from).collect(),
                ))
            }
            Request::SampleWords {
                context,
                samples,
                seed,
                decoding,
                token_budget,
            } => {
                let engine = engine(state)?;
                let on_gpu = state
                    .borrow()
                    .device
                    .as_ref()
                    .is_some_and(|(d, _)| d.kind == crate::runtime::backend::BackendKind::Wgpu);
                let config = SamplerConfig::new(samples, seed)
                    .and_then(|c| c.with_token_budget(token_budget))?
                    .with_strategy(decoding.strategy()?)
                    // Fixed batch sizes pay off only where kernels are compiled per shape.
                    .with_batch_buckets(on_gpu);
                let mut monitor = PageMonitor {
                    state: state.clone(),
                    responder: responder.clone(),
                };
                let mut progress = Progress {
                    contexts_done: 0,
                    contexts_total: 1,
                    samples_done: 0,
                    elapsed_s: 0.0,
                };
                match sample_words(
                    &engine.model,
                    &engine.tokenizer,
                    &context,
                    &config,
                    &mut monitor,
                    &mut progress,
                )
                .await
                {
                    Ok(words) => Ok(Reply::Words(words)),
                    Err(crate::estimators::sampler::SamplerError::Cancelled) => {
                        Ok(Reply::Cancelled)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            Request::WordProbs {
                context,
                words,
                temperature,
            } => {
                let engine = engine(state)?;
                let mut monitor = PageMonitor {
                    state: state.clone(),
                    responder: responder.clone(),
                };
                // The scorer's token tables (50257 entries) are built once per model; taken out of
                // the state while it runs, so that no borrow is held across an await.
                let cached = state.borrow_mut().scorer.take();
                let mut scorer = cached.unwrap_or_else(|| WordScorer::new(&engine.tokenizer));
                let result = scorer
                    .score(
                        &engine.model,
                        &engine.tokenizer,
                        &context,
                        &words,
                        temperature,
                        &mut monitor,
                    )
                    .await;
                state.borrow_mut().scorer = Some(scorer);
                match result {
                    Ok(scored) => Ok(Reply::WordProbs(scored)),
                    Err(crate::estimators::wordprob::WordProbError::Cancelled) => {
                        Ok(Reply::Cancelled)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            Request::Tokenize { text } => {
                let engine = engine(state)?;
                let ids = engine.tokenizer.encode(&text)?;
                let tokens = ids
                    .into_iter()
                    .map(|id| Ok((id, engine.tokenizer.token_bytes(id)?.to_vec())))
                    .collect::<Result<_, crate::text::tokenizer::TokenizerError>>()?;
                Ok(Reply::Tokens(tokens))
            }
            Request::TokenStats {
                context_ids,
                tokens,
                top,
                sample_seed,
            } => {
                let engine = engine(state)?;
                let stats = token_stats(
                    &engine.model,
                    &engine.tokenizer,
                    &context_ids,
                    &tokens,
                    top,
                    sample_seed,
                )
                .await?;
                Ok(Reply::TokenStats(stats))
            }
            Request::SimulateBias { texts, setup } => {
                games::simulate_bias(state, responder, &texts, &setup).await
            }
            Request::LoadOpponentUrl { base } => {
                games::load_opponent(state, responder, &base).await
            }
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
        }
    }
    .await;
    result.unwrap_or_else(|e| Reply::Failed(e.to_string()))
}
