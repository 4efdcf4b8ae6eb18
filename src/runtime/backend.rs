//! Choosing the device: burn-wgpu (WebGPU in the browser, Vulkan/Metal natively) or the
//! burn-flex CPU backend. The model code is the same for both; only the `Device` differs.

use burn::tensor::Device;

use crate::model::Precision;
pub use crate::model::ops::kernels::STORAGE_BUFFERS_NEEDED;

/// Which backend a device runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// burn-flex on the CPU.
    Cpu,
    /// burn-wgpu on a GPU (WebGPU in browsers).
    Wgpu,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Wgpu => "wgpu",
        }
    }
}

impl std::str::FromStr for BackendKind {
    type Err = BackendError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cpu" => Ok(BackendKind::Cpu),
            "wgpu" => Ok(BackendKind::Wgpu),
            other => Err(BackendError::UnknownName(other.to_string())),
        }
    }
}

/// Why a backend could not be chosen or started.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    #[error("unknown backend {0:?} (expected cpu or wgpu)")]
    UnknownName(String),
    /// wgpu found no usable adapter or could not create a device (the message is wgpu's).
    #[error("{api} initialisation failed: {message}")]
    Init { api: &'static str, message: String },
    /// The adapter binds fewer storage buffers in a shader stage than clozelab's kernels do.
    #[error(
        "this GPU adapter binds {offered} storage buffers in a shader stage; clozelab's kernels bind {needed}"
    )]
    TooFewStorageBuffers { offered: u32, needed: u32 },
}

/// Whether an adapter binding `offered` storage buffers in a shader stage runs every kernel of
/// clozelab's ([`STORAGE_BUFFERS_NEEDED`]). Without this check a kernel binding more fails its
/// validation, which in a browser is only logged, and its output is left unwritten.
///
/// ```
/// use clozelab::runtime::backend::{BackendError, storage_buffers_suffice};
/// assert!(storage_buffers_suffice(10).is_ok());
/// assert!(matches!(
///     storage_buffers_suffice(8),
///     Err(BackendError::TooFewStorageBuffers { offered: 8, needed: 10 })
/// ));
/// ```
pub fn storage_buffers_suffice(offered: u32) -> Result<(), BackendError> {
    if offered < STORAGE_BUFFERS_NEEDED {
        return Err(BackendError::TooFewStorageBuffers {
            offered,
            needed: STORAGE_BUFFERS_NEEDED,
        });
    }
    Ok(())
}

/// A ready device and what it runs on.
#[derive(Clone, Debug)]
pub struct ComputeDevice {
    pub kind: BackendKind,
    pub device: Device,
    /// Human-readable adapter description ("CPU (burn-flex)", or the GPU's name).
    pub adapter: String,
    /// The weights' number format models loaded on it get (f32 unless chosen and offered).
    pub precision: Precision,
}

/// Kernels recorded before cubecl submits them to the GPU's queue (cubecl's default is 32): a
/// decode step of GPT-2 small (about 104 dispatches: eight a block) and of GPT-2 medium (about
/// 200) in one submission, since every submission costs the host (in a browser, a flush of
/// WebGPU's commands to the GPU process). Larger models' passes take two or more. The GPU then starts only once a
/// pass is recorded; natively cubecl's own `CUBECL_WGPU_MAX_TASKS`, where set, chooses instead,
/// so that a GPU machine can weigh the two (`scripts/gpu_bench.sh`, stage `host`).
pub const TASKS_PER_SUBMISSION: usize = 256;

/// The CPU device (always available).
pub fn cpu_device() -> ComputeDevice {
    ComputeDevice {
        kind: BackendKind::Cpu,
        device: Device::flex(),
        adapter: "CPU (burn-flex)".into(),
        precision: Precision::F32,
    }
}

/// Initialises burn-wgpu natively. Safe to call more than once: the first device is reused,
/// since burn's runtime cannot be initialised twice.
#[cfg(not(target_arch = "wasm32"))]
pub fn wgpu_device() -> Result<ComputeDevice, BackendError> {
    use std::sync::OnceLock;
    static DEVICE: OnceLock<Result<ComputeDevice, BackendError>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            let options = Device::wgpu_options();
            let options = match std::env::var_os("CUBECL_WGPU_MAX_TASKS") {
                Some(_) => options,
                None => options.tasks_max(TASKS_PER_SUBMISSION),
            };
            let (device, setup) = options.init_with_setup().map_err(|e| BackendError::Init {
                api: "wgpu",
                message: e.to_string(),
            })?;
            storage_buffers_suffice(setup.device.limits().max_storage_buffers_per_shader_stage)?;
            let info = setup.adapter.get_info();
            let adapter = format!("{} ({:?})", info.name, info.backend);
            Ok(ComputeDevice {
                kind: BackendKind::Wgpu,
                device,
                adapter,
                precision: Precision::F32,
            })
        })
        .clone()
}

/// Initialises burn-wgpu on WebGPU, asynchronously as browsers require.
#[cfg(target_arch = "wasm32")]
pub async fn wgpu_device() -> Result<ComputeDevice, BackendError> {
    let device = Device::wgpu_options()
        .tasks_max(TASKS_PER_SUBMISSION)
        .init_async()
        .await
        .map_err(|e| BackendError::Init {
            api: "WebGPU",
            message: e.to_string(),
        })?;
    // The browser layer names the adapter from WebGPU's own `adapter.info`.
    Ok(ComputeDevice {
        kind: BackendKind::Wgpu,
        device,
        adapter: "WebGPU adapter".into(),
        precision: Precision::F32,
    })
}

/// The device for `kind` (native).
#[cfg(not(target_arch = "wasm32"))]
pub fn device_for(kind: BackendKind) -> Result<ComputeDevice, BackendError> {
    match kind {
        BackendKind::Cpu => Ok(cpu_device()),
        BackendKind::Wgpu => wgpu_device(),
    }
}
