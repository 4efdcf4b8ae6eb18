//! `clozelab bench forward`: tokens/s of random weights of a family's model (GPT-2 small,
//! Pythia-160M's shape, SmolLM2-135M's) on each backend, beside Hugging Face transformers on the
//! same weights in the same run.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::args::BenchForwardArgs;
use super::{
    baseline_folder, median, model_on, process_cpu_seconds, script_path, sync, write_report,
};
use crate::cli::error::CliError;
use crate::cli::flags::TestFamily;
use crate::model::testmodel::{
    generate_weights, test_gpt_neox_config, test_llama_config, to_safetensors,
};
use crate::model::{Precision, Transformer, TransformerConfig};
use crate::runtime::speed::prompt_ids;

/// One backend's throughput, tokens per second.
#[derive(Debug, Serialize)]
pub struct ForwardFigures {
    pub system: String,
    pub prefill_64_tokens_per_s: f64,
    pub decode_batch1_tokens_per_s: f64,
    /// Decode at batch 1 with the step recorded once and replayed (model::replayed_steps), where
    /// the backend and family record steps.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub decode_batch1_replayed_tokens_per_s: Option<f64>,
    pub decode_batch64_tokens_per_s: f64,
    pub decode_batch256_tokens_per_s: f64,
    /// CPU seconds the process used per wall-clock second while decoding at batch 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_batch1_cpu_per_wall: Option<f64>,
}

/// Workload sizes (the `--quick` variant keeps a smoke run short).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Workload {
    pub prefill: usize,
    pub decode_steps_batch1: usize,
    /// The batch sizes decoded from one shared prefix (the sampler's rows).
    pub batches: [usize; 2],
    pub decode_steps_batched: usize,
    pub repeats: usize,
}

/// What [`measure`] gives.
struct Measured {
    /// Tokens/s for prefill, decode at batch 1 and at each of `w.batches`.
    tokens_per_s: [f64; 4],
    /// The same at batch 1 with replayed steps, where the model records them.
    replayed_tokens_per_s: Option<f64>,
    /// CPU seconds used per wall second while decoding at batch 1 (see [`process_cpu_seconds`]).
    cpu_per_wall: Option<f64>,
}

/// Prefill, decode at batch 1 (one by one and replayed) and at each of `w.batches`.
fn measure(model: &Transformer, w: Workload) -> Result<Measured, CliError> {
    let ids = prompt_ids(w.prefill);
    let mut prefill = Vec::new();
    let mut decode1 = Vec::new();
    let mut replayed = Vec::new();
    let mut decode_batched = [Vec::new(), Vec::new()];
    let mut cpu_per_wall = Vec::new();
    // One untimed round first: shader compilation and autotuning are not throughput.
    for round in 0..=w.repeats {
        let start = Instant::now();
        let mut cache = model.new_cache(None, 1, w.prefill + w.decode_steps_batch1);
        let hidden =
            model.forward_cached(model.token_tensor(std::slice::from_ref(&ids))?, &mut cache)?;
        sync(model.last_logits(hidden)?)?;
        let t_prefill = start.elapsed().as_secs_f64();

        let start = Instant::now();
        let cpu_start = process_cpu_seconds();
        for step in 0..w.decode_steps_batch1 {
            let token = model.token_tensor(&[vec![1000 + step as u32]])?;
            let hidden = model.forward_cached(token, &mut cache)?;
            sync(model.last_logits(hidden)?)?;
        }
        let t_decode1 = start.elapsed().as_secs_f64();
        let cpu_decode1 = process_cpu_seconds().zip(cpu_start).map(|(end, s)| end - s);
        let t_replayed = decode_replayed(model, &ids, w.decode_steps_batch1)?;
        let mut t_batched = [0.0; 2];
        for (t, &batch) in t_batched.iter_mut().zip(&w.batches) {
            *t = decode_from_prefix(model, &ids, batch, w.decode_steps_batched)?;
        }
        if round > 0 {
            prefill.push(w.prefill as f64 / t_prefill);
            decode1.push(w.decode_steps_batch1 as f64 / t_decode1);
            replayed.extend(t_replayed.map(|t| w.decode_steps_batch1 as f64 / t));
            cpu_per_wall.extend(cpu_decode1.map(|cpu| cpu / t_decode1));
            for ((figures, t), batch) in decode_batched.iter_mut().zip(t_batched).zip(w.batches) {
                figures.push((batch * w.decode_steps_batched) as f64 / t);
            }
        }
    }
    let [b0, b1] = decode_batched;
    Ok(Measured {
        tokens_per_s: [median(prefill), median(decode1), median(b0), median(b1)],
        replayed_tokens_per_s: (!replayed.is_empty()).then(|| median(replayed)),
        cpu_per_wall: (!cpu_per_wall.is_empty()).then(|| median(cpu_per_wall)),
    })
}

