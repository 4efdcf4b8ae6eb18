//! The speed check: every operation timed by the clock handed in, progress after each, and a
//! cancel honoured.

use std::cell::Cell;

use clozelab::estimators::progress::{FnMonitor, Progress};
use clozelab::runtime::backend::cpu_device;
use clozelab::runtime::decode_steps::{DecodeStepsSetup, time_decode_steps};
use clozelab::runtime::engine::Engine;
use clozelab::runtime::modeldir::read_model_dir;
use clozelab::runtime::speed::{SpeedError, SpeedSetup, measure_speed};

use crate::common;

fn engine() -> Engine {
    let files = read_model_dir(common::test_model_dir()).unwrap();
    Engine::with_tokenizer(
        &files.config_json,
        &files.weights,
        files.tokenizer,
        &cpu_device().device,
    )
    .unwrap()
}

#[test]
fn measures_every_operation_by_the_clock_given() {
    let engine = engine();
    // A clock that advances 1 ms per reading: a figure is a count of readings, so each one
    // shows which readings it spans.
    let readings = Cell::new(0u32);
    let clock = || {
        readings.set(readings.get() + 1);
        f64::from(readings.get()) * 1e-3
    };
    let mut reports = Vec::new();
    let mut monitor = FnMonitor {
        clock,
        on_progress: |p: &Progress| {
            reports.push((p.contexts_done, p.contexts_total));
            true
        },
    };
    let setup = SpeedSetup::new(2, 20, 7).unwrap();
    let report = pollster::block_on(measure_speed(
        &engine.model,
        &engine.tokenizer,
        &setup,
        false,
        &mut monitor,
    ))
    .unwrap();
    // Three operations in each of three rounds (one untimed), reported in order; the word
    // distribution's own reports (its tree levels) repeat the step it is in.
    reports.dedup();
    assert_eq!(reports, (1..=9).map(|i| (i, 9)).collect::<Vec<_>>());
    // A prefill spans exactly its start and end readings.
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(
        report.prefill_ms.iter().all(|&ms| close(ms, 1.0)),
        "{report:?}"
    );
    // Eight decode steps between two readings: an eighth of a millisecond each.
    assert!(close(report.decode_step_ms, 1.0 / 8.0), "{report:?}");
    // The sampler reads the clock while it walks the tree: more than one reading apart.
    assert!(report.word_distribution_ms > 1.0);
    assert_eq!((report.word_samples, report.rounds), (20, 2));
}

#[test]
fn stops_when_the_monitor_cancels() {
    let engine = engine();
    let mut monitor = FnMonitor {
        clock: || 0.0,
        on_progress: |p: &Progress| p.contexts_done < 2,
    };
    let setup = SpeedSetup::new(3, 10, 1).unwrap();
    let result = pollster::block_on(measure_speed(
        &engine.model,
        &engine.tokenizer,
        &setup,
        false,
        &mut monitor,
    ));
    assert_eq!(result, Err(SpeedError::Cancelled));
}

#[test]
fn decode_steps_are_timed_one_by_one_by_the_clock_given() {
    let engine = engine();
    let readings = Cell::new(0u32);
    let monitor = FnMonitor {
        clock: || {
            readings.set(readings.get() + 1);
            f64::from(readings.get()) * 1e-3
        },
        on_progress: |_: &Progress| true,
    };
    let setup = DecodeStepsSetup::new(4, 5).unwrap();
    let report = pollster::block_on(time_decode_steps(&engine.model, setup, &monitor)).unwrap();
    // Two readings a step and none for the prefill: each step spans exactly one millisecond.
    assert_eq!(report.step_ms.len(), 5);
    assert!(
        report.step_ms.iter().all(|ms| (ms - 1.0).abs() < 1e-9),
        "{report:?}"
    );
    assert_eq!(readings.get(), 10);
}

/// `bench host` counts a decode step's kernels from cubecl's log and splits the CPU time by
/// thread: on wgpu (lavapipe here) a step of a 2-block model launches nine kernels a block.
#[test]
fn bench_host_counts_each_steps_kernels_and_the_threads_cpu() {
    let out = std::env::temp_dir().join(format!("clozelab-bench-host-{}.json", std::process::id()));
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args([
            "bench", "host", "--layers", "2", "--dim", "64", "--heads", "2",
        ])
        .args(["--steps", "3", "--no-python", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    std::fs::remove_file(&out).ok();
    let result = &report["result"];
    let per_step = result["dispatches_per_step"].as_f64().unwrap();
    // Per block: four products, the first block's norm, the GELU's epilogue, two epilogues
    // with the norm after them, the cache write and the attention; before them the embedding,
    // after them the head and the readback's few. With the epilogues and the norms apart (two
    // more kernels a block), the count is off.
    assert!((20.0..=24.0).contains(&per_step), "{result}");
    let wall = result["wall_us_per_dispatch"].as_f64().unwrap();
    let step = result["step_ms"].as_f64().unwrap();
    assert!(
        (wall * per_step / 1e3 - step).abs() < 1e-6 * step.max(1.0),
        "{result}"
    );
    let roles: Vec<&str> = result["cpu_us_per_dispatch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["calling", "device_service", "other"]);
    assert!(
        result["cpu_us_per_dispatch"][0][1].as_f64().unwrap() > 0.0,
        "{result}"
    );
}
