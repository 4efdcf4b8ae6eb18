//! Models given to `table1` and `figures` (`--sample-model DIR`, repeated) as systems beside the
//! files' ones: each samples `--model-samples` words for every context of the data on the CPU,
//! as the Analysis page's "The loaded model as a system" does, a row of Table 1 each. The same
//! samples as `clozelab samples` writes for a cluster ([`crate::runtime::context_samples`]).

use super::error::CliError;
use super::flags::ModelSystemFlags;
use crate::analysis::dataset::Dataset;
use crate::estimators::progress::Unmonitored;
use crate::runtime::context_samples::sample_contexts;

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
        let started = std::time::Instant::now();
        let samples = pollster::block_on(sample_contexts(
            &engine.model,
            &engine.tokenizer,
            &data.norms,
            flags.model_samples,
            seed,
            &mut Unmonitored,
            &mut |_| {},
        ))?;
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
