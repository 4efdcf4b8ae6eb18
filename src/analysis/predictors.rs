//! A model's predictors of each context's target word (its surprisal, canonical with the
//! beginning-of-word correction and over every segmentation), keyed as the contexts are, and
//! the passages they are computed over: each text runs once, its contexts read off it.

use std::collections::BTreeMap;

use crate::data::provo::{ContextKey, ProvoContext};

/// One target word's surprisal, in bits.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TargetPredictors {
    /// The canonical tokenisation with the beginning-of-word correction (minicons').
    pub surprisal_bits: f64,
    /// −log₂ P(next word is the target), over every segmentation; `None` where the target holds
    /// no word to score.
    pub surprisal_all_segmentations_bits: Option<f64>,
}

/// One model's predictors (its name, then each context's).
pub type ModelPredictors = (String, BTreeMap<ContextKey, TargetPredictors>);

/// A text and the contexts in it, by the index of their target word.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PassageWords {
    pub words: Vec<String>,
    pub contexts: Vec<(ContextKey, usize)>,
}

/// The passages behind `contexts`: per text, the words of its longest context and that
/// context's target, every context whose words are a prefix of them placed by its position. A
/// context that does not fit its text's words (another study's edit of it) gets a passage of
/// its own, so that no context is scored over words it was not shown.
///
/// ```
/// use clozelab::analysis::predictors::passages_of;
/// use clozelab::data::provo::{ContextKey, ProvoContext};
/// let context = |word_num: u32, context: &str, original: &str| ProvoContext {
///     text_id: 1, word_num, context: context.into(), original: original.into(),
///     human: Default::default(), gpt2_logprob_human: None, gpt2_logprob_original: None,
/// };
/// let passages = passages_of(&[context(2, "The", "dog"), context(3, "The dog", "barked.")]);
/// assert_eq!(passages.len(), 1);
/// assert_eq!(passages[0].words, ["The", "dog", "barked."]);
/// assert_eq!(passages[0].contexts, [(ContextKey::new(1, 2), 1), (ContextKey::new(1, 3), 2)]);
/// ```
pub fn passages_of(contexts: &[ProvoContext]) -> Vec<PassageWords> {
    let mut by_text: BTreeMap<u32, Vec<&ProvoContext>> = BTreeMap::new();
    // A context without a target word has nothing to score.
    for c in contexts.iter().filter(|c| !c.original.trim().is_empty()) {
        by_text.entry(c.text_id).or_default().push(c);
    }
    let words_of = |c: &ProvoContext| -> Vec<String> {
        c.context
            .split_whitespace()
            .chain(std::iter::once(c.original.as_str()))
            .map(str::to_string)
            .collect()
    };
    let mut out = Vec::new();
    for (_, mut group) in by_text {
        group.sort_by_key(|c| std::cmp::Reverse(c.word_num));
        let mut passage = PassageWords {
            words: words_of(group[0]),
            contexts: Vec::new(),
        };
        for c in group {
            let own = words_of(c);
            let at = own.len() - 1;
            if passage.words.get(..own.len()) == Some(&own[..]) {
                passage.contexts.push((c.key(), at));
            } else {
                out.push(PassageWords {
                    words: own,
                    contexts: vec![(c.key(), at)],
                });
            }
        }
        passage.contexts.reverse();
        out.push(passage);
    }
    out
}
