//! Next-token distributions from a loaded model: the shared, async entry point the CLI and the
//! browser both call (all reads from the device are async, as WebGPU requires).

use burn::tensor::activation::log_softmax;
use burn::tensor::{Int, Tensor, TensorData};

use crate::analysis::perplexity::{BiasPoint, BiasSetup, PerplexityError, simulate};
pub use crate::model::readback::{read_f32, read_i64};
use crate::model::{ModelError, Transformer};
use crate::text::tokenizer::{BpeTokenizer, TokenizerError};

/// One candidate next token.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TokenLogProb {
    pub id: u32,
    /// The token's text (lossy where it is part of a character).
    pub text: String,
    /// Natural-log probability.
    pub logprob: f64,
    /// Display form: visible whitespace, partial UTF-8 bytes as `⟨xx⟩`.
    pub label: String,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InferenceError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error(transparent)]
    Perplexity(#[from] PerplexityError),
}

/// The estimator-bias simulation over `passages` (token ids each): one forward pass per position
/// for the first `setup.positions` positions, then [`simulate`]. `before_each` runs before each
/// forward pass (the worker yields there so a cancel can arrive; `false` stops).
pub async fn simulate_bias<F, Fut>(
    model: &Transformer,
    passages: &[Vec<u32>],
    setup: &BiasSetup,
    mut before_each: F,
) -> Result<Option<(usize, Vec<BiasPoint>)>, InferenceError>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    setup.validate()?;
    let mut contexts = Vec::new();
    'passages: for ids in passages {
        for position in 1..ids.len() {
            if contexts.len() == setup.positions {
                break 'passages;
            }
            if !before_each(contexts.len()).await {
                return Ok(None);
            }
            let logprobs = next_token_logprobs(model, &ids[..position]).await?;
            contexts.push(setup.context(&logprobs, ids[position]));
        }
    }
    let points = simulate(
        &contexts,
        &setup.rounds_per_pair,
        setup.repetitions,
        setup.seed,
    )?;
    Ok(Some((contexts.len(), points)))
}

/// Log-probabilities of every vocabulary entry after `ids` (full forward, last position).
pub async fn next_token_logprobs(model: &Transformer, ids: &[u32]) -> Result<Vec<f32>, ModelError> {
    let tokens = model.token_tensor(&[ids.to_vec()])?;
    let [batch, seq] = tokens.dims();
    let mut cache = model.new_cache(None, batch, seq);
    let hidden = model.forward_cached(tokens, &mut cache)?;
    read_f32(log_softmax(model.last_logits(hidden)?, 1)).await
}

/// Rows of the LM head per call (bounds the `[rows, vocab]` buffers, as in the estimators).
const HEAD_ROWS: usize = 128;

/// ln P(`tokens[i]` | context, `tokens[..i]`) for every i, from one forward pass over the context
/// and the tokens (the next-token games score a whole passage this way).
///
/// # Shapes
/// - `context_ids` (non-empty: an empty context is `[<|endoftext|>]`) + `tokens` ≤ `n_positions`
pub async fn sequence_logprobs(
    model: &Transformer,
    context_ids: &[u32],
    tokens: &[u32],
) -> Result<Vec<f32>, ModelError> {
    if context_ids.is_empty() {
        return Err(ModelError::EmptyInput);
    }
    if tokens.is_empty() {
        return Ok(Vec::new());
    }
    // The last token is only predicted, never fed.
    let ids: Vec<u32> = context_ids
        .iter()
        .chain(&tokens[..tokens.len() - 1])
        .copied()
        .collect();
    let hidden = model.forward_cached(
        model.token_tensor(std::slice::from_ref(&ids))?,
        &mut model.new_cache(None, 1, ids.len()),
    )?;
    let n_embd = hidden.dims()[2];
    let first = context_ids.len() - 1;
    let vocab = model.vocab_size;
    let mut out = Vec::with_capacity(tokens.len());
    for start in (0..tokens.len()).step_by(HEAD_ROWS) {
        let end = (start + HEAD_ROWS).min(tokens.len());
        let rows = hidden
            .clone()
            .slice([0..1, first + start..first + end, 0..n_embd]);
        let logprobs = log_softmax(model.logits(rows)?.reshape([end - start, vocab]), 1);
        let host = read_f32(logprobs).await?;
        for (row, &token) in tokens[start..end].iter().enumerate() {
            let index = token as usize;
            if index >= vocab {
                return Err(ModelError::TokenOutOfRange {
                    id: token,
                    vocab_size: vocab,
                });
            }
            out.push(host[row * vocab + index]);
        }
    }
    Ok(out)
}

