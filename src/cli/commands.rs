//! Every command and flag of `clozelab`, each defined once with its help (clap's derive):
//! `clozelab --help` and `clozelab COMMAND --help` are generated from here. Flags that several
//! commands take (the model, Table 1's options, the word classes, the data) are one struct each,
//! in [`super::flags`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::bench::args::{
    BenchAttentionArgs, BenchForwardArgs, BenchHostArgs, BenchServeArgs, BenchSpeedArgs,
    BenchWordsArgs,
};
use super::flags::{
    ClassFlags, DEFAULT_LEXICON, DEFAULT_TOKENIZER_DIR, DataFlags, ModelFlags, ModelSystemFlags,
    Table1Flags, TestFamily, Truth,
};
use super::job_parts::MergeArgs;
use super::norming_args::{NormingPriorArgs, NormingSimArgs, NormingStateArgs};
pub use super::package::PackageArgs;
use super::predictors::PredictorsArgs;
use super::samples::SamplesArgs;
use super::serve::{ExportArgs, ServeArgs};
use crate::data::provo::ContextKey;
use crate::estimators::decoding::DecodingStrategy;
use crate::estimators::sampler::{DEFAULT_SAMPLES, DEFAULT_TOKEN_BUDGET};

/// GPT-2 next-word tools: the test model, the model's predictions, the papers' tables and
/// figures, the token games' estimates, study packages and benchmarks.
#[derive(Debug, Parser)]
#[command(
    name = "clozelab",
    version,
    arg_required_else_help = true,
    after_help = "A model folder holds config.json, model.safetensors and tokenizer.json (or \
                  vocab.json + merges.txt, or encoder.json + vocab.bpe). --model also takes a \
                  GGUF file (llama, gpt2 or gptneox; F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K, \
                  Q5_K or Q6_K tensors)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Writes the deterministic random GPT-2 (real vocabulary, random weights) to a folder.
    MakeTestModel(MakeTestModelArgs),
    /// The most likely next tokens after a context.
    NextToken(NextTokenArgs),
    /// The model's next-word distribution, estimated by sampling continuations.
    WordDist(WordDistArgs),
    /// Exact probabilities of given words as the next word.
    WordProb(WordProbArgs),
    /// Per-word surprisal of a text (canonical with the beginning-of-word correction, and over
    /// every segmentation) and the entropy of the next word: reading-time predictors.
    Surprisal(SurprisalArgs),
    /// Every word's surprisal and entropy over a corpus, for every model: one tidy table and
    /// its manifest; one part of the job with --shard K/N or as a Slurm array task.
    Predictors(PredictorsArgs),
    /// A model's word samples for every context, as a sample file table1 --file reads; shardable.
    Samples(SamplesArgs),
    /// A sharded job's parts into the table and manifest one process writes, byte for byte.
    Merge(MergeArgs),
    /// Human perplexity from two-token game answers (importance sampling).
    Perplexity(PerplexityArgs),
    /// Top-1 accuracy of top-1 game answers beside the model's.
    Top1(Top1Args),
    /// A JATOS study archive of the built app and a study config.
    JatosPackage(PackageArgs),
    /// A static-site ZIP of the built app and a study config, with a README for the host.
    SitePackage(PackageArgs),
    /// Hosts a Website package and keeps the answers sent to its submit_url in SQLite.
    Serve(ServeArgs),
    /// The answers `clozelab serve` keeps, as the results ZIP the Analysis page reads.
    Export(ExportArgs),
    /// Production-variability probes (Giulianelli et al. 2023) per decoding strategy.
    Probes(ProbesArgs),
    /// Writes the model as a GGUF file with its matrices in a smaller type, and prints what
    /// that costs: next-token TVD and |Δ surprisal| against the original over a text.
    Quantize(QuantizeArgs),
    /// How biased the two-token game's perplexity estimate is, by simulation.
    PerplexitySim(PerplexitySimArgs),
    /// Table 1 of Ilia & Aziz (2024) on the Provo norms and the paper's samples.
    Table1(Table1Args),
    /// Every figure of the Analysis page as SVG with its CSV, and Table 1 as CSV.
    Figures(FiguresArgs),
    /// A study's results as one tidy trial table (trials.csv, token_trials.csv) with its
    /// codebook.csv and exclusions.csv, for R or Python.
    Results(ResultsArgs),
    /// Appendix D: the model's next-token distribution against people's first tokens.
    TokenLevel(TokenLevelArgs),
    /// Adaptive norming against a fixed N, simulated on the Provo norms' responses: readings
    /// each needs to reach one precision target, and how often the stop's claim holds.
    NormingSim(NormingSimArgs),
    /// Adaptive norming's progress from a study's results so far: how many contexts meet the
    /// study's target, and the state file a study outside JATOS serves beside its config.
    NormingState(NormingStateArgs),
    /// The model's probability of each context's next word, as adaptive norming's prior in the
    /// study's config.
    NormingPrior(NormingPriorArgs),
    /// Benchmarks against Hugging Face transformers, printed as ratios.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Tokens per second of GPT-2-small-shaped random weights on each backend.
    Forward(BenchForwardArgs),
    /// Word distributions per second: the sampling tree against the paper's procedure.
    Words(BenchWordsArgs),
    /// The model's attention op against burn's own `attention`, per backend.
    Attention(BenchAttentionArgs),
    /// The Model page's speed check (prefill 16 and 64, a decode step, a word distribution).
    Speed(BenchSpeedArgs),
    /// Host time per GPU dispatch: a decode step of a tiny-width model, its kernels counted
    /// and each thread's CPU time apart.
    Host(BenchHostArgs),
    /// Answers/s and latency of `clozelab serve` under simulated participants, against the
    /// same requests answered without storing.
    Serve(BenchServeArgs),
}

