//! `clozelab probes`: production-variability probes (Giulianelli et al. 2023) for decoding
//! strategies, against the Provo norms (one word per production) or multi-reference data (JSON
//! Lines `{"context": …, "references": [ … ]}`), written as CSV and SVG figures.

use std::path::Path;

use super::classes::tagger;
use super::commands::ProbesArgs;
use super::error::CliError;
use crate::analysis::variability::StrategySummary;
use crate::estimators::decoding::DecodingStrategy;
use crate::runtime::productions::{
    DEFAULT_STRATEGIES, ProbeRunError, provo_items, reference_items, run_probes,
};

pub fn probes(args: &ProbesArgs) -> Result<(), CliError> {
    let out = &args.out;
    let (contexts, samples, seed) = (args.contexts, args.samples, args.seed);
    let items = match (&args.provo, &args.references) {
        (Some(dir), None) => provo_items(&crate::data::provo::read_norms(dir)?, contexts),
        (None, Some(file)) => {
            let text = std::fs::read_to_string(file).map_err(CliError::io("read", file))?;
            reference_items(&text, contexts)
                .map_err(|e| CliError::usage(format!("{}: {e}", file.display())))?
        }
        _ => {
            return Err(CliError::usage(
                "give either --provo DIR or --references FILE.jsonl",
            ));
        }
    };
    let strategies = if args.strategies.is_empty() {
        DEFAULT_STRATEGIES
            .iter()
            .map(|s| s.parse::<DecodingStrategy>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(ProbeRunError::from)?
    } else {
        args.strategies.clone()
    };
    let tagger = tagger(&args.lexicon)?;
    let (engine, _) = super::load_engine(&args.model)?;
    std::fs::create_dir_all(out).map_err(CliError::io("create", out))?;
    let started = std::time::Instant::now();
    let per_strategy = items.len();
    let report = pollster::block_on(run_probes(
        &engine,
        &tagger,
        &items,
        &strategies,
        samples,
        seed,
        |done, total| {
            if done % per_strategy == 0 {
                eprintln!(
                    "{done} of {total} (strategy × context) done ({:.0} s)",
                    started.elapsed().as_secs_f64()
                );
            }
            true
        },
    ))?
    .ok_or_else(|| CliError::usage("stopped"))?;
    write(out, "probes_per_context.csv", &report.per_context_csv())?;
    for figure in &report.figures {
        write(out, &format!("{}.csv", figure.id), &figure.csv)?;
        let (w, h) = figure.size();
        write(out, &format!("{}.svg", figure.id), &figure.to_svg(w, h)?)?;
    }
    print!("{}", format_summary(&report.summary));
    eprintln!(
        "{} contexts × {} strategies, {samples} samples each; {:.0} s; written to {}",
        items.len(),
        strategies.len(),
        started.elapsed().as_secs_f64(),
        out.display()
    );
    if engine.random_test_model {
        eprintln!(
            "note: the random test model's samples are noise: these figures test the pipeline, not GPT-2"
        );
    }
    Ok(())
}

fn write(dir: &Path, name: &str, text: &str) -> Result<(), CliError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(CliError::io("write", &path))
}

/// The summary as text: one line per strategy and probe.
pub fn format_summary(summary: &[StrategySummary]) -> String {
    let mut out = format!(
        "{:<16} {:<20} {:>5} {:>10} {:>8} {:>11}\n",
        "strategy", "probe", "n", "μM − μH", "W1(C,H)", "control W1"
    );
    for s in summary {
        out.push_str(&format!(
            "{:<16} {:<20} {:>5} {:>10.3} {:>8.3} {:>11}\n",
            s.strategy,
            s.probe.label(),
            s.contexts,
            s.mean_difference,
            s.w1,
            s.control_w1.map_or("—".into(), |v| format!("{v:.3}"))
        ));
    }
    out
}
