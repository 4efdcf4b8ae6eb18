//! The speed check: the loaded model timed on the worker's device, with progress per operation;
//! and decode steps timed one by one, for the host-cost benchmark.

use super::monitor::{PageMonitor, monotonic_now_s};
use super::{Responder, Shared, WorkerError, engine, on_gpu};
use crate::estimators::progress::FnMonitor;
use crate::runtime::decode_steps::{DecodeStepsSetup, time_decode_steps};
use crate::runtime::protocol::Reply;
use crate::runtime::speed::{SpeedError, SpeedSetup, measure_speed};

pub(super) async fn measure(
    state: &Shared,
    responder: &Responder,
    setup: &SpeedSetup,
) -> Result<Reply, WorkerError> {
    let engine = engine(state)?;
    let mut monitor = PageMonitor::new(state, responder);
    // The word distribution pads its batches exactly where the game's feedback does.
    let buckets = on_gpu(state);
    match measure_speed(
        &engine.model,
        &engine.tokenizer,
        setup,
        buckets,
        &mut monitor,
    )
    .await
    {
        Ok(report) => Ok(Reply::Speed(report)),
        Err(SpeedError::Cancelled) => Ok(Reply::Cancelled),
        Err(e) => Err(e.into()),
    }
}

pub(super) async fn decode_steps(
    state: &Shared,
    setup: DecodeStepsSetup,
) -> Result<Reply, WorkerError> {
    let engine = engine(state)?;
    let clock = FnMonitor {
        clock: monotonic_now_s,
        on_progress: |_: &_| true,
    };
    let report = time_decode_steps(&engine.model, setup, &clock).await?;
    Ok(Reply::DecodeSteps(report))
}
