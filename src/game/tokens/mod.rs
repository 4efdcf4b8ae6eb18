//! The next-token games (Redwood Research): a passage revealed token by token in GPT-2's
//! tokenisation. [`top1`]: the player types the token they think most likely next.
//! [`two_token`]: the player says which of two tokens (the true one and one GPT-2 sampled) is the
//! original, with one of 11 probability buttons; from those answers `analysis::perplexity`
//! estimates human perplexity.
//!
//! This module holds what both games share: the tokenised passage, which positions are played,
//! and how tokens are shown (whitespace made visible).

pub mod records;
pub mod schedule;
pub mod top1;
pub mod two_token;

use crate::rng::{SplitMix64, stable_hash};
use crate::text::tokenizer::{BpeTokenizer, TokenizerError};

/// A passage in GPT-2's tokens.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenPassage {
    pub passage: String,
    pub ids: Vec<u32>,
    /// Raw bytes of each token (a token may hold part of a UTF-8 character).
    pub bytes: Vec<Vec<u8>>,
}

impl TokenPassage {
    pub fn new(
        passage: &str,
        text: &str,
        tokenizer: &BpeTokenizer,
    ) -> Result<Self, TokenizerError> {
        let ids = tokenizer.encode(text)?;
        let bytes = ids
            .iter()
            .map(|&id| tokenizer.token_bytes(id).map(<[u8]>::to_vec))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            passage: passage.to_string(),
            ids,
            bytes,
        })
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The text before token `position` (0-based; position 0 has the empty context).
    pub fn context(&self, position: usize) -> String {
        let bytes: Vec<u8> = self.bytes[..position.min(self.len())].concat();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The token ids before `position`.
    pub fn context_ids(&self, position: usize) -> &[u32] {
        &self.ids[..position.min(self.len())]
    }
}

/// The positions played in a passage of `len` tokens: every position from 1 (the first token
/// has no context to guess from), or `per_passage` of them drawn without replacement with a
/// seed derived from `seed` and the passage id, in reading order.
///
/// ```
/// use clozelab::game::tokens::positions;
/// assert_eq!(positions(5, None, 0, "p"), vec![1, 2, 3, 4]);
/// let some = positions(100, Some(10), 7, "p");
/// assert_eq!(some.len(), 10);
/// assert!(some.windows(2).all(|w| w[0] < w[1]));
/// assert_eq!(some, positions(100, Some(10), 7, "p"));
/// ```
pub fn positions(len: usize, per_passage: Option<usize>, seed: u64, passage: &str) -> Vec<u32> {
    let all: Vec<u32> = (1..len as u32).collect();
    let Some(k) = per_passage else {
        return all;
    };
    if k >= all.len() {
        return all;
    }
    let mut rng = SplitMix64::new(seed ^ stable_hash(passage));
    let mut pool = all;
    rng.choose_to_front(&mut pool, k);
    let mut chosen = pool[..k].to_vec();
    chosen.sort_unstable();
    chosen
}

/// A token for display: space `·`, newline `↵`, tab `⇥`, other controls as `\u{..}`, bytes
/// that are part of a character as `⟨e2⟩`; an empty token as `∅`.
///
/// ```
/// assert_eq!(clozelab::game::tokens::show_token(b" the\n"), "·the↵");
/// ```
pub fn show_token(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "∅".into();
    }
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                ' ' => out.push('·'),
                '\n' => out.push('↵'),
                '\t' => out.push('⇥'),
                '\r' => out.push('␍'),
                c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("⟨{b:02x}⟩"));
        }
    }
    out
}

/// Whether typed text is one GPT-2 token as typed, and with a leading space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SingleToken {
    pub as_typed: Option<u32>,
    pub with_space: Option<u32>,
}

/// Checks `text` (what the player typed) against the vocabulary.
pub fn single_token(tokenizer: &BpeTokenizer, text: &str) -> SingleToken {
    let one = |t: &str| match tokenizer.encode(t) {
        Ok(ids) if ids.len() == 1 && !t.is_empty() => Some(ids[0]),
        _ => None,
    };
    SingleToken {
        as_typed: one(text),
        with_space: if text.starts_with(' ') {
            None
        } else {
            one(&format!(" {text}"))
        },
    }
}
