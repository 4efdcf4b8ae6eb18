//! A WebGPU device lost mid-session (a driver reset, the GPU reclaimed under memory pressure,
//! a laptop switching GPUs): the worker moves to the CPU for good, loads the model (and the
//! two-token game's second model) again there — from the browser's cache, where it was
//! downloaded — and the request that met the loss runs again, so the session goes on.

use std::rc::Rc;

use super::{Responder, Shared, WorkerError, device::lost_gpu, load};
use crate::runtime::backend::{BackendKind, cpu_device};
use crate::runtime::protocol::Reply;

/// `None` while the GPU is fine (or was never used); else moves everything to the CPU and says
/// whether the model could follow. After a failed request (`failed`) it waits up to a second
/// for the device's `lost` promise, which settles after the failed readback it causes.
pub(super) async fn fall_back_to_cpu(
    state: &Shared,
    responder: &Responder,
    failed: bool,
) -> Option<Result<(), WorkerError>> {
    let on_gpu = state
        .borrow()
        .device
        .as_ref()
        .is_some_and(|(d, _)| d.kind == BackendKind::Wgpu);
    if !on_gpu {
        return None;
    }
    if failed {
        for _ in 0..20 {
            if lost_gpu().is_some() {
                break;
            }
            gloo_timers::future::TimeoutFuture::new(50).await;
        }
    }
    let reason = lost_gpu()?;
    let cpu = cpu_device();
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
