//! A WebGPU device lost mid-session (a driver reset, the GPU reclaimed under memory pressure,
//! a laptop switching GPUs): the worker moves to the CPU for good, loads the model (and the
//! two-token game's second model) again there — from the browser's cache, where it was
//! downloaded — and the request that met the loss runs again, so the session goes on.

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
pub(super) fn loss_grace_ms(reply: &Reply) -> Option<u32> {
    match reply {
        Reply::Failed(text) if text.contains(crate::model::READBACK_FAILED) => {
            Some(READBACK_LOSS_GRACE_MS)
        }
        Reply::Failed(_) => Some(OTHER_LOSS_GRACE_MS),
        _ => None,
    }
}

/// `None` while the GPU is fine (or was never used); else moves everything to the CPU and says
/// whether the model could follow. After a failed request it waits up to `grace_ms` (see
/// [`loss_grace_ms`]) for the device's `lost` promise.
pub(super) async fn fall_back_to_cpu(
    state: &Shared,
    responder: &Responder,
    grace_ms: Option<u32>,
) -> Option<Result<(), WorkerError>> {
    if !on_gpu(state) {
        return None;
    }
    let reason = match grace_ms {
        Some(ms) => lost_gpu_within(ms).await,
        None => lost_gpu(),
    }?;
    let cpu = super::cpu_threads::browser_cpu_device();
    let (had_model, model_url, opponent_url) = {
        let mut s = state.borrow_mut();
        s.device = Some((
            cpu.clone(),
            Some(format!("the WebGPU device was lost ({reason})")),
        ));
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
