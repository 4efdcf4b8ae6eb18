//! Exact word probabilities: the probability that the model's next word is exactly `w`.
//!
//! P(w | c) = Σ over token sequences t₁…tₖ spelling " w" (every segmentation, not only the
//! tokenizer's canonical one: Cao & Rimell 2021) of Π P(tᵢ | c, t<ᵢ) × P(word ends | c, t₁…tₖ).
//! The word ends when the next token starts with whitespace or another character that cannot
//! continue a word, or is `<|endoftext|>` — the same rule as the Monte Carlo sampler
//! ([`crate::text::words::continuation_status`]). Tokens after which that is still open (a lone `.`,
//! `'` or `-`, part of a multi-byte character) are followed one more token, up to
//! [`MAX_LOOKAHEAD`] tokens.
//!
//! Segmentations share prefixes: the prefix tree of token sequences spelling a prefix of " w"
//! is expanded level by level, all candidate words of a context in one batch per level, every
//! row attending to the context's shared KV cache. The cap: a partial segmentation whose
//! probability is below [`PRUNE_RELATIVE`] times the best known for its word, or beyond the
//! [`MAX_NODES_PER_LEVEL`] most probable of its level, is not expanded; its probability bounds
//! what it could have added and is reported as `pruned_mass` (open lookaheads likewise as
//! `unresolved_mass`), so the true value lies in [prob, prob + pruned_mass + unresolved_mass].

use std::collections::HashMap;

use burn::tensor::Tensor;
use burn::tensor::activation::log_softmax;

use crate::estimators::progress::{Monitor, Progress, checkpoint};
use crate::estimators::tree::{extend_branches, run_prefix};
use crate::model::readback::read_f32;
use crate::model::{KvCache, ModelError, Transformer};
use crate::text::tokenizer::{BpeTokenizer, ContextStart, TokenizerError};
use crate::text::words::{first_word, first_word_is_complete, split_incomplete_utf8_tail};

/// Partial segmentations below this fraction of their word's best known probability are pruned.
pub const PRUNE_RELATIVE: f64 = 1e-6;
/// At most this many partial segmentations of one word are expanded per level.
pub const MAX_NODES_PER_LEVEL: usize = 64;
/// Open continuations after a word (`.`, `'`, partial characters) are followed this many tokens.
pub const MAX_LOOKAHEAD: usize = 3;
/// An open continuation is followed only when its next-token probability is at least this;
/// below it, it counts as unresolved.
pub const LOOKAHEAD_MIN_PROB: f64 = 1e-3;
/// Rows per LM-head call (as in the sampler: bounds `[rows, vocab]` buffers).
const HEAD_ROWS: usize = 128;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum WordProbError {
    #[error("{0:?} is not a single word")]
    NotAWord(String),
    #[error("temperature must be a positive finite number, got {0}")]
    Temperature(f64),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error("cancelled")]
    Cancelled,
}

/// The exact probability of one word, as written.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WordProb {
    pub word: String,
    /// P(next word is exactly `word`).
    pub prob: f64,
    /// ln `prob`; `None` when it underflows to 0.
    pub logprob: Option<f64>,
    /// The same without the end-of-word factor: P(the continuation starts with " word").
    pub prob_no_end: f64,
    /// Segmentations summed.
    pub segmentations: usize,
    /// Upper bound on what the pruned partial segmentations could add.
    pub pruned_mass: f64,
    /// Probability of continuations still open after the lookahead (counted as not ending).
    pub unresolved_mass: f64,
}

/// What a token does to a word that has just been spelled out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EndClass {
    /// The word is over: this token starts something else.
    Ends,
    /// The token makes the word longer (it is another word).
    Continues,
    /// Undecided yet: the next tokens say (e.g. "don" + "'").
    Open,
}

/// Vocabulary lookups for spelling words, built once per tokenizer.
pub struct WordScorer {
    token_bytes: Vec<Vec<u8>>,
    by_bytes: HashMap<Vec<u8>, u32>,
    longest_token: usize,
    /// The vocabulary's `<|endoftext|>`, which ends a word wherever it comes.
    end_of_text: u32,
    /// End classes of every token after a word followed by a given open tail.
    classes: HashMap<(bool, Vec<u8>), Vec<EndClass>>,
}

