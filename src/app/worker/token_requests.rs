//! Token-level requests: the next tokens, log-probabilities of given tokens, tokenizing, and
//! the token games' statistics of a position.

use super::{Shared, WorkerError, engine};
use crate::runtime::distributions::{sequence_logprobs, token_stats};
use crate::runtime::protocol::{Reply, TokenStatsRequest};
use crate::text::tokenizer::TokenizerError;

/// The `k` most likely next tokens after `context`.
pub(super) async fn next_tokens(
    state: &Shared,
    context: &str,
    k: usize,
) -> Result<Reply, WorkerError> {
    let engine = engine(state)?;
    Ok(Reply::NextTokens(engine.next_tokens(context, k).await?))
}

/// The log-probability of each of `tokens` in turn after `context`.
pub(super) async fn sequence_log_probs(
    state: &Shared,
    context: &str,
    tokens: &[u32],
) -> Result<Reply, WorkerError> {
    let engine = engine(state)?;
    let ids = engine.tokenizer.encode_context(context)?;
    let logprobs = sequence_logprobs(&engine.model, &ids, tokens).await?;
    Ok(Reply::LogProbs(
        logprobs.into_iter().map(f64::from).collect(),
    ))
}

/// `text` as token ids with each token's bytes.
pub(super) fn tokenize(state: &Shared, text: &str) -> Result<Reply, WorkerError> {
    let engine = engine(state)?;
    let ids = engine.tokenizer.encode(text)?;
    let tokens = ids
        .into_iter()
        .map(|id| Ok((id, engine.tokenizer.token_bytes(id)?.to_vec())))
        .collect::<Result<_, TokenizerError>>()?;
    Ok(Reply::Tokens(tokens))
}

/// The token games' view of one position: the model's top tokens and the given tokens' ranks.
pub(super) async fn stats(
    state: &Shared,
    request: &TokenStatsRequest,
) -> Result<Reply, WorkerError> {
    let engine = engine(state)?;
    let stats = token_stats(
        &engine.model,
        &engine.tokenizer,
        &request.context_ids,
        &request.tokens,
        request.top,
        request.sample_seed,
    )
    .await?;
    Ok(Reply::TokenStats(stats))
}
