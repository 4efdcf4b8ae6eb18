//! A WebGPU device lost mid-session (a driver reset, the GPU reclaimed under memory pressure,
//! a laptop switching GPUs), or one whose results are wrong (NaN from a driver's built-in past
//! its range, a token drawn outside the vocabulary): the worker moves to the CPU for good, loads
//! the model (and the two-token game's second model) again there — from the browser's cache,
//! where it was downloaded — and the request that met the fault runs again, so the session goes
//! on with numbers it can trust.

use std::rc::Rc;

use super::device::{lost_gpu, lost_gpu_within};
use super::{Responder, Shared, WorkerError, load, on_gpu};
use crate::runtime::protocol::Reply;

/// How long a request whose readback failed waits to hear whether the device was lost. Its
/// `lost` promise settles after the failed readback a loss causes: within a second on an idle
/// machine, later on a busy one (one second was too short there). A readback that failed on a
/// device still alive shows its error this much later.
const READBACK_LOSS_GRACE_MS: u32 = 15_000;
/// The same for a request that failed otherwise (a loss shows mostly as a failed readback).
const OTHER_LOSS_GRACE_MS: u32 = 1_000;

/// How long to wait for a device loss after `reply`: `None` for a request that succeeded.
fn loss_grace_ms(reply: &Reply) -> Option<u32> {
    match reply {
        Reply::Failed(text) if text.contains(crate::model::READBACK_FAILED) => {
            Some(READBACK_LOSS_GRACE_MS)
        }
        Reply::Failed(_) => Some(OTHER_LOSS_GRACE_MS),
        _ => None,
    }
}

/// Why the worker leaves the GPU after `reply`, in words for the backend line; `None` while
/// the GPU is fine. A request that failed waits up to [`loss_grace_ms`] for the device's `lost`
/// promise; one whose results were wrong (NaN, a draw outside the vocabulary) leaves at once
/// (the device is there, its numbers are not).
async fn gpu_fault(reply: &Reply) -> Option<String> {
    if let Reply::Failed(text) = reply
        && let Some(at) = text.find(crate::model::UNTRUSTED_RESULTS)
    {
        // "the device's results cannot be trusted: it computed …", said of the GPU.
        let what = &text[at + crate::model::UNTRUSTED_RESULTS.len()..];
        return Some(format!("the GPU's results cannot be trusted{what}"));
    }
    let lost = match loss_grace_ms(reply) {
        Some(ms) => lost_gpu_within(ms).await,
        None => lost_gpu(),
    }?;
    Some(format!("the WebGPU device was lost ({lost})"))
}

/// `None` while the GPU is fine (or was never used); else moves everything to the CPU and says
/// whether the model could follow ([`gpu_fault`] says when).
pub(super) async fn fall_back_to_cpu(
    state: &Shared,
    responder: &Responder,
    reply: &Reply,
) -> Option<Result<(), WorkerError>> {
    if !on_gpu(state) {
        return None;
    }
    let reason = gpu_fault(reply).await?;
    let cpu = super::cpu_threads::browser_cpu_device();
    let (had_model, model_url, opponent_url) = {
        let mut s = state.borrow_mut();
        s.device = Some((cpu.clone(), Some(reason.clone())));
        let had_model = s.engine.take().is_some();
        s.scorer = None;
        s.opponent = None;
        (had_model, s.model_url.clone(), s.opponent_url.take())
    };
    responder.send(Reply::SwitchedToCpu {
        reason: reason.clone(),
    });
    let loading = |step: &str, loaded, total| {
        responder.send(Reply::Loading {
            step: format!("{step} (again, on the CPU)"),
            loaded,
            total,
        })
    };
    if had_model {
        let Some(base) = model_url else {
            return Some(Err(WorkerError::LostWithLocalModel(reason)));
        };
        match load::from_url(&base, &cpu, loading).await {
            Ok((engine, _)) => state.borrow_mut().set_engine(engine),
            Err(e) => return Some(Err(e)),
        }
    }
    if let Some(base) = opponent_url {
        // The second model is a nicety: the game goes on without it if it cannot follow.
        if let Ok((opponent, _)) = load::from_url(&base, &cpu, loading).await {
            let mut s = state.borrow_mut();
            s.opponent = Some(Rc::new(opponent));
            s.opponent_url = Some(base);
        }
    }
    Some(Ok(()))
}
