//! `clozelab quantize`: a model written as a GGUF file with its matrices in a smaller type,
//! read back, and compared with the original over a text (by default the app's built-in
//! passages) so that the researcher sees what the smaller download costs before using it.

use super::commands::{QuantizeArgs, QuantizeTo};
use super::error::CliError;
use crate::model::gguf::GgmlType;
use crate::model::load_transformer;
use crate::runtime::backend::device_for;
use crate::runtime::gguf_export::gguf_bytes;
use crate::runtime::modeldir::read_model_dir;
use crate::runtime::quantization_cost::quantization_cost;
use crate::text::tokenizer::ContextStart;

pub fn quantize(args: &QuantizeArgs) -> Result<(), CliError> {
    let source = &args.model;
    let files = read_model_dir(source)?;
    let matrices = match args.to {
        QuantizeTo::Q8_0 => GgmlType::Q8_0,
        QuantizeTo::F16 => GgmlType::F16,
    };
    let name = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bytes = gguf_bytes(
        &name,
        &files.config_json,
        &files.weights,
        &files.tokenizer,
        matrices,
    )?;
    std::fs::write(&args.out, &bytes).map_err(CliError::io("write", args.out.clone()))?;
    // The file as written, read back as any user of it would read it.
    let written = read_model_dir(&args.out)?;
    let compute = device_for(args.backend)?;
    let (config, original) = load_transformer(&files.config_json, &files.weights, &compute.device)?;
    let (_, quantized) = load_transformer(&written.config_json, &written.weights, &compute.device)?;
    let texts: Vec<String> = match &args.text {
        Some(text) => vec![text.clone()],
        None => crate::game::design::passages::built_in_passages()
            .into_iter()
            .map(|p| p.text)
            .collect(),
    };
    let mut ids = Vec::with_capacity(texts.len());
    for text in &texts {
        let mut row = files
            .tokenizer
            .encode_context_from(text, ContextStart::BeginOfText)?;
        row.truncate(config.n_positions);
        ids.push(row);
    }
    let cost = pollster::block_on(quantization_cost(&original, &quantized, &ids))?
        .ok_or_else(|| CliError::usage("the text has fewer than two tokens: nothing to compare"))?;
    let (before, after) = (files.weights.len(), bytes.len());
    if args.json {
        let json = serde_json::json!({
            "out": args.out, "type": matrices.name(), "bytes_before": before,
            "bytes_after": after, "texts": texts.len(), "cost": cost,
        });
        println!("{json}");
    } else {
        println!(
            "wrote {} ({}: {:.1} MB, from {:.1} MB)",
            args.out.display(),
            matrices.name(),
            after as f64 / 1e6,
            before as f64 / 1e6
        );
        println!(
            "against the original over {} positions of {} text(s): next-token TVD mean {:.2e}, \
             worst {:.2e}; |Δ surprisal| mean {:.2e} bits, worst {:.2e} bits",
            cost.positions,
            texts.len(),
            cost.mean_tvd,
            cost.worst_tvd,
            cost.mean_abs_surprisal_bits,
            cost.worst_abs_surprisal_bits
        );
    }
    Ok(())
}