#[derive(Debug, Args)]
pub struct MakeTestModelArgs {
    /// The folder to write.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Seed of the random weights.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Transformer blocks.
    #[arg(long, default_value_t = 2)]
    pub layers: usize,
    /// Embedding width.
    #[arg(long, default_value_t = 64)]
    pub dim: usize,
    /// Attention heads (must divide --dim).
    #[arg(long, default_value_t = 4)]
    pub heads: usize,
    /// Where GPT-2's vocab.json and merges.txt are.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_TOKENIZER_DIR)]
    pub tokenizer: PathBuf,
    /// The architecture: GPT-2's, GPT-NeoX's as Pythia has it, or Llama's as SmolLM2 has it
    /// (each with GPT-2's vocabulary).
    #[arg(long, value_enum, default_value_t = TestFamily::Gpt2)]
    pub family: TestFamily,
    /// Key/value heads of a Llama test model (must divide --heads; default: a third of them,
    /// as SmolLM2 has, or all where 3 does not divide --heads).
    #[arg(long)]
    pub kv_heads: Option<usize>,
    /// Standard deviation of the random matrices. Larger than the default gives activations as
    /// far out as a trained model's largest (the tests' check of overflowing kernels).
    #[arg(long, default_value_t = crate::model::testmodel::TEST_WEIGHT_STD)]
    pub weight_std: f32,
}

/// The type `quantize` stores a model's matrices in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum QuantizeTo {
    /// 8-bit blocks of 32 with an f16 scale (8.5 bits a weight).
    #[value(name = "q8_0")]
    Q8_0,
    /// Half precision (16 bits a weight).
    F16,
}

