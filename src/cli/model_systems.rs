//! Models given to `table1` and `figures` (`--sample-model DIR`, repeated) as systems beside the
//! files' ones: each samples `--model-samples` words for every context of the data on the CPU,
//! as the Analysis page's "The loaded model as a system" does, a row of Table 1 each.

use super::error::CliError;
use super::flags::ModelSystemFlags;
use crate::analysis::dataset::Dataset;
use crate::data::provo::Samples;
use crate::estimators::progress::{Progress, Unmonitored};
use crate::estimators::sampler::{SamplerConfig, contexts_to_join, sample_words_together};
use crate::rng::stable_hash;

/// Adds a system per model of `flags` to `data`, named `{folder} (sampled)`, each context's
/// draws seeded from `seed` and its place.
pub fn add_model_systems(
    data: &mut Dataset,
    flags: &ModelSystemFlags,
    seed: u64,
) -> Result<(), CliError> {
    for dir in &flags.sample_model {
        let (engine, _) = super::load_engine_from(
            dir,
            crate::runtime::backend::BackendKind::Cpu,
            crate::model::Precision::F32,
        )?;
        let folder = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        let config = SamplerConfig::new(flags.model_samples, seed)?;
        let contexts: Vec<_> = data
            .norms
            .iter()
            .map(|c| {
                let seed = stable_hash(&format!("{seed}:{}:{}", c.text_id, c.word_num));
                (c.key(), c.context.as_str(), seed)
            })
            .collect();
        let mut samples = std::collections::BTreeMap::new();
        let started = std::time::Instant::now();
        for group in contexts.chunks(contexts_to_join(flags.model_samples)) {
            let joined: Vec<(&str, u64)> = group.iter().map(|(_, c, s)| (*c, *s)).collect();
            let mut progress = Progress {
                contexts_done: 0,
                contexts_total: group.len(),
                samples_done: 0,
                elapsed_s: 0.0,
            };
            let words = pollster::block_on(sample_words_together(
                &engine.model,
                &engine.tokenizer,
                &joined,
                &config,
                &mut Unmonitored,
                &mut progress,
            ))?;
            for ((key, _, _), words) in group.iter().zip(words) {
                let counts = words.words.into_iter().map(|(w, n)| (w, n as f64));
                samples.insert(
                    *key,
                    Samples {
                        words: counts.collect(),
                        failed: words.failed as u64,
                    },
                );
            }
        }
        eprintln!(
            "{folder}: {} words sampled for each of {} contexts in {:.1} s",
            flags.model_samples,
            samples.len(),
            started.elapsed().as_secs_f64()
        );
        data.systems.push((format!("{folder} (sampled)"), samples));
    }
    Ok(())
}
