//! Which body of an op runs: a model's [`Backend`] is chosen once, when it is loaded
//! ([`Backend::of`], the one place that asks what a device is), and every op is a type with one
//! body per backend ([`Op`]), as candle's `CustomOp` has a method per device. A new backend is a
//! new variant here and a new method in [`Op`], which the compiler then asks of every op.

use burn::tensor::{DType, Device};

/// The backend a model's ops run their bodies for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A GPU: burn-wgpu natively, WebGPU in the browser, with or without fusion ([`super::kernels`]).
    Gpu,
    /// The CPU backend natively: burn-flex, gemm on every core.
    Cpu,
    /// The CPU backend in the browser: one thread, so the weights are packed once into panels
    /// ([`super::panel_product`]), which beats gemm's per-call packing there.
    BrowserCpu,
}

/// An operation with a body per [`Backend`] and a reference body that runs on any device, which
/// the tests hold every other body against (`tests/all/op_bodies.rs`).
pub trait Op: Sized {
    type Output;
    /// The body on a GPU.
    fn gpu(self) -> Self::Output;
    /// The body on the native CPU backend.
    fn cpu(self) -> Self::Output;
    /// The body on the browser's CPU backend.
    fn browser_cpu(self) -> Self::Output;
    /// burn's own composition, on any backend.
    fn reference(self) -> Self::Output;
}

/// An op whose one body, on every backend and as its reference, is burn's composition: until a
/// backend's own body is measured to pay (the other families' ops so far).
pub trait Composed: Sized {
    type Output;
    /// burn's composition, on any backend.
    fn composed(self) -> Self::Output;
}

impl<T: Composed> Op for T {
    type Output = T::Output;

    fn gpu(self) -> Self::Output {
        self.composed()
    }

    fn cpu(self) -> Self::Output {
        self.composed()
    }

    fn browser_cpu(self) -> Self::Output {
        self.composed()
    }

    fn reference(self) -> Self::Output {
        self.composed()
    }
}

impl Backend {
    /// The backend that runs on `device`.
    pub fn of(device: &Device) -> Self {
        if *device != Device::flex() {
            Backend::Gpu
        } else if cfg!(target_arch = "wasm32") {
            Backend::BrowserCpu
        } else {
            Backend::Cpu
        }
    }

    /// `op`'s body for this backend.
    pub fn run<O: Op>(self, op: O) -> O::Output {
        match self {
            Backend::Gpu => op.gpu(),
            Backend::Cpu => op.cpu(),
            Backend::BrowserCpu => op.browser_cpu(),
        }
    }

    /// Whether a step's launches can be recorded once and replayed (cubecl's graph capture): on
    /// a GPU, where each launch costs the host more than its arithmetic at batch 1. The CPU
    /// backends run every op at once.
    pub fn records_steps(self) -> bool {
        self == Backend::Gpu
    }

    /// Whether this backend on `device` runs products with f16 weights (see [`HalfWeights`]).
    pub fn half_weights(self, device: &Device) -> HalfWeights {
        match self {
            Backend::Cpu | Backend::BrowserCpu => HalfWeights::CpuBackend,
            Backend::Gpu if !device.supports_dtype(DType::F16) => HalfWeights::NoShaderF16,
            Backend::Gpu => HalfWeights::Run,
        }
    }
}

/// Whether a device runs the projections with f16 weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfWeights {
    /// A GPU whose adapter offers `shader-f16`.
    Run,
    /// The CPU backend: its f16 products are no faster, so it stays in f32.
    CpuBackend,
    /// A GPU without `shader-f16`.
    NoShaderF16,
}