#[derive(Debug, Args)]
pub struct QuantizeArgs {
    /// The model: a folder (config.json, model.safetensors, tokenizer) or a GGUF file.
    #[arg(long, value_name = "DIR|FILE.gguf")]
    pub model: PathBuf,
    /// Where the two models are compared: cpu or wgpu.
    #[arg(long, default_value = "cpu")]
    pub backend: crate::runtime::backend::BackendKind,
    /// The matrices' type.
    #[arg(long, value_enum)]
    pub to: QuantizeTo,
    /// The GGUF file to write.
    #[arg(long, value_name = "FILE.gguf")]
    pub out: PathBuf,
    /// The text the two models are compared on (default: the app's built-in passages).
    #[arg(long)]
    pub text: Option<String>,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct NextTokenArgs {
    #[command(flatten)]
    pub model: ModelFlags,
    /// The text before the token.
    #[arg(long)]
    pub context: String,
    /// How many tokens to list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WordDistArgs {
    #[command(flatten)]
    pub model: ModelFlags,
    /// The text before the word; repeat the flag for several contexts (sampled together).
    #[arg(long, required = true)]
    pub context: Vec<String>,
    /// Continuations to sample per context.
    #[arg(long, default_value_t = DEFAULT_SAMPLES)]
    pub samples: usize,
    /// Seed of the sampler; the i-th context (from 0) uses SEED + i.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Contexts run together in each forward pass (default: as many as fit 1000 samples, at
    /// most 8). On a GPU, 8 at N = 1000 ran ~3× faster than one at a time (an H100: 8.4–11
    /// against 2.9 contexts/s), with 8× the key/value cache (~4.7 GB at GPT-2 small's size).
    #[arg(long, value_name = "N")]
    pub contexts_per_pass: Option<usize>,
    /// Sampling temperature.
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Keep the K most likely tokens.
    #[arg(long, value_name = "K")]
    pub top_k: Option<usize>,
    /// Keep the smallest most likely set of mass P (nucleus sampling).
    #[arg(long, value_name = "P")]
    pub top_p: Option<f64>,
    /// Locally typical sampling with mass P.
    #[arg(long, value_name = "P")]
    pub typical: Option<f64>,
    /// Tokens per continuation before it counts as failed.
    #[arg(long, value_name = "TOKENS", default_value_t = DEFAULT_TOKEN_BUDGET)]
    pub budget: usize,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WordProbArgs {
    #[command(flatten)]
    pub model: ModelFlags,
    /// The text before the word.
    #[arg(long)]
    pub context: String,
    /// A word to score (repeat the flag for more).
    #[arg(long = "word", value_name = "WORD", required = true)]
    pub words: Vec<String>,
    /// Temperature of the model's distribution.
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["text", "file"])))]
pub struct SurprisalArgs {
    #[command(flatten)]
    pub model: ModelFlags,
    /// The text, its words separated by whitespace.
    #[arg(long)]
    pub text: Option<String>,
    /// A file holding the text (UTF-8).
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Continuations sampled before each word for its entropy (0 leaves entropy out).
    #[arg(long, default_value_t = DEFAULT_SAMPLES)]
    pub samples: usize,
    /// Seed of the sampler; the word at index i (from 0) uses SEED + i.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print JSON Lines: one object per word.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PerplexityArgs {
    #[command(flatten)]
    pub model: ModelFlags,
    /// The two-token game's answers (the game's export, CSV or JSON).
    #[arg(long, value_name = "FILE")]
    pub answers: PathBuf,
    /// A second model folder to score beside GPT-2.
    #[arg(long, value_name = "DIR")]
    pub opponent: Option<PathBuf>,
    /// Also score the models as players of the same rounds.
    #[arg(long)]
    pub players: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct Top1Args {
    #[command(flatten)]
    pub model: ModelFlags,
    /// The top-1 game's answers (the game's export, CSV or JSON).
    #[arg(long, value_name = "FILE")]
    pub answers: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ProbesArgs {
    #[command(flatten)]
    pub model: ModelFlags,
    /// The Provo folder: one next word per production (or give --references).
    #[arg(long, value_name = "DIR")]
    pub provo: Option<PathBuf>,
    /// Multi-reference JSON Lines: {"context": …, "references": [ … ]} per line.
    #[arg(long, value_name = "FILE")]
    pub references: Option<PathBuf>,
    /// A decoding strategy: ancestral, temperature=T, top-k=K, top-p=P, typical=P, or several
    /// joined by commas (repeat the flag; default: one of each family).
    #[arg(long = "strategy", value_name = "STRATEGY")]
    pub strategies: Vec<DecodingStrategy>,
    /// Contexts to probe.
    #[arg(long, default_value_t = 20)]
    pub contexts: usize,
    /// Productions per context and strategy.
    #[arg(long, default_value_t = 40)]
    pub samples: usize,
    /// Seed of the sampler and the control group.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Brill's lexicon for the part-of-speech tagger (npm `pos`).
    #[arg(long, value_name = "FILE", default_value = DEFAULT_LEXICON)]
    pub lexicon: PathBuf,
    /// The folder for the tables and figures.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct PerplexitySimArgs {
    #[command(flatten)]
    pub model: ModelFlags,
    /// A plain-text file of passages (default: the built-in passages).
    #[arg(long, value_name = "FILE")]
    pub text: Option<PathBuf>,
    /// Positions simulated.
    #[arg(long, default_value_t = 40)]
    pub positions: usize,
    /// Temperature of the simulated player.
    #[arg(long, value_name = "T", default_value_t = 0.7)]
    pub player_temperature: f64,
    /// Temperature of the generator of the other token (below 1 makes the random test model as
    /// peaked as GPT-2).
    #[arg(long, value_name = "T", default_value_t = 1.0)]
    pub generator_temperature: f64,
    /// Which token is true.
    #[arg(long, value_enum, default_value_t = Truth::Text)]
    pub truth: Truth,
    /// Rounds per position to compare, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,4,10,40")]
    pub rounds: Vec<usize>,
    /// Repetitions of each simulation.
    #[arg(long, default_value_t = 200)]
    pub repetitions: usize,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct Table1Args {
    /// The Provo folder (../shared/provo): norms and the paper's samples.
    #[arg(long, value_name = "DIR")]
    pub provo: PathBuf,
    #[command(flatten)]
    pub table1: Table1Flags,
    #[command(flatten)]
    pub models: ModelSystemFlags,
    /// Also write the per-context figures to this CSV.
    #[arg(long, value_name = "FILE")]
    pub per_context: Option<PathBuf>,
    #[command(flatten)]
    pub classes: ClassFlags,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ResultsArgs {
    /// JATOS's results export, study-server bundles, the app's downloads (repeat the flag); norms
    /// and model samples among them give contexts and the model's probabilities.
    #[command(flatten)]
    pub data: DataFlags,
    /// The folder for trials.csv, token_trials.csv, codebook.csv and exclusions.csv.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// A model folder whose surprisal of each target word fills trials.csv's surprisal columns
    /// (on the CPU); repeat the flag for several models, each with columns of its own.
    #[arg(long, value_name = "DIR")]
    pub model: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct FiguresArgs {
    #[command(flatten)]
    pub data: DataFlags,
    /// The folder for the SVG and CSV files.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub table1: Table1Flags,
    #[command(flatten)]
    pub models: ModelSystemFlags,
    /// Game exports (long format, CSV or JSON) to add as people's responses (repeat the flag).
    #[arg(long = "responses", value_name = "EXPORT")]
    pub responses: Vec<PathBuf>,
    /// Also this participant's scores and histogram.
    #[arg(long, value_name = "ID")]
    pub participant: Option<String>,
    /// The context of Figure 1, as TEXT_ID:WORD_NUM (default: the system's first).
    #[arg(long, value_name = "TEXT_ID:WORD_NUM")]
    pub context: Option<ContextKey>,
    /// The system of Figure 1 (default: the first; the participant figures take every system).
    #[arg(long, value_name = "NAME")]
    pub system: Option<String>,
    #[command(flatten)]
    pub classes: ClassFlags,
}

#[derive(Debug, Args)]
pub struct TokenLevelArgs {
    #[command(flatten)]
    pub model: ModelFlags,
    #[command(flatten)]
    pub data: DataFlags,
    /// The first N contexts only (default: all).
    #[arg(long, value_name = "N")]
    pub contexts: Option<usize>,
    #[command(flatten)]
    pub table1: Table1Flags,
    /// Also write the density figure (SVG and CSV) to this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::metrics::EceConvention;
    use crate::analysis::table1::OracleSize;
    use clap::CommandFactory;

    #[test]
    fn the_definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    /// Every command's help names every flag it accepts (the help is generated from the same
    /// definitions the parser uses, so a flag can no longer go missing from it).
    #[test]
    fn every_commands_help_lists_every_flag_it_accepts() {
        fn check(command: &mut clap::Command, path: &str) {
            let help = command.render_long_help().to_string();
            for arg in command.get_arguments() {
                if let Some(long) = arg.get_long() {
                    assert!(help.contains(&format!("--{long}")), "{path}: --{long}");
                }
            }
            for sub in command.get_subcommands_mut() {
                let name = format!("{path} {}", sub.get_name());
                check(sub, &name);
            }
        }
        let mut cli = Cli::command();
        cli.build();
        check(&mut cli, "clozelab");
        let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
        assert!(
            names.contains(&"word-dist") && names.contains(&"bench"),
            "{names:?}"
        );
    }

    #[test]
    fn flags_parse_into_what_the_commands_use() {
        let cli = Cli::try_parse_from([
            "clozelab",
            "figures",
            "--file",
            "a",
            "--file",
            "b",
            "--out",
            "o",
            "--context",
            "3:7",
            "--ece-convention",
            "paper",
            "--oracle-size",
            "10",
        ])
        .unwrap();
        let Command::Figures(args) = cli.command else {
            panic!("not figures");
        };
        assert_eq!(args.data.source.files.len(), 2);
        // A study's results among the files: whose answers to leave out.
        let Command::Figures(study) = Cli::try_parse_from([
            "clozelab",
            "figures",
            "--file",
            "norms.jsonl",
            "--file",
            "results.zip",
            "--only-complete",
            "--exclude-failed-attention",
            "--out",
            "o",
        ])
        .unwrap()
        .command
        else {
            panic!("not figures");
        };
        assert!(study.data.only_complete && study.data.exclude_failed_attention);
        assert_eq!(args.context, Some(ContextKey::new(3, 7)));
        assert_eq!(args.table1.options().ece, EceConvention::DropCertain);
        assert_eq!(args.table1.oracle_size, OracleSize::Of(10));
        for bad in [
            &[
                "clozelab", "figures", "--provo", "p", "--file", "f", "--out", "o",
            ][..],
            &[
                "clozelab",
                "figures",
                "--out",
                "o",
                "--context",
                "3-7",
                "--provo",
                "p",
            ],
            &["clozelab", "table1", "--provo", "p", "--semantic"],
            &[
                "clozelab",
                "perplexity-sim",
                "--model",
                "m",
                "--rounds",
                "1,x",
            ],
            &[
                "clozelab",
                "word-dist",
                "--model",
                "m",
                "--context",
                "c",
                "--top-k",
                "many",
            ],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
        }
        let Command::Probes(p) = Cli::try_parse_from([
            "clozelab",
            "probes",
            "--model",
            "m",
            "--out",
            "o",
            "--provo",
            "p",
            "--strategy",
            "top-p=0.9",
            "--strategy",
            "ancestral",
        ])
        .unwrap()
        .command
        else {
            panic!("not probes");
        };
        let names: Vec<String> = p.strategies.iter().map(|s| s.to_string()).collect();
        assert_eq!(names, ["top-p=0.9", "ancestral"]);
    }
}
