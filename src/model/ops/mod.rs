//! The operations GPT-2 is made of, each a type with a body per backend and a reference body
//! ([`backend::Op`]), as candle's ops own their CPU, CUDA and Metal bodies: a model's backend is
//! chosen once, at load ([`backend::Backend::of`], the one place that asks what a device is), and
//! the model's files hand it to these ops without asking which device they run on.
//!
//! | op | GPU body | CPU body (native) | CPU body (browser) | reference body |
//! |---|---|---|---|---|
//! | [`layer_norm::LayerNormOp`] | one kernel | burn's `layer_norm` | same | burn's `layer_norm` |
//! | [`gelu::GeluNew`] | `tanh` form | sigmoid form (one `exp`) | same | `tanh` form |
//! | [`projection::Project`] (a `Conv1D` with its bias, GELU or residual) | burn's product (f16 weights: [`kernels::half_product`]), then one epilogue kernel | burn's `linear`, few-row products over the threads ([`threaded_product`]) | weights packed once, the bias added in the product ([`panel_product`]), the GELU in one pass ([`gelu::gelu_new_in_place`]) | burn's `linear` and the formulas |
//! | [`residual_norm::ProjectResidualNorm`] (an output projection, the residual and the layer norm after it) | burn's product, then one kernel for the epilogue and the norm | [`projection::Project`], then [`layer_norm::LayerNormOp`] | same | same |
//! | [`qkv::ProjectQkv`] (the query/key/value projection, split into heads) | the product, its bias left to the attention kernel | [`projection::Project`] | same | same |
//! | [`attention::StepAttention`] (one step, its own keys and values given) | one kernel, after a join of the keys and values (what the model runs is the next row) | burn's `attention` without a shared prefix, burn's composition over one | burn's composition | burn's composition |
//! | [`cached_attention::AttendCached`] (one step over a block's cache, which it extends) | the same kernel, which also writes the step into the cache | the step copied into the cache, then [`attention::StepAttention`] | same | same |
//! | [`embedding::EmbedTokens`] (lookup plus position embeddings) | one kernel per chunk | burn's `embedding` per chunk | columns of the packed `wteᵀ` | burn's `embedding` on the joined chunks |
//! | [`embedding::LmHead`] | product per chunk | `chunk · hiddenᵀ` over the threads | product of the packed `wteᵀ` | one product on the joined chunks |
//! | [`draw::DrawTokens`] (tokens by inverse CDF) | one kernel | burn's composition ([`inverse_cdf`]) | same | same |
//! | [`CacheStorage`] | uncleared | zeros | zeros | zeros |
//! | [`rms_norm::RmsNormOp`] (Llama-style models) | burn's composition | same | same | same |
//! | [`rotary::Rotary`] (GPT-NeoX, Llama-style) | burn's composition, angles from the host (a replayed step's gathered on the device from every position's) | same | same | same |
//! | [`activation::GeluExact`], [`activation::SiluGate`] (GPT-NeoX; Llama-style) | burn's `gelu`; `silu` | same | same | same |
//! | [`projection::StoreProjection`], [`embedding::StoreEmbedding`] (a weight's layout, at load) | tensors (`wte` in chunks) | same | packed into panels | tensors |
//!
//! The other families' ops have one body so far, burn's composition ([`backend::Composed`]):
//! none has been measured in a model yet. [`grouped_heads`] repeats grouped-query attention's
//! key/value heads for the attention op, so the cache holds only the fewer; [`past::Past`] is the
//! count of keys a step finds cached, which a replayed step's GPU body reads from a buffer. The GPU
//! bodies are [`kernels`]; `tests/all/op_bodies.rs` holds every body of every op against
//! its reference body on odd shapes (the GPU's on lavapipe), and `tests/all/gpu_kernels.rs` the
//! kernels' edges.

pub mod activation;
pub mod attention;
pub mod backend;
pub mod cached_attention;
pub mod draw;
pub mod embedding;
pub mod gelu;
pub mod gemm_packing;
pub mod grouped_heads;
pub mod inverse_cdf;
pub mod kernels;
pub mod layer_norm;
pub mod panel_product;
pub mod past;
pub mod product_helpers;
pub mod projection;
pub mod qkv;
pub mod residual_norm;
pub mod rms_norm;
pub mod rotary;
#[cfg(not(target_arch = "wasm32"))]
pub mod thread_helpers;
pub mod threaded_product;

use burn::tensor::{Device, Tensor};

use backend::{Backend, HalfWeights, Op};

/// Storage for a cache's keys and values. A position is read only after a step has written it,
/// so a GPU's storage is left uncleared (one fill kernel per block saved); the CPU's is zeroed,
/// as reading memory never written would be undefined there.
///
/// # Shapes
/// - `shape` → `shape`
#[derive(Clone, Debug)]
pub struct CacheStorage {
    pub shape: [usize; 4],
    pub device: Device,
}

impl Op for CacheStorage {
    type Output = Tensor<4>;

    fn gpu(self) -> Tensor<4> {
        Tensor::empty(self.shape, &self.device)
    }

    fn cpu(self) -> Tensor<4> {
        self.reference()
    }

    fn browser_cpu(self) -> Tensor<4> {
        self.reference()
    }

    fn reference(self) -> Tensor<4> {
        Tensor::zeros(self.shape, &self.device)
    }
}

/// Whether `device` runs the projections with f16 weights (see [`HalfWeights`]).
pub fn half_weights(device: &Device) -> HalfWeights {
    Backend::of(device).half_weights(device)
}