/// One node of the segmentation tree.
#[derive(Clone, Debug)]
struct Node {
    word: usize,
    /// Bytes of " w" spelled so far, or `None` after the whole word (then `tail` is open).
    spelled: Option<usize>,
    tail: Vec<u8>,
    lookahead: usize,
    logp: f64,
    /// Row of the previous level this node continues, and its token.
    parent_row: usize,
    token: u32,
}

impl WordScorer {
    pub fn new(tokenizer: &BpeTokenizer) -> Self {
        let end_of_text = tokenizer.end_of_text_id();
        let token_bytes: Vec<Vec<u8>> = (0..tokenizer.vocab_size() as u32)
            .map(|id| {
                if id == end_of_text {
                    Vec::new()
                } else {
                    tokenizer
                        .token_bytes(id)
                        .map(<[u8]>::to_vec)
                        .unwrap_or_default()
                }
            })
            .collect();
        let by_bytes: HashMap<Vec<u8>, u32> = token_bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.is_empty())
            .map(|(id, b)| (b.clone(), id as u32))
            .collect();
        let longest_token = token_bytes.iter().map(Vec::len).max().unwrap_or(1);
        Self {
            token_bytes,
            by_bytes,
            longest_token,
            end_of_text,
            classes: HashMap::new(),
        }
    }

    /// How each token acts after a word and `tail`: "x" (or "0" for a word that ends in a digit)
    /// stands for the word: only whether its last character is a letter or a digit matters to
    /// the word rules (a comma after a digit may separate thousands).
    /// Returned with the token bytes, so callers can read both without copying either.
    fn end_classes(&mut self, ends_in_digit: bool, tail: &[u8]) -> (&[EndClass], &[Vec<u8>]) {
        let token_bytes = &self.token_bytes;
        let end_of_text = self.end_of_text;
        let stand_in = if ends_in_digit { "0" } else { "x" };
        let key = (ends_in_digit, tail.to_vec());
        let classes = self.classes.entry(key).or_insert_with(|| {
            let mut text = format!(" {stand_in}").into_bytes();
            text.extend_from_slice(tail);
            let base = text.len();
            (0..token_bytes.len())
                .map(|id| {
                    if id as u32 == end_of_text {
                        return EndClass::Ends;
                    }
                    text.truncate(base);
                    text.extend_from_slice(&token_bytes[id]);
                    let (head, _) = split_incomplete_utf8_tail(&text);
                    let decoded = String::from_utf8_lossy(head);
                    match first_word(&decoded) {
                        Some(w) if w == stand_in && first_word_is_complete(&decoded) => {
                            EndClass::Ends
                        }
                        Some(w) if w == stand_in => EndClass::Open,
                        _ => EndClass::Continues,
                    }
                })
                .collect()
        });
        (classes, token_bytes)
    }

    /// What `token` does after `word` followed by `tail` (tokens already read while the word was
    /// undecided); the word rules only look at the word's last character.
    pub fn end_class(&mut self, word: &str, tail: &str, token: u32) -> Option<EndClass> {
        let ends_in_digit = word.ends_with(|c: char| c.is_ascii_digit());
        let (classes, _) = self.end_classes(ends_in_digit, tail.as_bytes());
        classes.get(token as usize).copied()
    }

    /// Token ids whose bytes are `target[pos..pos + k]` for some k ≥ 1.
    fn tokens_at(&self, target: &[u8], pos: usize) -> Vec<(u32, usize)> {
        (1..=self.longest_token.min(target.len() - pos))
            .filter_map(|k| {
                self.by_bytes
                    .get(&target[pos..pos + k])
                    .map(|&id| (id, pos + k))
            })
            .collect()
    }

    /// Exact probabilities of `words` after `context` at `temperature` (1 = the model itself),
    /// all words scored together in batched forward passes that share the context's cache.
    pub async fn score(
        &mut self,
        model: &Transformer,
        tokenizer: &BpeTokenizer,
        context: &str,
        words: &[String],
        temperature: f64,
        monitor: &mut dyn Monitor,
    ) -> Result<Vec<WordProb>, WordProbError> {
        self.score_from(
            model,
            tokenizer,
            (context, ContextStart::Bare),
            words,
            temperature,
            monitor,
        )
        .await
    }

    /// [`Self::score`] with the context read from a given start.
    pub async fn score_from(
        &mut self,
        model: &Transformer,
        tokenizer: &BpeTokenizer,
        (context, start): (&str, ContextStart),
        words: &[String],
        temperature: f64,
        monitor: &mut dyn Monitor,
    ) -> Result<Vec<WordProb>, WordProbError> {
        if !(temperature.is_finite() && temperature > 0.0) {
            return Err(WordProbError::Temperature(temperature));
        }
        for w in words {
            if first_word(w) != Some(w.as_str()) {
                return Err(WordProbError::NotAWord(w.clone()));
            }
        }
        let space = if context.is_empty() { "" } else { " " };
        let targets: Vec<Vec<u8>> = words
            .iter()
            .map(|w| format!("{space}{w}").into_bytes())
            .collect();
        let mut out: Vec<WordProb> = words
            .iter()
            .map(|w| WordProb {
                word: w.clone(),
                prob: 0.0,
                logprob: None,
                prob_no_end: 0.0,
                segmentations: 0,
                pruned_mass: 0.0,
                unresolved_mass: 0.0,
            })
            .collect();
        if words.is_empty() {
            return Ok(out);
        }
        let ids = tokenizer.encode_context_from(context, start)?;
        let longest = targets.iter().map(Vec::len).max().unwrap_or(0) + MAX_LOOKAHEAD;
        let (prefix, mut hidden) = run_prefix(model, &ids, longest)?;

        // Level 0: every word's root sits on the context's last position (row 0).
        let mut nodes: Vec<Node> = (0..words.len())
            .map(|word| Node {
                word,
                spelled: Some(0),
                tail: Vec::new(),
                lookahead: 0,
                logp: 0.0,
                parent_row: 0,
                token: 0,
            })
            .collect();
        let mut cache: Option<KvCache> = None;
        let mut progress = Progress {
            contexts_done: 0,
            contexts_total: 1,
            samples_done: 0,
            elapsed_s: 0.0,
        };
        loop {
            // At the root every word reads the context's one row.
            let at_root = cache.is_none();
            let rows = read_logprob_rows(
                model,
                hidden,
                if at_root { 1 } else { nodes.len() },
                temperature,
            )
            .await?;
            let vocab = model.vocab_size;
            let mut children = Vec::new();
            for (index, node) in nodes.iter().enumerate() {
                let row = if at_root { 0 } else { index };
                let lp = &rows[row * vocab..(row + 1) * vocab];
                self.expand(
                    node,
                    row,
                    lp,
                    &targets[node.word],
                    &mut out[node.word],
                    &mut children,
                );
            }
            let children = prune(children, &mut out);
            progress.elapsed_s = monitor.now_s();
            if !checkpoint(monitor, &progress).await {
                return Err(WordProbError::Cancelled);
            }
            if children.is_empty() {
                break;
            }
            let parents: Vec<usize> = children.iter().map(|c| c.parent_row).collect();
            let tokens: Vec<u32> = children.iter().map(|c| c.token).collect();
            let (step_cache, step_hidden) = extend_branches(
                model,
                &prefix,
                cache.as_ref(),
                &parents,
                &tokens,
                children.len(),
                longest,
            )?;
            hidden = step_hidden;
            cache = Some(step_cache);
            nodes = children;
        }
        for w in &mut out {
            w.logprob = (w.prob > 0.0).then(|| w.prob.ln());
        }
        progress.contexts_done = 1;
        progress.elapsed_s = monitor.now_s();
        monitor.report(&progress);
        Ok(out)
    }

    /// Adds what `node` contributes given its next-token log-probabilities `lp`, and pushes the
    /// children to expand.
    fn expand(
        &mut self,
        node: &Node,
        row: usize,
        lp: &[f32],
        target: &[u8],
        out: &mut WordProb,
        children: &mut Vec<Node>,
    ) {
        let p_node = node.logp.exp();
        match node.spelled {
            Some(pos) if pos < target.len() => {
                for (token, next) in self.tokens_at(target, pos) {
                    children.push(Node {
                        spelled: Some(next),
                        logp: node.logp + lp[token as usize] as f64,
                        parent_row: row,
                        token,
                        tail: Vec::new(),
                        ..*node
                    });
                }
            }
            _ => {
                if node.spelled.is_some() {
                    out.segmentations += 1;
                    out.prob_no_end += p_node;
                }
                let ends_in_digit = target.last().is_some_and(u8::is_ascii_digit);
                let (classes, token_bytes) = self.end_classes(ends_in_digit, &node.tail);
                let mut ends = 0.0;
                for (token, class) in classes.iter().enumerate() {
                    let p = (lp[token] as f64).exp();
                    match class {
                        EndClass::Ends => ends += p,
                        EndClass::Continues => {}
                        EndClass::Open
                            if node.lookahead < MAX_LOOKAHEAD && p >= LOOKAHEAD_MIN_PROB =>
                        {
                            let mut tail = node.tail.clone();
                            tail.extend_from_slice(&token_bytes[token]);
                            children.push(Node {
                                spelled: None,
                                tail,
                                lookahead: node.lookahead + 1,
                                logp: node.logp + lp[token] as f64,
                                parent_row: row,
                                token: token as u32,
                                ..*node
                            });
                        }
                        EndClass::Open => out.unresolved_mass += p_node * p,
                    }
                }
                out.prob += p_node * ends;
            }
        }
    }
}

