//! Where a text longer than a model reads at once is cut: overlapping windows of whole words,
//! each scoring the words after the last window's, with up to half a window of the words
//! before them as context (the strided evaluation of Hugging Face's perplexity guide, by
//! words so that a word's tokens never straddle two windows).

use std::ops::Range;

/// One window: the words it reads, `start..scored.end`, and the ones it scores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The first word the window reads (its context starts here).
    pub start: usize,
    /// The words whose predictors come from this window.
    pub scored: Range<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WindowError {
    #[error("a window must hold at least one token")]
    NoRoom,
    #[error("word {index} is {tokens} tokens, more than a window holds ({capacity})")]
    WordTooLong {
        index: usize,
        tokens: usize,
        capacity: usize,
    },
}

/// Windows over words of `word_tokens[i]` tokens each, every window at most `capacity`
/// tokens: every word scored exactly once, in order, each window's context (the words it reads
/// before its scored ones) at most `capacity / 2` tokens, and as long as that allows. A text
/// that fits is one window. An empty text has no windows.
///
/// ```
/// use clozelab::estimators::windows::{Window, plan_windows};
/// // Fits: one window.
/// assert_eq!(plan_windows(&[1, 2, 1], 8).unwrap(), vec![Window { start: 0, scored: 0..3 }]);
/// // Eight one-token words in windows of four: each later window re-reads two words.
/// let windows = plan_windows(&[1; 8], 4).unwrap();
/// assert_eq!(windows[0], Window { start: 0, scored: 0..4 });
/// assert_eq!(windows[1], Window { start: 2, scored: 4..6 });
/// assert_eq!(windows[2], Window { start: 4, scored: 6..8 });
/// ```
pub fn plan_windows(word_tokens: &[usize], capacity: usize) -> Result<Vec<Window>, WindowError> {
    if capacity == 0 {
        return Err(WindowError::NoRoom);
    }
    if let Some((index, &tokens)) = word_tokens.iter().enumerate().find(|&(_, &t)| t > capacity) {
        return Err(WindowError::WordTooLong {
            index,
            tokens,
            capacity,
        });
    }
    let mut windows = Vec::new();
    let mut next = 0;
    while next < word_tokens.len() {
        // As much context before `next` as half a window holds.
        let mut start = next;
        let mut context = 0;
        while start > 0 && context + word_tokens[start - 1] <= capacity / 2 {
            start -= 1;
            context += word_tokens[start];
        }
        let mut end = next;
        let mut used = context;
        while end < word_tokens.len() && used + word_tokens[end] <= capacity {
            used += word_tokens[end];
            end += 1;
        }
        // Every word fits a window alone (checked above), and the context is at most half a
        // window, so a window scores at least one word unless that word is over half: then it
        // is read without context.
        if end == next {
            start = next;
            end = next + 1;
        }
        windows.push(Window {
            start,
            scored: next..end,
        });
        next = end;
    }
    Ok(windows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_is_scored_once_within_the_capacity() {
        let mut state = 7u64;
        for capacity in [1usize, 2, 3, 5, 8, 13, 40] {
            let tokens: Vec<usize> = (0..60)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    1 + (state >> 60) as usize % capacity.min(4)
                })
                .collect();
            let windows = plan_windows(&tokens, capacity).unwrap();
            let mut next = 0;
            for w in &windows {
                assert_eq!(w.scored.start, next, "{capacity}: {windows:?}");
                assert!(w.scored.end > w.scored.start);
                assert!(w.start <= w.scored.start);
                let read: usize = tokens[w.start..w.scored.end].iter().sum();
                assert!(read <= capacity, "{capacity}: {w:?} reads {read}");
                let context: usize = tokens[w.start..w.scored.start].iter().sum();
                assert!(context <= capacity / 2);
                // The context could not have held one more word.
                if w.start > 0 && w.start < w.scored.start {
                    assert!(context + tokens[w.start - 1] > capacity / 2);
                }
                next = w.scored.end;
            }
            assert_eq!(next, tokens.len());
        }
    }

    #[test]
    fn bad_capacities_and_words_too_long_are_refused() {
        assert_eq!(plan_windows(&[1], 0), Err(WindowError::NoRoom));
        assert_eq!(
            plan_windows(&[1, 9, 1], 4),
            Err(WindowError::WordTooLong {
                index: 1,
                tokens: 9,
                capacity: 4
            })
        );
        assert_eq!(plan_windows(&[], 4), Ok(vec![]));
        // A word over half a window after a full context: read without context.
        assert_eq!(
            plan_windows(&[2, 2, 3], 4).unwrap(),
            vec![
                Window {
                    start: 0,
                    scored: 0..2
                },
                Window {
                    start: 2,
                    scored: 2..3
                }
            ]
        );
    }
}
