//! The token-tree walk shared by the Monte Carlo sampler and the exact word scorer: the
//! context runs once into a KV cache that every branch shares ([`run_prefix`]); each level of
//! the tree extends the surviving branches by one token each, in one batch whose rows pick
//! their parent's cache rows ([`extend_branches`]); batches are padded to a few fixed sizes
//! ([`bucket`]) so that device kernels compiled for one size are reused.

use burn::tensor::Tensor;

use crate::model::{Gpt2, KvCache, ModelError, SharedPrefix};

/// Batch sizes used on the device: powers of two and 1.5× powers of two.
pub fn bucket(n: usize) -> usize {
    let mut size = 1;
    loop {
        if size >= n {
            return size;
        }
        if size >= 2 && size + size / 2 >= n {
            return size + size / 2;
        }
        size *= 2;
    }
}

/// Runs the context once and returns its cache (to share) and the last hidden state `[1, 1, n_embd]`.
pub fn run_prefix(
    model: &Gpt2,
    ids: &[u32],
    budget: usize,
) -> Result<(SharedPrefix, Tensor<3>), ModelError> {
    if ids.len() + budget > model.n_positions {
        return Err(ModelError::ContextTooLong {
            needed: ids.len() + budget,
            max: model.n_positions,
        });
    }
    let mut cache = model.new_cache(None, 1, ids.len());
    let hidden = model.forward_cached(model.token_tensor(&[ids.to_vec()])?, &mut cache)?;
    let [_, seq, n_embd] = hidden.dims();
    let last = hidden.slice([0..1, seq - 1..seq, 0..n_embd]);
    Ok((cache.into_shared_prefix()?, last))
}

/// One level of a token tree: branch i continues row `parents[i]` of `cache` (at the first
/// level, when there is no cache yet, the shared `prefix`) by `tokens[i]`. The batch is padded to
/// `rows` by repeating branch 0. Returns the new cache and the hidden states `[rows, 1, n_embd]`.
pub fn extend_branches(
    model: &Gpt2,
    prefix: &SharedPrefix,
    cache: Option<&KvCache>,
    parents: &[usize],
    tokens: &[u32],
    rows: usize,
    capacity: usize,
) -> Result<(KvCache, Tensor<3>), ModelError> {
    let (Some(&first_parent), Some(&first_token)) = (parents.first(), tokens.first()) else {
        return Err(ModelError::EmptyInput);
    };
    let rows = rows.max(parents.len());
    let mut padded_parents = parents.to_vec();
    padded_parents.resize(rows, first_parent);
    let mut padded_tokens: Vec<Vec<u32>> = tokens.iter().map(|&t| vec![t]).collect();
    padded_tokens.resize(rows, vec![first_token]);
    let mut next = match cache {
        None => model.new_cache(Some(prefix.clone()), rows, capacity),
        Some(c) => c.select_rows(&padded_parents)?,
    };
    let hidden = model.forward_cached(model.token_tensor(&padded_tokens)?, &mut next)?;
    Ok((next, hidden))
}
