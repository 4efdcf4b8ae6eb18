//! How many threads the browser's CPU backend runs on, said in its adapter line, and the
//! loaded model's weights shared out among that many helpers ([`super::helper_pool`]).
//!
//! Shared memory (`SharedArrayBuffer`) exists only where the page is cross-origin isolated
//! (served with COOP `same-origin` and COEP `require-corp` or `credentialless`); elsewhere the
//! worker computes on one thread and its backend line says why.

use std::sync::Arc;

use wasm_bindgen::{JsCast, JsValue};

use super::helper_pool::WorkerHelpers;
use super::shared_job::MAX_THREADS;
use crate::model::ops::product_helpers::ProductHelpers;
use crate::runtime::backend::{ComputeDevice, cpu_device};
use crate::runtime::engine::Engine;

/// Why the CPU backend runs on one thread.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OneThread {
    #[error("the page is not cross-origin isolated, so it cannot share memory with helpers")]
    NotIsolated,
    #[error("this device reports one core")]
    OneCore,
}

/// How many helpers this worker may start: one fewer than the cores the browser reports (at
/// most [`MAX_THREADS`] threads in all), or why none.
pub fn helpers_possible() -> Result<usize, OneThread> {
    let global = js_sys::global();
    let isolated = js_sys::Reflect::get(&global, &JsValue::from_str("crossOriginIsolated"))
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if !isolated {
        return Err(OneThread::NotIsolated);
    }
    let cores = global
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .map(|scope| scope.navigator().hardware_concurrency())
        .unwrap_or(1.0) as usize;
    match cores.min(MAX_THREADS) {
        0 | 1 => Err(OneThread::OneCore),
        threads => Ok(threads - 1),
    }
}

/// The CPU backend as the browser's worker runs it, its adapter line saying on how many
/// threads and, on one, why.
pub fn browser_cpu_device() -> ComputeDevice {
    let mut cpu = cpu_device();
    cpu.adapter = match helpers_possible() {
        Ok(helpers) => format!("{}, {} threads", cpu.adapter, helpers + 1),
        Err(why) => format!("{}, one thread ({why})", cpu.adapter),
    };
    cpu
}

/// Shares `engine`'s packed weights out among new helpers where the page allows them; on one
/// thread (or when they fail to start, which the console is told) the engine is left alone.
pub async fn share_with_helpers(engine: &mut Engine) {
    let Ok(count) = helpers_possible() else {
        return;
    };
    let helpers = match WorkerHelpers::start(count).await {
        Ok(h) => Arc::new(h),
        Err(e) => {
            web_sys::console::warn_1(&format!("no product helpers ({e}): one thread").into());
            return;
        }
    };
    let shared: Arc<dyn ProductHelpers> = helpers.clone();
    match engine.share_products(&shared) {
        Ok(_) => helpers.serve(),
        Err(e) => {
            // Weights shared before the failure keep their split: stopped helpers are not asked.
            helpers.stop();
            web_sys::console::warn_1(&format!("product helpers: {e}; one thread").into());
        }
    }
}