/// Keeps each word's children that are worth expanding; adds the rest to its `pruned_mass`.
fn prune(mut children: Vec<Node>, out: &mut [WordProb]) -> Vec<Node> {
    let mut best: HashMap<usize, f64> = HashMap::new();
    for c in &children {
        let b = best.entry(c.word).or_insert(f64::NEG_INFINITY);
        *b = b.max(c.logp);
    }
    // Most probable first, so the per-level cap keeps the best.
    children.sort_by(|a, b| a.word.cmp(&b.word).then(b.logp.total_cmp(&a.logp)));
    let mut kept_per_word: HashMap<usize, usize> = HashMap::new();
    let mut kept = Vec::with_capacity(children.len());
    for c in children {
        let reference = best[&c.word].exp().max(out[c.word].prob_no_end);
        let p = c.logp.exp();
        let n = kept_per_word.entry(c.word).or_default();
        // Lookahead nodes are part of an already spelled word: only the size cap applies.
        let too_small = c.spelled.is_some() && p < PRUNE_RELATIVE * reference;
        if too_small || *n >= MAX_NODES_PER_LEVEL {
            if c.spelled.is_some() {
                out[c.word].pruned_mass += p;
            } else {
                out[c.word].unresolved_mass += p;
            }
        } else {
            *n += 1;
            kept.push(c);
        }
    }
    kept
}

/// Reads `rows` rows of next-token log-probabilities at `temperature`, row-major.
///
/// # Shapes
/// - hidden `[≥ rows, 1, n_embd]` → `rows × vocab` values
async fn read_logprob_rows(
    model: &Transformer,
    hidden: Tensor<3>,
    rows: usize,
    temperature: f64,
) -> Result<Vec<f32>, ModelError> {
    let n_embd = hidden.dims()[2];
    let mut out = Vec::with_capacity(rows * model.vocab_size);
    for start in (0..rows).step_by(HEAD_ROWS) {
        let n = HEAD_ROWS.min(rows - start);
        let logits = model
            .logits(hidden.clone().slice([start..start + n, 0..1, 0..n_embd]))?
            .reshape([n, model.vocab_size]);
        out.extend(read_f32(log_softmax(logits / temperature, 1)).await?);
    }
    Ok(out)
}
