//! The flags of `clozelab bench`'s commands (see [`super`]).

use std::path::PathBuf;

use clap::Args;

use crate::cli::flags::BenchBackends;
use crate::cli::flags::TestFamily;

#[derive(Debug, Args)]
pub struct BenchForwardArgs {
    /// Where to write the figures as JSON.
    #[arg(long, value_name = "FILE", default_value = "target/bench-forward.json")]
    pub out: PathBuf,
    /// The architecture, with GPT-2's vocabulary: GPT-2 (default shape GPT-2 small's),
    /// GPT-NeoX (Pythia-160M's, which is GPT-2 small's) or Llama (SmolLM2-135M's).
    #[arg(long, value_enum, default_value_t = TestFamily::Gpt2)]
    pub family: TestFamily,
    /// Transformer blocks (default: the family's model's).
    #[arg(long)]
    pub layers: Option<usize>,
    /// Embedding width (default: the family's model's).
    #[arg(long)]
    pub dim: Option<usize>,
    /// Attention heads (default: the family's model's).
    #[arg(long)]
    pub heads: Option<usize>,
    /// The backends to measure.
    #[arg(long, value_enum, default_value_t = BenchBackends::All)]
    pub backend: BenchBackends,
    /// Without the transformers baseline.
    #[arg(long)]
    pub no_python: bool,
    /// Fewer steps and repeats: a smoke run, not a measurement.
    #[arg(long)]
    pub quick: bool,
}

#[derive(Debug, Args)]
pub struct BenchAttentionArgs {
    /// Where to write the figures as JSON.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "target/bench-attention.json"
    )]
    pub out: PathBuf,
    /// The backends to measure.
    #[arg(long, value_enum, default_value_t = BenchBackends::All)]
    pub backend: BenchBackends,
    /// Timed calls per side and shape (the median is printed).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub rounds: usize,
    /// Three calls per side: a smoke run, not a measurement.
    #[arg(long)]
    pub quick: bool,
}

#[derive(Debug, Args)]
pub struct BenchWordsArgs {
    /// The Provo folder the contexts come from.
    #[arg(long, value_name = "DIR", default_value = "../shared/provo")]
    pub provo: PathBuf,
    /// Contexts measured (default: 20, or 3 with --quick).
    #[arg(long, value_name = "N")]
    pub contexts: Option<usize>,
    /// The backends to measure.
    #[arg(long, value_enum, default_value_t = BenchBackends::All)]
    pub backend: BenchBackends,
    /// Contexts the paper's procedure runs on (default: 2, or 1 with --quick).
    #[arg(long, value_name = "N")]
    pub python_contexts: Option<usize>,
    /// Samples per context (default: both 1000 and 40).
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Contexts run together per forward pass, measured beside one at a time.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub contexts_per_pass: usize,
    /// Without the transformers baseline.
    #[arg(long)]
    pub no_python: bool,
    /// Fewer contexts: a smoke run, not a measurement.
    #[arg(long)]
    pub quick: bool,
    /// Where to write the figures as JSON.
    #[arg(long, value_name = "FILE", default_value = "target/bench-words.json")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct BenchHostArgs {
    /// Where to write the figures as JSON.
    #[arg(long, value_name = "FILE", default_value = "target/bench-host.json")]
    pub out: PathBuf,
    /// Transformer blocks of the GPT-2-shaped model.
    #[arg(long, default_value_t = 12)]
    pub layers: usize,
    /// Its width: small, so that the arithmetic is negligible beside the host's work.
    #[arg(long, default_value_t = 64)]
    pub dim: usize,
    /// Attention heads: one, 64 wide as GPT-2's. (Narrower heads make the cache's views start
    /// where WebGPU cannot bind them, 256 bytes apart, so that the browser's engine copies them:
    /// work GPT-2 does not do.)
    #[arg(long, default_value_t = 1)]
    pub heads: usize,
    /// Decode steps timed (after as many untimed).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub steps: usize,
    /// Without the transformers baseline.
    #[arg(long)]
    pub no_python: bool,
}

#[derive(Debug, Args)]
pub struct BenchSpeedArgs {
    #[command(flatten)]
    pub model: crate::cli::flags::ModelFlags,
    /// Timed rounds after the untimed one (the median is printed).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub rounds: usize,
    /// Samples of the word distribution (the game's feedback draws 100).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub samples: usize,
    /// The figures as one JSON object (the worker's speed report).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct BenchServeArgs {
    /// Simulated participants sending at once.
    #[arg(long, default_value_t = 500)]
    pub participants: usize,
    /// Answers each participant sends, one request each.
    #[arg(long, default_value_t = 20)]
    pub answers: usize,
    /// The paced run's longest pause before each answer, in ms (uniform up to it: with the
    /// defaults 500 participants offer about 1,000 answers/s); the saturated run pauses never.
    #[arg(long, default_value_t = 700)]
    pub think_ms: u64,
    /// Where to write the figures as JSON.
    #[arg(long, value_name = "FILE", default_value = "target/bench-serve.json")]
    pub out: PathBuf,
}
