//! `clozelab bench speed`: the Model page's speed check (`runtime::speed`) run natively, so that
//! the browser's figures (the page, or the worker's wasm on Dawn: `scripts/dawn_worker.mjs`)
//! stand beside native wgpu's on the same machine, same work and same median.

use std::time::Instant;

use super::args::BenchSpeedArgs;
use crate::estimators::progress::FnMonitor;
use crate::runtime::backend::BackendKind;
use crate::runtime::speed::{SpeedSetup, measure_speed};

pub fn speed(args: &BenchSpeedArgs) -> Result<(), crate::cli::error::CliError> {
    let setup = SpeedSetup::new(args.rounds, args.samples, 1)?;
    let (engine, adapter) = crate::cli::load_engine(&args.model)?;
    let start = Instant::now();
    let mut monitor = FnMonitor {
        clock: || start.elapsed().as_secs_f64(),
        on_progress: |_: &_| true,
    };
    // The word distribution pads its batches as the game's feedback does on this device.
    let buckets = args.model.backend == BackendKind::Wgpu;
    let report = pollster::block_on(measure_speed(
        &engine.model,
        &engine.tokenizer,
        &setup,
        buckets,
        &mut monitor,
    ))?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&report).expect("plain data serialises")
        );
    } else {
        println!(
            "{adapter}: prefill 16 {:.1} ms, prefill 64 {:.1} ms, decode step {:.2} ms, \
             {}-sample word distribution {:.0} ms (median of {})",
            report.prefill_ms[0],
            report.prefill_ms[1],
            report.decode_step_ms,
            report.word_samples,
            report.word_distribution_ms,
            report.rounds
        );
    }
    Ok(())
}
