//! The speed check: every operation timed by the clock handed in, progress after each, and a
//! cancel honoured.

use std::cell::Cell;

use clozelab::estimators::progress::{FnMonitor, Progress};
use clozelab::runtime::backend::cpu_device;
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
