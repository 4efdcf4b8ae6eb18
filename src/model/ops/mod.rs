//! The operations GPT-2 is made of, each one function (or one weight type's `forward`) that owns
//! a body per backend and a reference body, as candle's ops own their CPU, CUDA and Metal
//! bodies: the model's files call these and never ask which device they run on. This module is
//! the one place that asks ([`Body::of`]).
//!
//! | op | GPU body | CPU body (native) | CPU body (browser) | reference |
//! |---|---|---|---|---|
//! | [`layer_norm::layer_norm`] | one kernel | burn's `layer_norm` | same | [`layer_norm::reference`] |
//! | [`gelu::gelu_new`] | `tanh` form | sigmoid form (one `exp`) | same | [`gelu::reference`] |
//! | [`projection::Conv1D::forward`] (with its bias, GELU or residual) | burn's product (f16 weights: [`kernels::half_product`]), then one epilogue kernel | burn's `linear`, few-row products over the threads ([`threaded_product`]) | weights packed once ([`panel_product`]) | [`projection::reference`] |
//! | [`attention::attention`] (one step, with the query/key/value bias) | one kernel | burn's `attention` without a shared prefix, burn's composition over one | burn's composition | [`attention::reference`] |
//! | [`embedding::TokenEmbedding`] lookup and LM head | one kernel per chunk; product per chunk | burn's `embedding`; threaded product | columns and product of the packed `wteᵀ` | one chunk through burn |
//! | [`draw::draw`] (tokens by inverse CDF) | one kernel | burn's composition ([`inverse_cdf`]) | same | [`draw::reference`] |
//!
//! The GPU bodies are [`kernels`]; the tests hold every body against the reference
//! (`tests/all/gpu_kernels.rs`, `tests/all/panel_product.rs`, `tests/all/model_golden.rs`).

pub mod attention;
pub mod draw;
pub mod embedding;
pub mod gelu;
pub mod gemm_packing;
pub mod inverse_cdf;
pub mod kernels;
pub mod layer_norm;
pub mod panel_product;
pub mod projection;
pub mod threaded_product;

use burn::tensor::{Device, Tensor};

/// Which body of an op runs on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// A GPU: burn-wgpu natively, WebGPU in the browser, with or without fusion ([`kernels`]).
    Gpu,
    /// The CPU backend natively: burn-flex, gemm on every core.
    Cpu,
    /// The CPU backend in the browser: one thread, so the weights are packed once into panels
    /// ([`panel_product`]), which beats gemm's per-call packing there.
    BrowserCpu,
}

impl Body {
    /// The body that runs on `device`.
    pub fn of(device: &Device) -> Self {
        if *device != Device::flex() {
            Body::Gpu
        } else if cfg!(target_arch = "wasm32") {
            Body::BrowserCpu
        } else {
            Body::Cpu
        }
    }
}

/// Storage for a cache's keys and values. A position is read only after a step has written it,
/// so a GPU's storage is left uncleared (one fill kernel per block saved); the CPU's is zeroed,
/// as reading memory never written would be undefined there.
///
/// # Shapes
/// - `shape` → `shape`
pub fn cache_storage(shape: [usize; 4], device: &Device) -> Tensor<4> {
    match Body::of(device) {
        Body::Gpu => Tensor::empty(shape, device),
        Body::Cpu | Body::BrowserCpu => Tensor::zeros(shape, device),
    }
}
