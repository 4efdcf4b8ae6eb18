//! Word-level requests: sampled next-word distributions (of several contexts at once), and
//! exact probabilities of given words. Both report progress and stop when the page cancels.

use super::monitor::PageMonitor;
use super::{Responder, Shared, WorkerError, engine, on_gpu};
use crate::estimators::progress::Progress;
use crate::estimators::sampler::{SamplerConfig, SamplerError, sample_words_together};
use crate::estimators::wordprob::{WordProbError, WordScorer};
use crate::runtime::protocol::{Reply, SampleWordsRequest};

/// Samples continuations of each context and counts their first words, the contexts together.
pub(super) async fn sample(
    state: &Shared,
    responder: &Responder,
    request: SampleWordsRequest,
) -> Result<Reply, WorkerError> {
    let engine = engine(state)?;
    // Each context brings its own seed; the configuration's is not used.
    let config = SamplerConfig::new(request.samples, 0)
        .and_then(|c| c.with_token_budget(request.token_budget))?
        .with_strategy(request.decoding)
        // Fixed batch sizes pay off only where kernels are compiled per shape.
        .with_batch_buckets(on_gpu(state));
    let mut monitor = PageMonitor::new(state, responder);
    let mut progress = Progress {
        contexts_done: 0,
        contexts_total: request.contexts.len(),
        samples_done: 0,
        elapsed_s: 0.0,
    };
    let contexts: Vec<(&str, u64)> = request
        .contexts
        .iter()
        .map(|c| (c.context.as_str(), c.seed))
        .collect();
    match sample_words_together(
        &engine.model,
        &engine.tokenizer,
        &contexts,
        &config,
        &mut monitor,
        &mut progress,
    )
    .await
    {
        Ok(words) => Ok(Reply::Words(words)),
        Err(SamplerError::Cancelled) => Ok(Reply::Cancelled),
        Err(e) => Err(e.into()),
    }
}

/// The exact probability of each of `words` after `context`.
pub(super) async fn probabilities(
    state: &Shared,
    responder: &Responder,
    context: &str,
    words: &[String],
    temperature: f64,
) -> Result<Reply, WorkerError> {
    let engine = engine(state)?;
    let mut monitor = PageMonitor::new(state, responder);
    // The scorer's token tables (50257 entries) are built once per model; taken out of the
    // state while it runs, so that no borrow is held across an await.
    let cached = state.borrow_mut().scorer.take();
    let mut scorer = cached.unwrap_or_else(|| WordScorer::new(&engine.tokenizer));
    let result = scorer
        .score(
            &engine.model,
            &engine.tokenizer,
            context,
            words,
            temperature,
            &mut monitor,
        )
        .await;
    state.borrow_mut().scorer = Some(scorer);
    match result {
        Ok(scored) => Ok(Reply::WordProbs(scored)),
        Err(WordProbError::Cancelled) => Ok(Reply::Cancelled),
        Err(e) => Err(e.into()),
    }
}