/// The `k` largest entries of `logprobs` as (id, logprob), best first; ties by lower id.
pub fn top_k(logprobs: &[f32], k: usize) -> Vec<(u32, f32)> {
    let mut order: Vec<u32> = (0..logprobs.len() as u32).collect();
    let key = |id: &u32| logprobs[*id as usize];
    let k = k.min(order.len());
    if k == 0 {
        return Vec::new();
    }
    order.select_nth_unstable_by(k - 1, |a, b| key(b).total_cmp(&key(a)).then(a.cmp(b)));
    order.truncate(k);
    order.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.cmp(b)));
    order
        .into_iter()
        .map(|id| (id, logprobs[id as usize]))
        .collect()
}

/// The `k` most likely next tokens after `context` (encoded as it is; an empty context is
/// `<|endoftext|>` alone).
pub async fn next_tokens(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    context: &str,
    k: usize,
) -> Result<Vec<TokenLogProb>, InferenceError> {
    let ids = tokenizer.encode_context(context)?;
    let logprobs = next_token_logprobs(model, &ids).await?;
    Ok(top_k(&logprobs, k)
        .into_iter()
        .map(|(id, lp)| token_entry(tokenizer, id, f64::from(lp)))
        .collect())
}

/// What the next-token games need at one position.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TokenStats {
    /// ln g(t|context) for each asked token, in order.
    pub logprobs: Vec<f64>,
    /// 1-based rank of each asked token (1 = the arg-max).
    pub ranks: Vec<u32>,
    /// The most likely tokens, best first.
    pub top: Vec<TokenLogProb>,
    /// One token drawn from g(·|context), when a seed was given.
    pub sampled: Option<SampledToken>,
}

/// A token drawn from the model.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SampledToken {
    pub id: u32,
    pub logprob: f64,
    /// Raw bytes (may be part of a UTF-8 character).
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
}

fn token_entry(tokenizer: &BpeTokenizer, id: u32, logprob: f64) -> TokenLogProb {
    TokenLogProb {
        id,
        text: tokenizer.token_text(id),
        logprob,
        label: crate::text::tokenizer::token_label(tokenizer.token_bytes(id).unwrap_or_default()),
    }
}

/// Draws a token from log-probabilities (inverse CDF in f64 on the host copy of the exact
/// distribution, which the games read back anyway for ranks and the top tokens).
pub fn sample_token(logprobs: &[f32], rng: &mut crate::rng::SplitMix64) -> u32 {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let total: f64 = logprobs.iter().map(|l| f64::from(*l).exp()).sum();
    let mut acc = 0.0;
    for (id, l) in logprobs.iter().enumerate() {
        acc += f64::from(*l).exp() / total;
        if u < acc {
            return id as u32;
        }
    }
    logprobs.len().saturating_sub(1) as u32
}

/// [`TokenStats`] after `context_ids` (the passage's own tokens, not re-encoded text: BPE of
/// a cut text can differ from the passage's tokens at the cut).
pub async fn token_stats(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    context_ids: &[u32],
    tokens: &[u32],
    top: usize,
    sample_seed: Option<u64>,
) -> Result<TokenStats, InferenceError> {
    let ids: Vec<u32> = if context_ids.is_empty() {
        vec![tokenizer.end_of_text_id()]
    } else {
        context_ids.to_vec()
    };
    let logprobs = next_token_logprobs(model, &ids).await?;
    let mut asked = Vec::with_capacity(tokens.len());
    let mut ranks = Vec::with_capacity(tokens.len());
    for &t in tokens {
        let lp = *logprobs
            .get(t as usize)
            .ok_or(ModelError::TokenOutOfRange {
                id: t,
                vocab_size: logprobs.len(),
            })?;
        asked.push(f64::from(lp));
        ranks.push(1 + logprobs.iter().filter(|&&x| x > lp).count() as u32);
    }
    let sampled = match sample_seed {
        Some(seed) => {
            let id = sample_token(&logprobs, &mut crate::rng::SplitMix64::new(seed));
            Some(SampledToken {
                id,
                logprob: f64::from(logprobs[id as usize]),
                bytes: tokenizer.token_bytes(id)?.to_vec(),
            })
        }
        None => None,
    };
    Ok(TokenStats {
        logprobs: asked,
        ranks,
        top: top_k(&logprobs, top)
            .into_iter()
            .map(|(id, lp)| token_entry(tokenizer, id, f64::from(lp)))
            .collect(),
        sampled,
    })
}

