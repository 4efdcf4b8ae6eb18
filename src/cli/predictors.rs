//! `clozelab predictors` (every word's surprisal and entropy over a corpus, for every model,
//! one part of the job with `--shard K/N` or as a Slurm array task) and `clozelab merge` (a
//! sharded job's parts into the table one process writes).

use std::path::{Path, PathBuf};

use clap::Args;

use super::engine_from_files;
use super::error::CliError;
use crate::data::corpus::{CorpusItem, corpus_from_texts, read_corpus_table};
use crate::data::predictor_table::{
    CorpusSource, JobDescription, ModelSource, PartFiles, PredictorManifest, PredictorOptions,
    merge_parts, predictor_table_csv, sha256_hex,
};
use crate::data::shard::Shard;
use crate::model::Precision;
use crate::runtime::backend::BackendKind;
use crate::runtime::corpus_predictors::{NamedModel, PredictorSettings, model_predictors};
use crate::runtime::hub_cache::resolve_model;
use crate::runtime::modeldir::read_model_dir;

#[derive(Debug, Args)]
pub struct PredictorsArgs {
    /// The texts: a CSV/TSV with an item id column (item, item_id, text_id or id) and a text
    /// column, or a folder of .txt files (each file's name its id).
    #[arg(long, value_name = "FILE|DIR")]
    pub corpus: PathBuf,
    /// A model: a folder, a GGUF file, or a Hugging Face id with its revision
    /// (EleutherAI/pythia-160m@step1000) already in the Hugging Face cache. Repeat for more.
    #[arg(long = "model", value_name = "DIR|FILE.gguf|ID@REV", required = true)]
    pub models: Vec<String>,
    /// Where the models run: cpu or wgpu.
    #[arg(long, default_value = "cpu")]
    pub backend: BackendKind,
    /// The blocks' weights: f32, or f16 on a wgpu adapter with shader-f16.
    #[arg(long, default_value = "f32")]
    pub precision: Precision,
    /// Continuations sampled per word for its entropy (0 leaves entropy out).
    #[arg(long, default_value_t = 0)]
    pub samples: usize,
    /// Only the canonical surprisal (the every-segmentation column left empty): what minicons
    /// computes, for the benchmark or a quick first pass.
    #[arg(long, conflicts_with = "samples")]
    pub canonical_only: bool,
    /// The job's seed; each item's comes from it and the item's id.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// This part of the job, K of N (from 1); under a Slurm job array the task's own part by
    /// default (SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT).
    #[arg(long, value_name = "K/N", conflicts_with = "shards")]
    pub shard: Option<String>,
    /// The job's number of parts under a Slurm array of 1-N: this task's part is its
    /// SLURM_ARRAY_TASK_ID, also when it is resubmitted alone (--array=K).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub shards: Option<u64>,
    /// The folder to write predictors.csv and manifest.json to (a part of N > 1 writes to
    /// DIR/shard-K-of-N/).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The parts' folders (each with predictors.csv and manifest.json).
    #[arg(value_name = "PART", required = true)]
    pub parts: Vec<PathBuf>,
    /// The folder to write the merged predictors.csv and manifest.json to.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// The corpus's items and what identifies it.
fn read_corpus(path: &Path) -> Result<(Vec<CorpusItem>, CorpusSource), CliError> {
    let io = |action, path: &Path| {
        let path = path.to_path_buf();
        move |source| CliError::Io {
            action,
            path,
            source,
        }
    };
    let name = path.display().to_string();
    let (items, sha256) = if path.is_dir() {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(path).map_err(io("read", path))? {
            let entry = entry.map_err(io("read", path))?;
            let file = entry.file_name().to_string_lossy().into_owned();
            if file.ends_with(".txt") && entry.path().is_file() {
                let text =
                    std::fs::read_to_string(entry.path()).map_err(io("read", &entry.path()))?;
                files.push((file, text));
            }
        }
        files.sort();
        let mut bytes = Vec::new();
        for (file, text) in &files {
            bytes.extend_from_slice(file.as_bytes());
            bytes.push(0);
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(0);
        }
        (corpus_from_texts(&name, files)?, sha256_hex(&bytes))
    } else {
        let bytes = std::fs::read(path).map_err(io("read", path))?;
        let text = String::from_utf8(bytes.clone())
            .map_err(|_| CliError::usage(format!("{name} is not UTF-8 text")))?;
        (read_corpus_table(&name, &text)?, sha256_hex(&bytes))
    };
    let source = CorpusSource {
        name,
        sha256,
        items: items.len(),
    };
    Ok((items, source))
}

/// The part of the job this process runs: `--shard`, else the Slurm array task (of
/// `--shards`), else all.
fn this_shard(flag: Option<&str>, shards: Option<u64>) -> Result<Shard, CliError> {
    let usage = |e: crate::data::shard::ShardError| CliError::usage(e.to_string());
    match flag {
        Some(text) => Shard::parse(text).map_err(usage),
        None => Ok(
            Shard::from_slurm(|name| std::env::var(name).ok(), shards.map(|n| n as usize))
                .map_err(usage)?
                .unwrap_or(Shard::WHOLE),
        ),
    }
}

/// Writes `contents` to `path` through a temporary file beside it, so that a killed run
/// leaves the old file or the new one, never half of one.
fn write_atomically(path: &Path, contents: &str) -> Result<(), CliError> {
    let tmp = path.with_extension("partial");
    let io = |action| {
        move |source| CliError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    };
    std::fs::write(&tmp, contents).map_err(io("write"))?;
    std::fs::rename(&tmp, path).map_err(io("write"))
}

/// The table first, then the manifest that vouches for it.
fn write_result(dir: &Path, table: &str, manifest: &PredictorManifest) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|source| CliError::Io {
        action: "create",
        path: dir.to_path_buf(),
        source,
    })?;
    write_atomically(&dir.join("predictors.csv"), table)?;
    write_atomically(&dir.join("manifest.json"), &manifest.to_json())
}

