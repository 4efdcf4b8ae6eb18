//! `clozelab samples`: a model's word samples for every context of the norms, the system
//! `table1 --sample-model` samples in-process, written as a sample file `table1 --file` reads,
//! one part of the job with `--shard K/N` or as a Slurm array task (whole passages a part,
//! balanced by their contexts' tokens; [`super::job_parts`]).

use std::path::PathBuf;

use clap::Args;

use super::error::CliError;
use super::job_parts::{ShardFlags, load_for_job, progress_log, write_part};
use crate::data::job_manifest::{CorpusSource, JobDescription, JobManifest, sha256_hex};
use crate::data::provo::{ProvoContext, parse_jsonl};
use crate::estimators::progress::Unmonitored;
use crate::model::Precision;
use crate::runtime::backend::BackendKind;
use crate::runtime::context_samples::{passages, sample_contexts, samples_jsonl};
use crate::runtime::hub_cache::resolve_model;
use crate::runtime::modeldir::read_model_dir;

#[derive(Debug, Args)]
pub struct SamplesArgs {
    /// The norms: a provo_cloze.jsonl, or a folder holding one (../shared/provo).
    #[arg(long, value_name = "FILE|DIR")]
    pub norms: PathBuf,
    /// The model: a folder, a GGUF file, or a Hugging Face id with its revision
    /// (EleutherAI/pythia-160m@step1000) already in the Hugging Face cache.
    #[arg(long, value_name = "DIR|FILE.gguf|ID@REV")]
    pub model: String,
    /// Where the model runs: cpu or wgpu.
    #[arg(long, default_value = "cpu")]
    pub backend: BackendKind,
    /// The blocks' weights: f32, or f16 on a wgpu adapter with shader-f16.
    #[arg(long, default_value = "f32")]
    pub precision: Precision,
    /// Words sampled per context.
    #[arg(long, default_value_t = 40)]
    pub samples: usize,
    /// The job's seed; each context's comes from it and its place, as `table1 --seed S
    /// --sample-model` draws them.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub shard: ShardFlags,
    /// The folder to write the sample file and manifest.json to (a part of N > 1 writes to
    /// DIR/shard-K-of-N/).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// A file name of `name` and `revision`: letters, digits, `-`, `_` and `.` kept, the rest `_`.
fn file_stem(name: &str, revision: &str) -> String {
    let full = if revision.is_empty() {
        name.to_string()
    } else {
        format!("{name}@{revision}")
    };
    let stem: String = full
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    stem.trim_start_matches('.').to_string()
}

pub fn samples(args: &SamplesArgs) -> Result<(), CliError> {
    let path = if args.norms.is_dir() {
        args.norms.join("provo_cloze.jsonl")
    } else {
        args.norms.clone()
    };
    let name = path.display().to_string();
    let bytes = std::fs::read(&path).map_err(CliError::io("read", &path))?;
    let text = String::from_utf8(bytes.clone())
        .map_err(|_| CliError::usage(format!("{name} is not UTF-8 text")))?;
    let contexts: Vec<ProvoContext> = parse_jsonl(&name, &text)?;
    if contexts.is_empty() {
        return Err(CliError::usage(format!("{name} has no contexts")));
    }
    let shard = args.shard.shard()?;
    let model = resolve_model(&args.model).map_err(|e| CliError::usage(e.to_string()))?;
    let files = read_model_dir(&model.path)?;
    let (engine, adapter, source) = load_for_job(&model, files, args.backend, args.precision)?;
    let passages = passages(&contexts);
    let mut weights = Vec::with_capacity(passages.len());
    for passage in &passages {
        let mut tokens = 0;
        for context in *passage {
            tokens += engine.tokenizer.encode(&context.context)?.len();
        }
        weights.push(tokens);
    }
    let range = shard.items(&weights);
    let part: Vec<ProvoContext> = passages[range.clone()]
        .iter()
        .flat_map(|p| p.iter().cloned())
        .collect();
    eprintln!(
        "samples: {} on {adapter}: passages {}..{} of {} ({} contexts; shard {shard})",
        model.name,
        range.start,
        range.end,
        passages.len(),
        part.len()
    );
    let mut report = progress_log("samples".to_string(), range.len(), "passages");
    let sampled = pollster::block_on(sample_contexts(
        &engine.model,
        &engine.tokenizer,
        &part,
        args.samples,
        args.seed,
        &mut Unmonitored,
        &mut report,
    ))?;
    let table = samples_jsonl(&part, &sampled);
    let job = JobDescription {
        command: "samples".to_string(),
        table: format!("{}.jsonl", file_stem(&model.name, &model.revision)),
        header_lines: 0,
        clozelab_version: env!("CARGO_PKG_VERSION").to_string(),
        corpus: CorpusSource {
            name,
            sha256: sha256_hex(&bytes),
            items: passages.len(),
        },
        models: vec![source],
        options: serde_json::json!({
            "samples": args.samples,
            "seed": args.seed,
            "backend": args.backend.name(),
            "precision": args.precision.name(),
        }),
    };
    let manifest = JobManifest::describe(job, shard, range, &table);
    let path = write_part(&args.out, &table, &manifest)?;
    println!(
        "wrote {}: {} contexts (shard {shard})",
        path.display(),
        manifest.rows
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::file_stem;

    #[test]
    fn file_stems_keep_a_models_name_and_nothing_a_path_could_use() {
        assert_eq!(file_stem("test", ""), "test");
        assert_eq!(
            file_stem("EleutherAI/pythia-160m", "step1000"),
            "EleutherAI_pythia-160m_step1000"
        );
        assert_eq!(file_stem("../../etc/passwd", ""), "_.._etc_passwd");
        assert_eq!(file_stem("naïve model", ""), "na_ve_model");
    }
}