/// Appendix D over `norms`: the model's next-token distribution after each context, compared
/// with the humans' first tokens (see [`crate::analysis::token_level`]). `before_each(i)` runs
/// before context i (the caller's progress and cancel point; `false` stops and returns what is
/// done).
///
/// A passage's contexts are prefixes of one another, so one forward pass over its longest
/// context gives every shorter one's distribution at that context's last position (attention
/// is causal: no position sees what follows it). A context whose tokens are not such a prefix
/// (the empty first one, which is `<|endoftext|>`) gets a pass of its own.
pub async fn token_level_contexts<F: FnMut(usize) -> bool>(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    norms: &[crate::data::provo::ProvoContext],
    mut before_each: F,
) -> Result<Vec<crate::analysis::token_level::TokenContext>, InferenceError> {
    use crate::analysis::token_level::{TokenContext, human_first_tokens, original_first_token};
    let vocab = model.vocab_size;
    let mut out = Vec::with_capacity(norms.len());
    let mut first_index = 0;
    for passage in norms.chunk_by(|a, b| a.text_id == b.text_id) {
        let mut scored = Vec::with_capacity(passage.len());
        for (offset, c) in passage.iter().enumerate() {
            if let Some(humans) = human_first_tokens(tokenizer, &c.human)? {
                scored.push((offset, humans, tokenizer.encode_context(&c.context)?));
            }
        }
        let shared = PrefixRows::new(model, scored.iter().map(|(o, _, ids)| (*o, &ids[..])))?;
        let mut rows = shared.rows.iter().enumerate().peekable();
        let mut scored = scored.iter().peekable();
        // Log-probabilities of rows `chunk_start..` of `shared`, flattened `[rows, vocab]`.
        let mut chunk: Vec<f32> = Vec::new();
        let mut chunk_start = 0;
        for (offset, c) in passage.iter().enumerate() {
            if !before_each(first_index + offset) {
                return Ok(out);
            }
            let Some((_, humans, ids)) = scored.next_if(|(o, _, _)| *o == offset) else {
                continue;
            };
            let original = original_first_token(tokenizer, &c.original)?;
            let own;
            let logprobs = if let Some((index, _)) = rows.next_if(|(_, r)| r.context == offset) {
                if chunk.is_empty() || index >= chunk_start + chunk.len() / vocab {
                    chunk_start = index;
                    chunk = shared.logprobs(model, chunk_start).await?;
                }
                let at = (index - chunk_start) * vocab;
                &chunk[at..at + vocab]
            } else {
                own = next_token_logprobs(model, ids).await?;
                &own[..]
            };
            out.extend(TokenContext::new(c.key(), logprobs, humans, original));
        }
        first_index += passage.len();
    }
    Ok(out)
}

/// The contexts of one passage whose tokens are a prefix of its longest context's, with the
/// final hidden states of one forward pass over that longest context.
struct PrefixRows {
    /// One per such context, in the passage's order.
    rows: Vec<PrefixRow>,
    /// `[positions, n_embd]`; `None` when no context is a prefix.
    hidden: Option<Tensor<2>>,
}

struct PrefixRow {
    /// The context's offset in its passage.
    context: usize,
    /// The position whose output predicts the token after the context: its last.
    position: usize,
}

impl PrefixRows {
    /// `contexts`: (offset in the passage, token ids) of the contexts to score.
    fn new<'a>(
        model: &Transformer,
        contexts: impl Iterator<Item = (usize, &'a [u32])> + Clone,
    ) -> Result<Self, ModelError> {
        let longest = contexts
            .clone()
            .map(|(_, ids)| ids)
            .max_by_key(|ids| ids.len())
            .unwrap_or_default();
        let rows: Vec<PrefixRow> = if longest.len() > model.n_positions {
            Vec::new()
        } else {
            contexts
                .filter(|(_, ids)| !ids.is_empty() && longest.starts_with(ids))
                .map(|(context, ids)| PrefixRow {
                    context,
                    position: ids.len() - 1,
                })
                .collect()
        };
        if rows.is_empty() {
            return Ok(Self { rows, hidden: None });
        }
        let hidden = model.forward_cached(
            model.token_tensor(&[longest.to_vec()])?,
            &mut model.new_cache(None, 1, longest.len()),
        )?;
        let [_, positions, n_embd] = hidden.dims();
        Ok(Self {
            rows,
            hidden: Some(hidden.reshape([positions, n_embd])),
        })
    }

    /// Log-probabilities over the vocabulary for up to [`HEAD_ROWS`] rows from row `first`.
    ///
    /// # Shapes
    /// - returns `[rows, vocab]`, flattened
    async fn logprobs(&self, model: &Transformer, first: usize) -> Result<Vec<f32>, ModelError> {
        let Some(hidden) = &self.hidden else {
            return Ok(Vec::new());
        };
        let rows = &self.rows[first..(first + HEAD_ROWS).min(self.rows.len())];
        let positions: Vec<i64> = rows.iter().map(|r| r.position as i64).collect();
        let index =
            Tensor::<1, Int>::from_data(TensorData::new(positions, [rows.len()]), &hidden.device());
        let n_embd = hidden.dims()[1];
        let selected = hidden
            .clone()
            .select(0, index)
            .reshape([1, rows.len(), n_embd]);
        let logits = model
            .logits(selected)?
            .reshape([rows.len(), model.vocab_size]);
        read_f32(log_softmax(logits, 1)).await
    }
}