pub fn predictors(args: &PredictorsArgs) -> Result<(), CliError> {
    let (items, corpus) = read_corpus(&args.corpus)?;
    let shard = this_shard(args.shard.as_deref(), args.shards)?;
    let models = args
        .models
        .iter()
        .map(|spec| resolve_model(spec))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CliError::usage(e.to_string()))?;
    for (i, m) in models.iter().enumerate() {
        if models[..i].iter().any(|other| other.name == m.name) {
            return Err(CliError::usage(format!(
                "two models are named {:?}: give each --model a folder or file of its own name",
                m.name
            )));
        }
    }
    // Parts are balanced by the first model's token counts, which every part computes alike.
    let mut first = Some(read_model_dir(&models[0].path)?);
    let tokenizer = &first.as_ref().expect("just read").tokenizer;
    let weights = items
        .iter()
        .map(|item| tokenizer.encode(&item.text).map(|ids| ids.len()))
        .collect::<Result<Vec<_>, _>>()?;
    let range = shard.items(&weights);
    let part = &items[range.clone()];
    let settings = PredictorSettings {
        samples: args.samples,
        seed: args.seed,
        batch_buckets: args.backend == BackendKind::Wgpu,
        all_segmentations: !args.canonical_only,
    };
    let mut sources = Vec::with_capacity(models.len());
    let mut per_model = Vec::with_capacity(models.len());
    for m in &models {
        let files = match first.take() {
            Some(files) => files,
            None => read_model_dir(&m.path)?,
        };
        let weights_sha256 = sha256_hex(&files.weights);
        let (engine, adapter) = engine_from_files(&m.path, files, args.backend, args.precision)?;
        eprintln!(
            "predictors: {} on {adapter}: items {}..{} of {} (shard {shard})",
            m.name,
            range.start,
            range.end,
            items.len()
        );
        let named = NamedModel {
            model: &engine.model,
            tokenizer: &engine.tokenizer,
            name: &m.name,
            revision: &m.revision,
        };
        // About twenty progress lines per model, for a batch job's log.
        let started = std::time::Instant::now();
        let step = part.len().div_ceil(20).max(1);
        let mut report = |i: usize| {
            if (i + 1).is_multiple_of(step) || i + 1 == part.len() {
                eprintln!(
                    "predictors: {}: {} of {} items, {:.1} s",
                    m.name,
                    i + 1,
                    part.len(),
                    started.elapsed().as_secs_f64()
                );
            }
        };
        per_model.push(pollster::block_on(model_predictors(
            &named,
            part,
            settings,
            &mut crate::estimators::progress::Unmonitored,
            &mut report,
        ))?);
        sources.push(ModelSource {
            name: m.name.clone(),
            revision: m.revision.clone(),
            weights_sha256,
        });
    }
    // Item by item, each item's models in the order given: parts then join in shard order.
    let mut rows = Vec::new();
    for i in 0..part.len() {
        for model_rows in &per_model {
            rows.extend(model_rows[i].iter().cloned());
        }
    }
    let table = predictor_table_csv(&rows);
    let job = JobDescription {
        clozelab_version: env!("CARGO_PKG_VERSION").to_string(),
        corpus,
        models: sources,
        options: PredictorOptions {
            samples: args.samples,
            seed: args.seed,
            all_segmentations: !args.canonical_only,
            backend: args.backend.name().to_string(),
            precision: args.precision.name().to_string(),
        },
    };
    let manifest = PredictorManifest::describe(job, shard, range, &table);
    let dir = if shard.count > 1 {
        args.out
            .join(format!("shard-{}-of-{}", shard.index, shard.count))
    } else {
        args.out.clone()
    };
    write_result(&dir, &table, &manifest)?;
    println!(
        "wrote {}: {} rows (shard {shard})",
        dir.join("predictors.csv").display(),
        manifest.rows
    );
    Ok(())
}

pub fn merge(args: &MergeArgs) -> Result<(), CliError> {
    let mut parts = Vec::with_capacity(args.parts.len());
    for dir in &args.parts {
        let name = dir.display().to_string();
        let read = |file: &str| {
            std::fs::read_to_string(dir.join(file)).map_err(|e| {
                CliError::usage(format!(
                    "{name}: no readable {file} ({e}): the shard did not finish; run it again"
                ))
            })
        };
        parts.push(PartFiles {
            manifest: read("manifest.json")?,
            table: read("predictors.csv")?,
            name,
        });
    }
    let (table, manifest) = merge_parts(&parts).map_err(|e| CliError::usage(e.to_string()))?;
    write_result(&args.out, &table, &manifest)?;
    println!(
        "merged {} parts into {}: {} rows",
        parts.len(),
        args.out.join("predictors.csv").display(),
        manifest.rows
    );
    Ok(())
}
