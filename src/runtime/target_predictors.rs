//! A model's surprisal of every context's target word: each passage runs once (canonical
//! surprisal with the beginning-of-word correction over all its words, in overlapping windows
//! where it is longer than the model reads at once, as `clozelab surprisal` reads it), then
//! each target's every-segmentation probability after the words its canonical surprisal read;
//! what `clozelab results --model` and the Analysis page add to the trial table.

use std::collections::BTreeMap;

use crate::analysis::predictors::{PassageWords, TargetPredictors};
use crate::data::provo::ContextKey;
use crate::estimators::progress::{Monitor, Progress, checkpoint};
use crate::estimators::surprisal::{
    SurprisalError, SurprisalOptions, all_segmentations_surprisal, word_surprisals,
};
use crate::estimators::wordprob::WordScorer;
use crate::model::Transformer;
use crate::text::tokenizer::BpeTokenizer;

/// Every context's predictors, and one note per passage that could not be scored (a word
/// longer than the model reads at once) — those contexts are left without predictors rather
/// than failing the rest.
/// Progress counts contexts; `Err(Cancelled)`-like stops come back as the model's errors.
pub async fn target_predictors(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    passages: &[PassageWords],
    monitor: &mut dyn Monitor,
) -> Result<(BTreeMap<ContextKey, TargetPredictors>, Vec<String>), SurprisalError> {
    let mut scorer = WordScorer::new(tokenizer);
    let mut out = BTreeMap::new();
    let mut notes = Vec::new();
    let mut progress = Progress {
        contexts_done: 0,
        contexts_total: passages.iter().map(|p| p.contexts.len()).sum(),
        samples_done: 0,
        elapsed_s: 0.0,
    };
    let start = monitor.now_s();
    for passage in passages {
        let words: Vec<&str> = passage.words.iter().map(String::as_str).collect();
        let canonical = match word_surprisals(
            model,
            tokenizer,
            &words,
            &SurprisalOptions::default(),
            monitor,
        )
        .await
        {
            Ok(rows) => rows,
            Err(e @ (SurprisalError::TooLong { .. } | SurprisalError::Window(_))) => {
                let first = passage.contexts.first().map(|(k, _)| k.to_string());
                notes.push(format!(
                    "no surprisal for the passage of context {}: {e}",
                    first.unwrap_or_default()
                ));
                continue;
            }
            Err(e) => return Err(e),
        };
        for &(key, at) in &passage.contexts {
            // The words the canonical surprisal read before the target (all of them unless the
            // passage was read in windows).
            let read = canonical[at].context_words;
            let all_segmentations = all_segmentations_surprisal(
                &mut scorer,
                model,
                tokenizer,
                &words[at - read..],
                read,
                monitor,
            )
            .await?;
            out.insert(
                key,
                TargetPredictors {
                    surprisal_bits: canonical[at].surprisal_bits,
                    surprisal_all_segmentations_bits: all_segmentations,
                },
            );
            progress.contexts_done += 1;
            progress.elapsed_s = monitor.now_s() - start;
            if !checkpoint(monitor, &progress).await {
                return Err(SurprisalError::Cancelled);
            }
        }
    }
    Ok((out, notes))
}