/// Seconds to decode `steps` tokens at batch 1 after `ids` (prefilled, and the step recorded,
/// untimed) by replaying one recorded step, as the batch-1 decode above; `None` where the model
/// does not record steps.
fn decode_replayed(
    model: &Transformer,
    ids: &[u32],
    steps: usize,
) -> Result<Option<f64>, CliError> {
    let mut cache = model.new_cache(None, 1, ids.len() + steps);
    model.forward_cached(model.token_tensor(&[ids.to_vec()])?, &mut cache)?;
    let mut replayed = pollster::block_on(model.replayed_steps(cache))?;
    if replayed.eager_reason().is_some() {
        return Ok(None);
    }
    let start = Instant::now();
    for step in 0..steps {
        sync(replayed.step(&[1000 + step as u32])?)?;
    }
    Ok(Some(start.elapsed().as_secs_f64()))
}

/// Seconds to decode `steps` tokens in `batch` rows that share the prefix `ids` (prefilled
/// once, untimed), as the word sampler does.
fn decode_from_prefix(
    model: &Transformer,
    ids: &[u32],
    batch: usize,
    steps: usize,
) -> Result<f64, CliError> {
    let mut prefix_cache = model.new_cache(None, 1, ids.len());
    let hidden = model.forward_cached(model.token_tensor(&[ids.to_vec()])?, &mut prefix_cache)?;
    sync(model.last_logits(hidden)?)?;
    let prefix = prefix_cache.into_shared_prefix()?;
    let start = Instant::now();
    let mut cache = model.new_cache(Some(prefix), batch, steps);
    for step in 0..steps {
        let rows: Vec<Vec<u32>> = (0..batch)
            .map(|b| vec![(500 + b * 31 + step) as u32])
            .collect();
        let hidden = model.forward_cached(model.token_tensor(&rows)?, &mut cache)?;
        sync(model.last_logits(hidden)?)?;
    }
    Ok(start.elapsed().as_secs_f64())
}

