//! One model's predictors over a corpus's items: every word's surprisal (canonical with the
//! beginning-of-word correction, and over every segmentation) and, when sampled, its entropy,
//! as `clozelab surprisal` computes them for one text. Each item is seeded from the job's seed
//! and its own id, never from its position in a part or a thread, so that any part of a
//! sharded job computes an item exactly as one process does.

use crate::data::corpus::CorpusItem;
use crate::data::predictor_table::PredictorRow;
use crate::estimators::progress::Monitor;
use crate::estimators::sampler::SamplerError;
use crate::estimators::surprisal::{SurprisalError, SurprisalOptions, text_surprisals};
use crate::model::Transformer;
use crate::rng::stable_hash;
use crate::text::tokenizer::BpeTokenizer;

/// The sampler's seed for `item`'s first word: the job's seed mixed with the item's id.
///
/// ```
/// use clozelab::runtime::corpus_predictors::item_seed;
/// assert_eq!(item_seed(7, "p1"), item_seed(7, "p1"));
/// assert_ne!(item_seed(7, "p1"), item_seed(7, "p2"));
/// assert_ne!(item_seed(7, "p1"), item_seed(8, "p1"));
/// ```
pub fn item_seed(seed: u64, item: &str) -> u64 {
    crate::rng::SplitMix64::new(seed ^ stable_hash(item)).next_u64()
}

/// A model as the table names it.
#[derive(Clone, Debug)]
pub struct NamedModel<'a> {
    pub model: &'a Transformer,
    pub tokenizer: &'a BpeTokenizer,
    pub name: &'a str,
    pub revision: &'a str,
}

/// What every item is scored with.
#[derive(Clone, Copy, Debug)]
pub struct PredictorSettings {
    /// Continuations per word for its entropy; 0 leaves entropy out.
    pub samples: usize,
    pub seed: u64,
    /// Contexts padded to shared lengths (on a GPU).
    pub batch_buckets: bool,
    /// Each word's every-segmentation surprisal too.
    pub all_segmentations: bool,
}

impl PredictorSettings {
    /// The options of `item`'s run: [`SurprisalOptions::every_predictor`] from its seed, without
    /// the every-segmentation pass unless asked.
    pub fn options(&self, item: &str) -> Result<SurprisalOptions, SamplerError> {
        let options = SurprisalOptions::every_predictor(
            self.samples,
            item_seed(self.seed, item),
            self.batch_buckets,
        )?;
        Ok(SurprisalOptions {
            all_segmentations: self.all_segmentations,
            ..options
        })
    }
}

/// Every word's row of one item.
pub async fn item_predictors(
    named: &NamedModel<'_>,
    item: &CorpusItem,
    settings: PredictorSettings,
    monitor: &mut dyn Monitor,
) -> Result<Vec<PredictorRow>, SurprisalError> {
    let options = settings.options(&item.item)?;
    let seed = options.entropy_samples.as_ref().map(|config| config.seed());
    let words =
        text_surprisals(named.model, named.tokenizer, &item.text, &options, monitor).await?;
    Ok(words
        .into_iter()
        .enumerate()
        .map(|(word_index, w)| PredictorRow {
            item: item.item.clone(),
            word_index,
            word: w.word,
            model: named.name.to_string(),
            revision: named.revision.to_string(),
            surprisal_bits: w.surprisal_bits,
            surprisal_all_segmentations_bits: w.surprisal_all_segmentations_bits,
            entropy_bits: w.entropy_bits,
            entropy_standard_error_bits: w.entropy_standard_error_bits,
            token_ids: w.token_ids,
            context_words: w.context_words,
            seed,
        })
        .collect())
}

/// Every word's row of each item, item by item; `on_item` is told each finished item's index.
pub async fn model_predictors(
    named: &NamedModel<'_>,
    items: &[CorpusItem],
    settings: PredictorSettings,
    monitor: &mut dyn Monitor,
    on_item: &mut dyn FnMut(usize),
) -> Result<Vec<Vec<PredictorRow>>, SurprisalError> {
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        out.push(item_predictors(named, item, settings, monitor).await?);
        on_item(index);
    }
    Ok(out)
}

/// [`model_predictors`] with the items spread over the CPU's threads, several at once: one
/// item's operations leave a core idle for much of a pass (its element-wise steps, its small
/// products), and items are independent. Each item is computed exactly as alone — its seed is
/// its own and the CPU backend's products give the same bits on any number of threads — so the
/// rows equal the sequential driver's, in the items' order.
#[cfg(not(target_arch = "wasm32"))]
pub fn model_predictors_on_threads(
    named: &NamedModel<'_>,
    items: &[CorpusItem],
    settings: PredictorSettings,
    on_item: &(dyn Fn(usize) + Sync),
) -> Result<Vec<Vec<PredictorRow>>, SurprisalError> {
    use rayon::prelude::*;
    items
        .par_iter()
        .enumerate()
        .map(|(index, item)| {
            let rows = pollster::block_on(item_predictors(
                named,
                item,
                settings,
                &mut crate::estimators::progress::Unmonitored,
            ))?;
            on_item(index);
            Ok(rows)
        })
        .collect()
}
