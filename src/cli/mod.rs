//! The native `clozelab` command line: batch runs and checks for researchers. The commands and
//! their flags are defined once, in [`commands`]; each command lives in its own file.

pub mod allocator;
pub mod bench;
pub mod classes;
pub mod commands;
pub mod error;
pub mod figures;
pub mod flags;
pub mod job_parts;
pub mod model_systems;
pub mod norming;
pub mod norming_args;
pub mod package;
pub mod predictors;
pub mod probes;
pub mod quantize;
pub mod results;
pub mod samples;
pub mod serve;
pub mod single_context;
pub mod table1;
pub mod test_model;
pub mod tokens;

pub use error::CliError;
pub use test_model::{TestWeights, write_test_model};

use clap::Parser;
use clap::error::ErrorKind;

use crate::model::Precision;
use crate::runtime::backend::{BackendKind, device_for};
use crate::runtime::engine::Engine;
use crate::runtime::modeldir::read_model_dir;
use commands::{BenchCommand, Cli, Command};
use flags::ModelFlags;

/// Runs the CLI; returns the process exit code: 0, or 2 for bad arguments and failures.
pub fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    match run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("clozelab: {message}");
            std::process::ExitCode::from(2)
        }
    }
}

/// Help and version on stdout (success); anything else as `clozelab: …` on stderr, like every
/// other failure.
fn usage_error(e: &clap::Error) -> std::process::ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            print!("{}", e.render());
            std::process::ExitCode::SUCCESS
        }
        _ => {
            let text = e.render().to_string();
            eprint!(
                "clozelab: {}",
                text.strip_prefix("error: ").unwrap_or(&text)
            );
            std::process::ExitCode::from(2)
        }
    }
}

/// Runs one parsed command.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::MakeTestModel(args) => test_model::make_test_model(&args),
        Command::NextToken(args) => single_context::next_token(&args),
        Command::WordDist(args) => single_context::word_dist(&args),
        Command::WordProb(args) => single_context::word_prob(&args),
        Command::Surprisal(args) => single_context::surprisal(&args),
        Command::Perplexity(args) => tokens::perplexity(&args),
        Command::Top1(args) => tokens::top1(&args),
        Command::JatosPackage(args) => package::jatos_package(&args),
        Command::SitePackage(args) => package::site_package(&args),
        Command::Serve(args) => serve::serve(&args),
        Command::Export(args) => serve::export(&args),
        Command::Predictors(args) => predictors::predictors(&args),
        Command::Samples(args) => samples::samples(&args),
        Command::Merge(args) => job_parts::merge(&args),
        Command::Probes(args) => probes::probes(&args),
        Command::Quantize(args) => quantize::quantize(&args),
        Command::PerplexitySim(args) => tokens::perplexity_sim(&args),
        Command::Table1(args) => table1::table1(&args),
        Command::Figures(args) => figures::figures(&args),
        Command::Results(args) => results::results(&args),
        Command::TokenLevel(args) => figures::token_level(&args),
        Command::NormingSim(args) => norming::norming_sim(&args),
        Command::NormingState(args) => norming::norming_state(&args),
        Command::NormingPrior(args) => norming::norming_prior(&args),
        Command::Bench(BenchCommand::Forward(args)) => bench::forward(&args),
        Command::Bench(BenchCommand::Words(args)) => bench::words(&args),
        Command::Bench(BenchCommand::Attention(args)) => bench::attention_bench(&args),
        Command::Bench(BenchCommand::Speed(args)) => bench::speed(&args),
        Command::Bench(BenchCommand::Host(args)) => bench::host(&args),
        Command::Bench(BenchCommand::Serve(args)) => bench::serve_bench(&args),
    }
}

/// The model folder of `--model` on the `--backend`, and the adapter's name.
pub(crate) fn load_engine(flags: &ModelFlags) -> Result<(Engine, String), CliError> {
    load_engine_from(&flags.model, flags.backend, flags.precision)
}

/// The model folder `dir` on `backend` with its blocks' weights in `precision`, and the
/// adapter's name (with the precision when it is f16).
pub(crate) fn load_engine_from(
    dir: &std::path::Path,
    backend: BackendKind,
    precision: Precision,
) -> Result<(Engine, String), CliError> {
    engine_from_files(dir, read_model_dir(dir)?, backend, precision)
}

/// [`load_engine_from`] of a model's files already read from `dir`.
pub(crate) fn engine_from_files(
    dir: &std::path::Path,
    files: crate::runtime::modeldir::ModelFiles,
    backend: BackendKind,
    precision: Precision,
) -> Result<(Engine, String), CliError> {
    let compute = device_for(backend)?;
    let engine = Engine::with_tokenizer(
        &files.config_json,
        &files.weights,
        files.tokenizer,
        &compute.device,
    )?
    .with_precision(precision)?;
    if engine.random_test_model {
        eprintln!(
            "note: {} holds the random test model; its predictions are noise",
            dir.display()
        );
    }
    let adapter = engine.model.precision().label(&compute.adapter);
    Ok((engine, adapter))
}