pub fn forward(args: &BenchForwardArgs) -> Result<(), CliError> {
    // (blocks, width, heads) of the family's model: GPT-2 small, Pythia-160M, SmolLM2-135M.
    let [layers, dim, heads] = match args.family {
        TestFamily::Gpt2 | TestFamily::GptNeox => [12, 768, 12],
        TestFamily::Llama => [30, 576, 9],
    };
    let layers = args.layers.unwrap_or(layers);
    let dim = args.dim.unwrap_or(dim);
    let heads = args.heads.unwrap_or(heads);
    let config = match args.family {
        TestFamily::Gpt2 => {
            let small = TransformerConfig::gpt2_small();
            TransformerConfig::new(
                layers,
                heads,
                dim,
                small.vocab_size,
                small.n_positions,
                4 * dim,
            )
        }
        TestFamily::GptNeox => test_gpt_neox_config(layers, dim, heads),
        TestFamily::Llama => {
            let kv_heads = if heads.is_multiple_of(3) {
                heads / 3
            } else {
                heads
            };
            test_llama_config(layers, dim, heads, kv_heads)
        }
    };
    let family = config.family.name();
    let quick = args.quick;
    let w = Workload {
        prefill: 64,
        decode_steps_batch1: if quick { 4 } else { 32 },
        batches: [64, 256],
        decode_steps_batched: if quick { 1 } else { 8 },
        repeats: if quick { 1 } else { 3 },
    };
    let backends = args.backend.kinds();
    eprintln!(
        "generating {:.0}M random {family} parameters ({layers} layers, {dim} dims)…",
        config.num_params() as f64 / 1e6
    );
    let weights = to_safetensors(&generate_weights(&config, 1))?;
    let mut results = Vec::new();
    for kind in backends {
        let Some((model, adapter)) = model_on(kind, &config, &weights)? else {
            continue;
        };
        let mut record = |system: String, model: &Transformer| -> Result<(), CliError> {
            eprintln!("measuring {system}…");
            let measured = measure(model, w)?;
            let [p, d1, d64, d256] = measured.tokens_per_s;
            results.push(ForwardFigures {
                system,
                prefill_64_tokens_per_s: p,
                decode_batch1_tokens_per_s: d1,
                decode_batch1_replayed_tokens_per_s: measured.replayed_tokens_per_s,
                decode_batch64_tokens_per_s: d64,
                decode_batch256_tokens_per_s: d256,
                decode_batch1_cpu_per_wall: measured.cpu_per_wall,
            });
            Ok(())
        };
        record(format!("burn {} ({adapter})", kind.name()), &model)?;
        // Where the adapter offers f16, the blocks' weights in f16 are measured too.
        if Precision::f16_offered(&model.device()) {
            let model = model.with_precision(Precision::F16)?;
            record(format!("burn {} f16 ({adapter})", kind.name()), &model)?;
        }
    }
    let mut baseline = None;
    if !args.no_python {
        let dir = baseline_folder("forward", &config, &weights)?;
        eprintln!("measuring Hugging Face transformers (torch) on the same weights…");
        match python_baseline(&dir, w) {
            Ok(f) => baseline = Some(f),
            Err(e) => eprintln!("no transformers baseline: {e}"),
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    println!(
        "forward throughput, tokens/s ({family}, {layers} layers, {dim} dims, random weights; median of {} runs)",
        w.repeats
    );
    println!(
        "{:<58} {:>16} {:>16} {:>16} {:>16}",
        "system",
        "prefill 64",
        "decode b=1",
        format!("decode b={}", w.batches[0]),
        format!("decode b={}", w.batches[1])
    );
    let cell = |x: f64, base: Option<f64>| {
        let ratio = base
            .map(|b| format!(" ({:.2}×)", x / b))
            .unwrap_or_default();
        format!("{x:.1}{ratio}")
    };
    let b = baseline.as_ref();
    for f in results.iter().chain(baseline.iter()) {
        println!(
            "{:<58} {:>16} {:>16} {:>16} {:>16}",
            f.system,
            cell(
                f.prefill_64_tokens_per_s,
                b.map(|b| b.prefill_64_tokens_per_s)
            ),
            cell(
                f.decode_batch1_tokens_per_s,
                b.map(|b| b.decode_batch1_tokens_per_s)
            ),
            cell(
                f.decode_batch64_tokens_per_s,
                b.map(|b| b.decode_batch64_tokens_per_s)
            ),
            cell(
                f.decode_batch256_tokens_per_s,
                b.map(|b| b.decode_batch256_tokens_per_s)
            ),
        );
    }
    if baseline.is_some() {
        println!("(ratios: against transformers measured in this run)");
    }
    for f in &results {
        if let Some(replayed) = f.decode_batch1_replayed_tokens_per_s {
            println!(
                "{}: decode b=1 with the step recorded once and replayed: {}",
                f.system,
                cell(replayed, b.map(|b| b.decode_batch1_tokens_per_s))
            );
        }
    }
    for f in &results {
        if let Some(r) = f.decode_batch1_cpu_per_wall {
            println!(
                "{}: while decoding at batch 1 the process used {r:.2} CPU-seconds per second",
                f.system
            );
        }
    }
    let out = &args.out;
    let json = serde_json::json!({"workload": w,
        "config": {"family": family, "layers": layers, "dim": dim, "heads": heads},
        "results": results, "baseline": baseline});
    write_report(out, &json)?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

pub(super) fn python_baseline(dir: &Path, w: Workload) -> Result<ForwardFigures, CliError> {
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
        decode_batch1_replayed_tokens_per_s: None,
        decode_batch64_tokens_per_s: get("decode_batch64")?,
        decode_batch256_tokens_per_s: get("decode_batch256")?,
        decode_batch1_cpu_per_wall: None,
    })
}
