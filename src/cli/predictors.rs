//! `clozelab predictors`: every word's surprisal and entropy over a corpus, for every model,
//! one part of the job with `--shard K/N` or as a Slurm array task ([`super::job_parts`]).

use std::path::{Path, PathBuf};

use clap::Args;

use super::error::CliError;
use super::job_parts::{ShardFlags, load_for_job, progress_log, write_part};
use crate::data::corpus::{CorpusItem, corpus_from_texts, read_corpus_table};
use crate::data::job_manifest::{CorpusSource, JobDescription, JobManifest, sha256_hex};
use crate::data::predictor_table::{PredictorOptions, predictor_table_csv};
use crate::model::Precision;
use crate::runtime::backend::BackendKind;
use crate::runtime::corpus_predictors::{
    NamedModel, PredictorSettings, model_predictors, model_predictors_on_threads,
};
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
    #[command(flatten)]
    pub shard: ShardFlags,
    /// The folder to write predictors.csv and manifest.json to (a part of N > 1 writes to
    /// DIR/shard-K-of-N/).
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

pub fn predictors(args: &PredictorsArgs) -> Result<(), CliError> {
    let (items, corpus) = read_corpus(&args.corpus)?;
    let shard = args.shard.shard()?;
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
        let (engine, adapter, source) = load_for_job(m, files, args.backend, args.precision)?;
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
        let report = std::sync::Mutex::new(progress_log(
            format!("predictors: {}", m.name),
            part.len(),
            "items",
        ));
        let on_item = |index: usize| report.lock().unwrap_or_else(|e| e.into_inner())(index);
        per_model.push(match args.backend {
            // Several items at once on the CPU's threads; one GPU queue takes them one by one.
            BackendKind::Cpu => model_predictors_on_threads(&named, part, settings, &on_item)?,
            BackendKind::Wgpu => pollster::block_on(model_predictors(
                &named,
                part,
                settings,
                &mut crate::estimators::progress::Unmonitored,
                &mut |index| on_item(index),
            ))?,
        });
        sources.push(source);
    }
    // Item by item, each item's models in the order given: parts then join in shard order.
    let mut rows = Vec::new();
    for i in 0..part.len() {
        for model_rows in &per_model {
            rows.extend(model_rows[i].iter().cloned());
        }
    }
    let table = predictor_table_csv(&rows);
    let options = PredictorOptions {
        samples: args.samples,
        seed: args.seed,
        all_segmentations: !args.canonical_only,
        backend: args.backend.name().to_string(),
        precision: args.precision.name().to_string(),
    };
    let job = JobDescription {
        command: "predictors".to_string(),
        table: "predictors.csv".to_string(),
        header_lines: 1,
        clozelab_version: env!("CARGO_PKG_VERSION").to_string(),
        corpus,
        models: sources,
        options: serde_json::to_value(options).expect("plain fields"),
    };
    let manifest = JobManifest::describe(job, shard, range, &table);
    let path = write_part(&args.out, &table, &manifest)?;
    println!(
        "wrote {}: {} rows (shard {shard})",
        path.display(),
        manifest.rows
    );
    Ok(())
}
