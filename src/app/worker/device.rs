//! WebGPU detection and burn-wgpu initialisation inside the worker (dedicated workers have
//! `navigator.gpu` in Chromium), falling back to the CPU backend with the reason.

use crate::app::web::js_error_text;
use crate::runtime::backend::{BackendError, ComputeDevice, storage_buffers_suffice, wgpu_device};
use js_sys::Reflect;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

// burn-wgpu asks WebGPU for its device itself: to hear when that device is lost, the worker
// wraps `GPUAdapter.prototype.requestDevice` (a module file, not eval: the CSP allows it) and
// keeps the device's `lost` message. `globalThis.__clozelabGpu.device` is also where the
// fault-injection test destroys it.
#[wasm_bindgen(inline_js = r#"
export function watch_gpu_devices() {
  const adapter = globalThis.GPUAdapter;
  if (!adapter || adapter.prototype.__clozelabWatched) return;
  const requestDevice = adapter.prototype.requestDevice;
  adapter.prototype.requestDevice = async function (...args) {
    const device = await requestDevice.apply(this, args);
    const watched = { device, lost: null };
    globalThis.__clozelabGpu = watched;
    device.lost.then((info) => { watched.lost = info.message || String(info.reason || "lost"); });
    return device;
  };
  adapter.prototype.__clozelabWatched = true;
}
export function gpu_lost() {
  const watched = globalThis.__clozelabGpu;
  return watched && watched.lost !== null ? watched.lost : undefined;
}
export function gpu_lost_within(ms) {
  const watched = globalThis.__clozelabGpu;
  if (!watched || watched.lost !== null) return Promise.resolve(watched ? watched.lost : undefined);
  const lost = watched.device.lost.then((info) => info.message || String(info.reason || "lost"));
  return Promise.race([lost, new Promise((resolve) => setTimeout(() => resolve(undefined), ms))]);
}
"#)]
extern "C" {
    fn watch_gpu_devices();
    fn gpu_lost() -> Option<String>;
    fn gpu_lost_within(ms: u32) -> js_sys::Promise;
}

/// The WebGPU device's loss message, once it is lost.
pub fn lost_gpu() -> Option<String> {
    gpu_lost()
}

/// The WebGPU device's loss message if it is lost now or within `ms` milliseconds. The `lost`
/// promise settles a while after the failure a loss causes — later the busier the machine —
/// so a failed request waits for it rather than guessing from the clock.
pub async fn lost_gpu_within(ms: u32) -> Option<String> {
    JsFuture::from(gpu_lost_within(ms))
        .await
        .ok()
        .and_then(|v| v.as_string())
}

/// What the browser's WebGPU adapter says about itself.
struct AdapterProbe {
    description: String,
    max_storage_binding: Option<f64>,
}

fn get(target: &JsValue, key: &str) -> Option<JsValue> {
    Reflect::get(target, &JsValue::from_str(key))
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_null())
}

/// Why the worker runs on the CPU although WebGPU was wanted (shown to the user).
#[derive(Debug, thiserror::Error)]
pub enum NoWebGpu {
    #[error("CPU requested with ?backend=cpu")]
    CpuRequested,
    #[error("this browser does not expose WebGPU (navigator.gpu)")]
    NoApi,
    #[error("navigator.gpu.requestAdapter is missing or not a function")]
    NoRequestAdapter,
    #[error("WebGPU is present but no adapter is available")]
    NoAdapter,
    #[error(
        "this WebGPU adapter does not offer timestamp-query, which burn's GPU runtime needs in a browser"
    )]
    NoTimestampQuery,
    #[error("requestAdapter failed: {0}")]
    Browser(String),
    #[error("{0}")]
    Limits(BackendError),
    #[error(transparent)]
    Init(#[from] BackendError),
}

/// Asks `navigator.gpu` for an adapter ourselves first: a missing API or a null adapter then
/// becomes a clear reason instead of an error deep inside wgpu.
async fn probe_adapter() -> Result<AdapterProbe, NoWebGpu> {
    // `self.navigator` in a worker, `window.navigator` on a page.
    let gpu = get(&js_sys::global(), "navigator")
        .and_then(|navigator| get(&navigator, "gpu"))
        .ok_or(NoWebGpu::NoApi)?;
    let request: js_sys::Function = get(&gpu, "requestAdapter")
        .and_then(|f| f.dyn_into().ok())
        .ok_or(NoWebGpu::NoRequestAdapter)?;
    let promise: js_sys::Promise = request
        .call0(&gpu)
        .map_err(|e| NoWebGpu::Browser(js_error_text(&e)))?
        .dyn_into()
        .map_err(|_| NoWebGpu::Browser("requestAdapter did not return a promise".into()))?;
    let adapter = JsFuture::from(promise)
        .await
        .map_err(|e| NoWebGpu::Browser(js_error_text(&e)))?;
    if adapter.is_null() || adapter.is_undefined() {
        return Err(NoWebGpu::NoAdapter);
    }
    // cubecl times its work with timestamp queries in a browser and stops the worker (a panic)
    // on an adapter without them, where blocking on the host's clock is impossible.
    let has_feature = |name: &str| {
        get(&adapter, "features")
            .and_then(|features| get(&features, "has"))
            .and_then(|has| has.dyn_into::<js_sys::Function>().ok())
            .and_then(|has| {
                has.call1(&get(&adapter, "features")?, &JsValue::from_str(name))
                    .ok()
            })
            .is_some_and(|v| v.is_truthy())
    };
    if !has_feature("timestamp-query") {
        return Err(NoWebGpu::NoTimestampQuery);
    }
    let info = get(&adapter, "info");
    let field = |name: &str| {
        info.as_ref()
            .and_then(|i| get(i, name))
            .and_then(|v| v.as_string())
            .filter(|s| !s.is_empty())
    };
    let description = [
        field("vendor"),
        field("architecture"),
        field("device"),
        field("description"),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ");
    let limit = |name: &str| {
        get(&adapter, "limits")
            .and_then(|l| get(&l, name))
            .and_then(|v| v.as_f64())
    };
    if let Some(offered) = limit("maxStorageBuffersPerShaderStage") {
        storage_buffers_suffice(offered as u32).map_err(NoWebGpu::Limits)?;
    }
    let max_storage_binding = limit("maxStorageBufferBindingSize");
    Ok(AdapterProbe {
        description: if description.is_empty() {
            "WebGPU adapter".into()
        } else {
            description
        },
        max_storage_binding,
    })
}

/// The best device available: WebGPU through burn-wgpu, else the CPU. The second value says
/// why WebGPU is not used. `force_cpu` (the page's `?backend=cpu`) forces the CPU.
pub async fn init_compute_device(force_cpu: bool) -> (ComputeDevice, Option<NoWebGpu>) {
    if force_cpu {
        return (
            super::cpu_threads::browser_cpu_device(),
            Some(NoWebGpu::CpuRequested),
        );
    }
    let probe = match probe_adapter().await {
        Ok(p) => p,
        Err(reason) => return (super::cpu_threads::browser_cpu_device(), Some(reason)),
    };
    watch_gpu_devices();
    match wgpu_device().await {
        Ok(mut device) => {
            let limit = probe
                .max_storage_binding
                .map(|b| format!(", max storage binding {} MiB", (b / 1048576.0).round()))
                .unwrap_or_default();
            device.adapter = format!("{}{limit}", probe.description);
            (device, None)
        }
        Err(e) => (super::cpu_threads::browser_cpu_device(), Some(e.into())),
    }
}
