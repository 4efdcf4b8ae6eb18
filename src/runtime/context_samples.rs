//! A model's word samples for every context of the norms, as a system beside people's (Table 1
//! and the figures): passage by passage, each passage's contexts joined into passes of
//! [`contexts_to_join`] and each context seeded from the job's seed and its own place
//! (`seed:text_id:word_num`). Nothing depends on the other passages, so a part of a sharded job
//! (whole passages) samples each context exactly as one process does.

use std::collections::BTreeMap;

use crate::data::provo::{ContextKey, FAILED_SAMPLE, ProvoContext, Samples};
use crate::estimators::progress::{Monitor, Progress};
use crate::estimators::sampler::{
    SamplerConfig, SamplerError, WordSamples, contexts_to_join, sample_words_together,
};
use crate::model::Transformer;
use crate::rng::stable_hash;
use crate::text::tokenizer::BpeTokenizer;

/// The sampler's seed of one context.
///
/// ```
/// use clozelab::data::provo::ContextKey;
/// use clozelab::runtime::context_samples::context_seed;
/// let key = ContextKey::new(3, 7);
/// assert_eq!(context_seed(1, key), context_seed(1, key));
/// assert_ne!(context_seed(1, key), context_seed(2, key));
/// ```
pub fn context_seed(seed: u64, key: ContextKey) -> u64 {
    stable_hash(&format!("{seed}:{}:{}", key.text_id, key.word_num))
}

/// The contexts as runs of one passage each (consecutive contexts of one `text_id`), in order:
/// the items a sharded job is cut into.
pub fn passages(contexts: &[ProvoContext]) -> Vec<&[ProvoContext]> {
    contexts.chunk_by(|a, b| a.text_id == b.text_id).collect()
}

/// `samples` words for each of `contexts`, passage by passage; `report` hears of each passage
/// done (its index among them).
pub async fn sample_contexts(
    model: &Transformer,
    tokenizer: &BpeTokenizer,
    contexts: &[ProvoContext],
    samples: usize,
    seed: u64,
    monitor: &mut dyn Monitor,
    report: &mut dyn FnMut(usize),
) -> Result<BTreeMap<ContextKey, Samples>, SamplerError> {
    let config = SamplerConfig::new(samples, seed)?;
    let mut out = BTreeMap::new();
    for (p, passage) in passages(contexts).into_iter().enumerate() {
        for group in passage.chunks(contexts_to_join(samples)) {
            let joined: Vec<(&str, u64)> = group
                .iter()
                .map(|c| (c.context.as_str(), context_seed(seed, c.key())))
                .collect();
            let mut progress = Progress {
                contexts_done: 0,
                contexts_total: group.len(),
                samples_done: 0,
                elapsed_s: 0.0,
            };
            let words =
                sample_words_together(model, tokenizer, &joined, &config, monitor, &mut progress)
                    .await?;
            for (context, words) in group.iter().zip(words) {
                out.insert(context.key(), samples_of(words));
            }
        }
        report(p);
    }
    Ok(out)
}

/// The sampler's words of one context as a system's samples (counts as the analyses take them).
pub fn samples_of(words: WordSamples) -> Samples {
    Samples {
        words: words
            .words
            .into_iter()
            .map(|(w, n)| (w, n as f64))
            .collect(),
        failed: words.failed as u64,
    }
}

/// The samples as the paper's GPT-2 sample files hold them, one JSON line per context in
/// `contexts`' order: `{"text_id", "word_num", "samples": {word: count}}`, samples without a
/// word under [`FAILED_SAMPLE`]. `table1 --file` reads it back as a system.
pub fn samples_jsonl(contexts: &[ProvoContext], samples: &BTreeMap<ContextKey, Samples>) -> String {
    let mut out = String::new();
    for context in contexts {
        let Some(s) = samples.get(&context.key()) else {
            continue;
        };
        let mut words: serde_json::Map<String, serde_json::Value> = s
            .words
            .iter()
            .map(|(w, &n)| (w.clone(), serde_json::Value::from(n as u64)))
            .collect();
        if s.failed > 0 {
            words.insert(FAILED_SAMPLE.to_string(), s.failed.into());
        }
        let line = serde_json::json!({
            "text_id": context.text_id,
            "word_num": context.word_num,
            "samples": words,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}
