//! What every shardable batch command shares: the part this process runs (`--shard K/N`, or
//! the Slurm array task's), writing a part's table and manifest so that a killed run leaves
//! none half-written, and `clozelab merge`, which joins a job's parts into what one process
//! writes, whichever command wrote them.

use std::path::{Path, PathBuf};

use clap::Args;

use super::engine_from_files;
use super::error::CliError;
use crate::data::job_manifest::{JobManifest, ModelSource, PartFiles, merge_parts, sha256_hex};
use crate::data::shard::{Shard, ShardError};
use crate::model::Precision;
use crate::runtime::backend::BackendKind;
use crate::runtime::engine::Engine;
use crate::runtime::hub_cache::ResolvedModel;
use crate::runtime::modeldir::ModelFiles;

/// The flags that pick a part of a batch job.
#[derive(Debug, Args)]
pub struct ShardFlags {
    /// This part of the job, K of N (from 1); under a Slurm job array the task's own part by
    /// default (SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT).
    #[arg(long, value_name = "K/N", conflicts_with = "shards")]
    pub shard: Option<String>,
    /// The job's number of parts under a Slurm array of 1-N: this task's part is its
    /// SLURM_ARRAY_TASK_ID, also when it is resubmitted alone (--array=K).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub shards: Option<u64>,
}

impl ShardFlags {
    /// The part of the job this process runs: `--shard`, else the Slurm array task (of
    /// `--shards`), else all.
    pub fn shard(&self) -> Result<Shard, CliError> {
        let usage = |e: ShardError| CliError::usage(e.to_string());
        match self.shard.as_deref() {
            Some(text) => Shard::parse(text).map_err(usage),
            None => Ok(Shard::from_slurm(
                |name| std::env::var(name).ok(),
                self.shards.map(|n| n as usize),
            )
            .map_err(usage)?
            .unwrap_or(Shard::WHOLE)),
        }
    }
}

/// `model`'s files loaded on `backend`, with the adapter's name and what the job's manifest
/// says of the model (its name, revision and weights' SHA-256).
pub fn load_for_job(
    model: &ResolvedModel,
    files: ModelFiles,
    backend: BackendKind,
    precision: Precision,
) -> Result<(Engine, String, ModelSource), CliError> {
    let source = ModelSource {
        name: model.name.clone(),
        revision: model.revision.clone(),
        weights_sha256: sha256_hex(&files.weights),
    };
    let (engine, adapter) = engine_from_files(&model.path, files, backend, precision)?;
    Ok((engine, adapter, source))
}

/// A batch job's progress for its log, about twenty lines over `total` items: told of each
/// finished item (its index, in any order), it prints `{label}: k of {total} {items}, s` at
/// every twentieth item finished, the last line when all are.
pub fn progress_log(label: String, total: usize, items: &'static str) -> impl FnMut(usize) {
    let started = std::time::Instant::now();
    let step = total.div_ceil(20).max(1);
    let mut done = 0usize;
    move |_index: usize| {
        done += 1;
        if done.is_multiple_of(step) || done == total {
            eprintln!(
                "{label}: {done} of {total} {items}, {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The parts' folders (each with manifest.json and the table it names).
    #[arg(value_name = "PART", required = true)]
    pub parts: Vec<PathBuf>,
    /// The folder to write the merged table and manifest.json to.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
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

/// The table first, then the manifest that vouches for it, into `dir`.
fn write_result(dir: &Path, table: &str, manifest: &JobManifest) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|source| CliError::Io {
        action: "create",
        path: dir.to_path_buf(),
        source,
    })?;
    write_atomically(&dir.join(&manifest.job.table), table)?;
    write_atomically(&dir.join("manifest.json"), &manifest.to_json())
}

/// Writes a part (or one process's whole job) under `out`: a part of N > 1 to
/// `out/shard-K-of-N/`. Gives the table's path.
pub fn write_part(out: &Path, table: &str, manifest: &JobManifest) -> Result<PathBuf, CliError> {
    let Shard { index, count } = manifest.shard;
    let dir = if count > 1 {
        out.join(format!("shard-{index}-of-{count}"))
    } else {
        out.to_path_buf()
    };
    write_result(&dir, table, manifest)?;
    Ok(dir.join(&manifest.job.table))
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
        let manifest = read("manifest.json")?;
        let table_file = JobManifest::from_json(&name, &manifest)
            .map_err(|e| CliError::usage(e.to_string()))?
            .job
            .table;
        parts.push(PartFiles {
            table: read(&table_file)?,
            manifest,
            name,
        });
    }
    let (table, manifest) = merge_parts(&parts).map_err(|e| CliError::usage(e.to_string()))?;
    let path = write_part(&args.out, &table, &manifest)?;
    println!(
        "merged {} parts of {} into {}: {} rows",
        parts.len(),
        manifest.job.command,
        path.display(),
        manifest.rows
    );
    Ok(())
}
