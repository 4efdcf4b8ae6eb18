//! The flags of the norming commands: `norming-sim`, `norming-state`, `norming-prior` (see
//! [`super::norming`]).

use std::path::PathBuf;

use clap::Args;

use super::flags::ModelFlags;
use super::job_parts::ShardFlags;

#[derive(Debug, Args)]
pub struct NormingSimArgs {
    /// The Provo folder (provo_cloze.jsonl: each context's responses are the truth drawn from).
    #[arg(long, value_name = "DIR", required_unless_present = "runs")]
    pub provo: Option<PathBuf>,
    /// Bound on the width of the target word's 95% interval.
    #[arg(long, value_name = "W")]
    pub width: Option<f64>,
    /// Bound on the probability of words nobody gave yet (Chao–Jost's coverage deficit).
    #[arg(long, value_name = "U")]
    pub unseen: Option<f64>,
    /// Share of contexts that must meet the bounds.
    #[arg(long, default_value_t = 0.9)]
    pub share: f64,
    /// What one reading covers: a whole passage (as Provo was normed) or one context.
    #[arg(long, value_enum, default_value = "passage")]
    pub unit: NormingUnit,
    /// Seeds to average over.
    #[arg(long, default_value_t = 20)]
    pub seeds: u64,
    /// Most readings any unit may get.
    #[arg(long, default_value_t = 1000)]
    pub cap: u32,
    #[command(flatten)]
    pub shard: ShardFlags,
    /// Write the seeds' runs (norming_runs.jsonl and its manifest) to this folder instead of
    /// printing their summary: a part of N > 1 to DIR/shard-K-of-N/, for `clozelab merge`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Summarise a merged job's runs (the folder `clozelab merge` wrote) instead of simulating.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["provo", "out"])]
    pub runs: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// What one reading covers in `norming-sim`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum NormingUnit {
    Passage,
    Context,
}

#[derive(Debug, Args)]
pub struct NormingStateArgs {
    /// The study's config (its `adaptive_norming` states the target).
    #[arg(long, value_name = "FILE")]
    pub study: PathBuf,
    /// The study's results so far (JATOS's export, study-server bundles, the app's downloads).
    #[arg(long = "file", value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Where to write the state file to serve beside the study's config.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct NormingPriorArgs {
    /// The study's config (with an `adaptive_norming` section).
    #[arg(long, value_name = "FILE")]
    pub study: PathBuf,
    #[command(flatten)]
    pub model: ModelFlags,
    /// Where to write the config with its prior (may be the same file).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}
