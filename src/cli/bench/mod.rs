//! `clozelab bench`: [`forward`] (tokens/s per backend) and [`words`] (word distributions per
//! second), each beside Hugging Face transformers (torch on the CPU, or CUDA with
//! `CLOZELAB_HF_DEVICE=cuda`) on the same weights in the same run; [`attention_bench`] (the
//! model's attention op beside burn's own `attention`); [`speed`] (the Model page's speed check,
//! natively, beside the browser's figures); [`host`] (what the host pays per GPU dispatch, a
//! decode step of a tiny-width model beside transformers'); [`serve_bench`] (answers/s of
//! `clozelab serve` against the same requests answered without a database). Benchmarks print ratios
//! against that baseline; they are never timed tests.

use std::path::{Path, PathBuf};

use burn::tensor::Tensor;

pub mod args;
mod attention;
mod forward;
mod host;
mod serve;
mod speed;
mod words;

pub use attention::attention_bench;
pub use forward::forward;
pub use host::host;
pub use serve::serve_bench;
pub use speed::speed;
pub use words::words;

use super::error::CliError;
use crate::model::readback::read_f32;
use crate::model::{Transformer, TransformerConfig, loader::load_with_config};
use crate::runtime::backend::{BackendKind, device_for};

fn median(xs: Vec<f64>) -> f64 {
    crate::runtime::speed::median(xs).unwrap_or(f64::NAN)
}

/// Ends a timed region: reading a tensor back forces the device to finish its queue.
fn sync(t: Tensor<2>) -> Result<(), CliError> {
    pollster::block_on(read_f32(t.argmax(1).float()))
        .map(|_| ())
        .map_err(CliError::from)
}

/// CPU seconds this process has used, all threads together (Linux; `None` elsewhere). Beside
/// the wall time of a GPU run it says whether the host's side (building and submitting the
/// kernels) or the device sets the pace: a ratio near one thread's worth is the host.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is parenthesised and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime (fields 14 and 15 of proc(5)), in clock ticks of 1/100 s on Linux.
    let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
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

/// A temporary Hugging Face folder (`config.json`, `model.safetensors`) of the weights a
/// benchmark measures, for its transformers baseline to load; the caller removes it.
fn baseline_folder(
    tag: &str,
    config: &TransformerConfig,
    weights: &[u8],
) -> Result<PathBuf, CliError> {
    let dir = std::env::temp_dir().join(format!("clozelab-bench-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(CliError::io("create", &dir))?;
    std::fs::write(dir.join("config.json"), config.to_hf_json())
        .map_err(CliError::io("write", dir.join("config.json")))?;
    std::fs::write(dir.join("model.safetensors"), weights)
        .map_err(CliError::io("write", dir.join("model.safetensors")))?;
    Ok(dir)
}

/// The model on `kind`'s device with its adapter's name, or `None` (said on stderr) when that
/// backend is unavailable here.
fn model_on(
    kind: BackendKind,
    config: &TransformerConfig,
    weights: &[u8],
) -> Result<Option<(Transformer, String)>, CliError> {
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

/// Writes a benchmark's JSON report, creating its folder.
fn write_report(out: &Path, json: &serde_json::Value) -> Result<(), CliError> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(CliError::io("create", parent))?;
    }
    let text = serde_json::to_string_pretty(json).expect("a JSON value always serialises");
    std::fs::write(out, text).map_err(CliError::io("write", out))
}
