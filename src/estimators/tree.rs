//! The token-tree walk shared by the Monte Carlo sampler and the exact word scorer: the
//! context runs once into a KV cache that every branch shares ([`run_prefix`]; several contexts
//! in one forward pass and one joined prefix with [`run_prefixes`]); each level of the tree
//! extends the surviving branches by one token each, in one batch whose rows pick their
//! parent's cache rows ([`extend_branches`]); batches are padded to a few fixed sizes
//! ([`bucket`]) so that device kernels compiled for one size are reused.

use burn::tensor::{Int, Tensor, TensorData};

use crate::model::{KvCache, ModelError, SharedPrefix, Transformer};

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
    model: &Transformer,
    ids: &[u32],
    budget: usize,
) -> Result<(SharedPrefix, Tensor<3>), ModelError> {
    run_prefixes(model, &[ids.to_vec()], budget)
}

/// Runs several contexts in one forward pass (right-padded to the longest; causal masking keeps
/// the padding out of every real position) and joins their caches into one prefix whose segment
/// i is context i. Returns it and each context's last hidden state `[contexts, 1, n_embd]`:
/// row i of the tree's first level continues segment i.
pub fn run_prefixes(
    model: &Transformer,
    contexts: &[Vec<u32>],
    budget: usize,
) -> Result<(SharedPrefix, Tensor<3>), ModelError> {
    let lengths: Vec<usize> = contexts.iter().map(Vec::len).collect();
    let longest = lengths.iter().copied().max().unwrap_or(0);
    if lengths.contains(&0) {
        return Err(ModelError::EmptyInput);
    }
    if longest + budget > model.n_positions {
        return Err(ModelError::ContextTooLong {
            needed: longest + budget,
            max: model.n_positions,
        });
    }
    let padded: Vec<Vec<u32>> = contexts
        .iter()
        .map(|ids| {
            let mut row = ids.clone();
            row.resize(longest, ids[ids.len() - 1]);
            row
        })
        .collect();
    let mut cache = model.new_cache(None, contexts.len(), longest);
    let hidden = model.forward_cached(model.token_tensor(&padded)?, &mut cache)?;
    let n_embd = hidden.dims()[2];
    let last = if contexts.len() == 1 {
        hidden.slice([0..1, longest - 1..longest, 0..n_embd])
    } else {
        let rows: Vec<i64> = lengths
            .iter()
            .enumerate()
            .map(|(i, &len)| (i * longest + len - 1) as i64)
            .collect();
        let index =
            Tensor::<1, Int>::from_data(TensorData::new(rows, [contexts.len()]), &model.device());
        hidden
            .reshape([contexts.len() * longest, n_embd])
            .select(0, index)
            .reshape([contexts.len(), 1, n_embd])
    };
    Ok((cache.into_joined_prefix(&lengths)?, last))
}

/// One level of a token tree: branch i continues row `parents[i]` of `cache` (at the first
/// level, when there is no cache yet, segment `parents[i]` of the shared `prefix`) by `tokens[i]`. The batch is padded to
/// `rows` by repeating branch 0. Returns the new cache and the hidden states `[rows, 1, n_embd]`.
pub fn extend_branches(
    model: &Transformer,
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
        None => model.new_cache_on_segments(prefix.clone(), padded_parents, capacity)?,
        Some(c) => c.select_rows(&padded_parents)?,
    };
    let hidden = model.forward_cached(model.token_tensor(&padded_tokens)?, &mut next)?;
    Ok((next, hidden))
}
