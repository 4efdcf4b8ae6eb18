//! The GPU bodies of [`super`]'s ops, for the steps that burn composes of many dispatches: the
//! layer norm (two reductions and the element-wise steps around them), the attention of a step
//! (the products against the shared prefix and the row's own keys, the masks, the softmax and
//! the weighted values: up to a dozen kernels, and the copy of the step's keys and values into
//! the block's cache before them), a projection's bias with the GELU or residual
//! after it, the token embedding gathered from `wte`'s chunks (nine kernels a chunk), and the
//! sampler's draw of tokens by inverse CDF (the softmax, the cumulative sums and the search:
//! about thirty a level of its tree). One kernel each here; and one for an output projection's
//! bias and residual with the layer norm that reads their sum (two of the kernels above
//! otherwise). Beside them, a projection with f16 weights and f32 activations
//! ([`half_product`]): cubek's matmul, which burn launches for its own products, given operands
//! of two types (burn's `matmul` takes one type, so f16 weights had the activations cast to f16
//! and the product back: three kernels). And, no kernel, host values written into a tensor's own
//! buffer ([`overwrite_ints`]): how a step recorded once and replayed gets its inputs.
//!
//! Every function here runs on a GPU only (burn-wgpu natively, WebGPU in the browser, with or
//! without fusion); they are the ops' [`super::backend::Op::gpu`] bodies. Each is a
//! [`backend_extension`] of burn's `Dispatch` backend: the trait below is implemented for
//! `CubeBackend`, and for `Fusion<CubeBackend>` (the browser's engine) by the macro, which
//! records the call and runs it in order with the fused kernels around it.

mod attention;
mod draw;
mod embedding_rows;
mod epilogue;
mod half_product;
mod layer_norm;
mod overwrite;
mod residual_norm;
mod step_attention;
mod workgroup;

use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::{Backend, Dispatch, backend_extension};
use burn::tensor::{Int, Tensor};
use burn_cubecl::CubeBackend;

pub use attention::AttentionShape;
pub use draw::NOT_A_NUMBER_DRAW;
pub use epilogue::{Epilogue, TANH_ARGUMENT_LIMIT};
pub use overwrite::{OverwriteError, overwrite_floats, overwrite_ints};
pub use step_attention::{
    CachedStepAttention, MAX_HEAD_DIM, StepAttention, attention, attention_cached, takes_head,
};

/// The most storage buffers one of these kernels binds in a shader stage: the attention
/// kernel's nine tensors and cubecl's metadata ([`attention`]). It is the most Chromium offers
/// (WebGPU promises eight); an adapter offering fewer cannot run them.
pub const STORAGE_BUFFERS_NEEDED: u32 = 10;

/// The kernels, as operations of a burn backend.
#[backend_extension(Cube, Fusion: cfg(target_arch = "wasm32"))]
pub trait TransformerKernels: Backend {
    /// Layer norm over the last dimension, in one kernel: see [`layer_norm`].
    #[fusion(dtype = input, shape = input)]
    fn fused_layer_norm(
        input: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        epsilon: f32,
    ) -> FloatTensor<Self>;

    /// One attention step, in one kernel: see [`attention`].
    #[fusion(dtype = query, shape = attention_output_shape(query))]
    #[allow(clippy::too_many_arguments)]
    fn fused_attention(
        query: FloatTensor<Self>,
        own: FloatTensor<Self>,
        prefix_keys: FloatTensor<Self>,
        prefix_values: FloatTensor<Self>,
        prefix_mask: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        shape: AttentionShape,
    ) -> FloatTensor<Self>;

    /// One attention step that also writes the step's keys and values into the block's cache,
    /// in one kernel that returns the cache too: see [`attention_cached`].
    #[fusion(meta = |query, _keys_values, cache, _prefix_keys, _prefix_values, _prefix_mask, _bias, _past, _shape, _group| {
        (
            burn::backend::fusion::custom::TensorSpec::new(attention_output_shape(&query.shape), query.dtype),
            cache.clone(),
        )
    })]
    #[allow(clippy::too_many_arguments)]
    fn fused_attention_cached(
        query: FloatTensor<Self>,
        keys_values: FloatTensor<Self>,
        cache: FloatTensor<Self>,
        prefix_keys: FloatTensor<Self>,
        prefix_values: FloatTensor<Self>,
        prefix_mask: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        past: FloatTensor<Self>,
        shape: AttentionShape,
        group: usize,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    /// A projection's bias and what follows it, in one kernel: see [`bias_gelu`] and
    /// [`bias_residual`]. `residual` is read only for [`Epilogue::Residual`].
    #[fusion(dtype = product, shape = product)]
    fn fused_epilogue(
        product: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        residual: FloatTensor<Self>,
        epilogue: Epilogue,
    ) -> FloatTensor<Self>;

    /// An output projection's bias and residual, then the layer norm of the sum, in one kernel
    /// that returns both: see [`bias_residual_layer_norm`].
    #[fusion(meta = |product, _bias, _residual, _weight, _norm_bias, _epsilon| {
        (product.clone(), product.clone())
    })]
    fn fused_residual_norm(
        product: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        residual: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        norm_bias: FloatTensor<Self>,
        epsilon: f32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    /// `base` plus the embedding rows that one chunk of `wte` holds, in one kernel: see
    /// [`token_embedding`].
    #[fusion(dtype = chunk, shape = embedding_rows_shape(chunk, ids))]
    fn fused_embedding_rows(
        chunk: FloatTensor<Self>,
        ids: IntTensor<Self>,
        base: FloatTensor<Self>,
        start: usize,
    ) -> FloatTensor<Self>;

    /// Tokens drawn from rows of logits by inverse CDF, in one kernel: see [`draw_tokens`].
    #[fusion(dtype = slot_starts, shape = uniforms)]
    fn fused_draw(
        logits: FloatTensor<Self>,
        slot_starts: IntTensor<Self>,
        uniforms: FloatTensor<Self>,
        inverse_temperature: f32,
    ) -> IntTensor<Self>;

    /// f32 activations times f16 weights, f32 out: see [`half_product`].
    #[fusion(dtype = input, shape = half_product_shape(input, weight))]
    fn fused_half_product(input: FloatTensor<Self>, weight: FloatTensor<Self>)
    -> FloatTensor<Self>;
}

/// `[rows, in]` and `[in, out]` give `[rows, out]`. (Only the fused engine asks for it.)
#[cfg(target_arch = "wasm32")]
fn half_product_shape(
    input: &burn::tensor::Shape,
    weight: &burn::tensor::Shape,
) -> burn::tensor::Shape {
    burn::tensor::Shape::from([input[0], weight[1]])
}

/// `[chunk_rows, width]` and `[rows]` give `[rows, width]`. (Only the fused engine asks for it.)
#[cfg(target_arch = "wasm32")]
fn embedding_rows_shape(
    chunk: &burn::tensor::Shape,
    ids: &burn::tensor::Shape,
) -> burn::tensor::Shape {
    burn::tensor::Shape::from([ids.num_elements(), chunk[1]])
}

/// `[batch, n_head, seq, head_dim]` queries give `[batch, seq, n_head·head_dim]`: the heads side
/// by side, ready for the output projection. (Only the fused engine asks for it.)
#[cfg(target_arch = "wasm32")]
fn attention_output_shape(query: &burn::tensor::Shape) -> burn::tensor::Shape {
    burn::tensor::Shape::from([query[0], query[2], query[1] * query[3]])
}

/// `y = (x − mean) / sqrt(var + ε) · weight + bias` over the last dimension (the biased
/// variance, as PyTorch's `LayerNorm`), in one kernel.
///
/// # Shapes
/// - input `[..., width]`, weight and bias `[width]` → output `[..., width]`
pub fn layer_norm<const D: usize>(
    input: Tensor<D>,
    weight: Tensor<1>,
    bias: Tensor<1>,
    epsilon: f64,
) -> Tensor<D> {
    Tensor::from_dispatch(Dispatch::fused_layer_norm(
        input.into_dispatch(),
        weight.into_dispatch(),
        bias.into_dispatch(),
        epsilon as f32,
    ))
}

/// `gelu_new(product + bias)` (GPT-2's tanh GELU) in one kernel.
///
/// # Shapes
/// - product `[..., width]`, bias `[width]` → `[..., width]`
pub fn bias_gelu<const D: usize>(product: Tensor<D>, bias: Tensor<1>) -> Tensor<D> {
    Tensor::from_dispatch(Dispatch::fused_epilogue(
        product.clone().into_dispatch(),
        bias.into_dispatch(),
        product.into_dispatch(),
        Epilogue::Gelu,
    ))
}

/// `product + bias + residual` in one kernel.
///
/// # Shapes
/// - product and residual `[..., width]`, bias `[width]` → `[..., width]`
pub fn bias_residual<const D: usize>(
    product: Tensor<D>,
    bias: Tensor<1>,
    residual: Tensor<D>,
) -> Tensor<D> {
    Tensor::from_dispatch(Dispatch::fused_epilogue(
        product.into_dispatch(),
        bias.into_dispatch(),
        residual.into_dispatch(),
        Epilogue::Residual,
    ))
}

/// `s = product + bias + residual` and its layer norm `(s − mean) / sqrt(var + ε) · weight +
/// norm_bias` (the biased variance, as [`layer_norm`]), in one kernel: the epilogue of a pre-norm
/// block's output projection and the norm that reads its result, which are otherwise two
/// dispatches. Returns `(s, norm)`.
///
/// # Shapes
/// - product and residual `[batch, seq, width]`, bias, weight and norm_bias `[width]` → two
///   `[batch, seq, width]`
pub fn bias_residual_layer_norm(
    product: Tensor<3>,
    bias: Tensor<1>,
    residual: Tensor<3>,
    weight: Tensor<1>,
    norm_bias: Tensor<1>,
    epsilon: f64,
) -> (Tensor<3>, Tensor<3>) {
    let (sum, norm) = Dispatch::fused_residual_norm(
        product.into_dispatch(),
        bias.into_dispatch(),
        residual.into_dispatch(),
        weight.into_dispatch(),
        norm_bias.into_dispatch(),
        epsilon as f32,
    );
    (Tensor::from_dispatch(sum), Tensor::from_dispatch(norm))
}

/// `wte`'s rows for `ids` plus `base` (the position embeddings), gathered from `wte`'s row
/// chunks (`chunks[k]` holds the rows from the sum of the heights before it): one kernel per
/// chunk, each adding the rows whose ids fall in it. An id outside the chunks adds nothing
/// (`Transformer::token_tensor` checks them first).
///
/// # Shapes
/// - chunks `[rows_k, width]`, ids `[batch, seq]`, base `[batch or 1, seq, width]` →
///   `[batch, seq, width]`
pub fn token_embedding(chunks: &[Tensor<2>], ids: Tensor<2, Int>, base: Tensor<3>) -> Tensor<3> {
    let [batch, seq] = ids.dims();
    let [base_batch, _, width] = base.dims();
    if chunks.is_empty() {
        return base.expand([batch, seq, width]);
    }
    let ids = ids.reshape([batch * seq]);
    let mut rows = base.reshape([base_batch * seq, width]);
    let mut start = 0;
    for chunk in chunks {
        let height = chunk.dims()[0];
        rows = Tensor::from_dispatch(Dispatch::fused_embedding_rows(
            chunk.clone().into_dispatch(),
            ids.clone().into_dispatch(),
            rows.into_dispatch(),
            start,
        ));
        start += height;
    }
    rows.reshape([batch, seq, width])
}

/// Draws tokens from each row's `softmax(logits / temperature)` by inverse CDF, in one kernel
/// (one workgroup per row): slot s of row r (`slot_starts[r] ≤ s < slot_starts[r + 1]`) gets
/// the first token whose running sum of weights exceeds `uniforms[s]` times the row's total. A
/// token whose weight underflows to 0 is never drawn; a row whose weights are not numbers gives
/// [`NOT_A_NUMBER_DRAW`] in each of its slots.
///
/// # Shapes
/// - logits `[rows, vocab]`, slot_starts `[rows + 1]` (non-decreasing, from 0), uniforms
///   `[slots]` in [0, 1) → tokens `[slots]`
pub fn draw_tokens(
    logits: Tensor<2>,
    slot_starts: Tensor<1, Int>,
    uniforms: Tensor<1>,
    temperature: f32,
) -> Tensor<1, Int> {
    Tensor::from_dispatch(Dispatch::fused_draw(
        logits.into_dispatch(),
        slot_starts.into_dispatch(),
        uniforms.into_dispatch(),
        1.0 / temperature,
    ))
}

/// `input · weight` with `weight` in f16 and `input` and the result in f32, accumulated in f32
/// (so only the weights are rounded to f16).
///
/// # Shapes
/// - input `[..., in]`, weight `[in, out]` → `[..., out]`
pub fn half_product<const D: usize>(input: Tensor<D>, weight: Tensor<2>) -> Tensor<D> {
    let dims = input.dims();
    let width = dims[D - 1];
    let rows = dims.iter().take(D - 1).product::<usize>();
    let out = weight.dims()[1];
    let mut shape = dims;
    shape[D - 1] = out;
    if rows == 0 || width == 0 || out == 0 {
        // An empty product is zeros, without a launch.
        return Tensor::zeros(shape, &weight.device());
    }
    let product = Tensor::<2>::from_dispatch(Dispatch::fused_half_product(
        input.reshape([rows, width]).into_dispatch(),
        weight.into_dispatch(),
    ));
    product.reshape(shape)
}

impl TransformerKernels for CubeBackend {
    fn fused_layer_norm(
        input: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        epsilon: f32,
    ) -> FloatTensor<Self> {
        layer_norm::launch_layer_norm(input, weight, bias, epsilon)
    }

    fn fused_attention(
        query: FloatTensor<Self>,
        own: FloatTensor<Self>,
        prefix_keys: FloatTensor<Self>,
        prefix_values: FloatTensor<Self>,
        prefix_mask: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        shape: AttentionShape,
    ) -> FloatTensor<Self> {
        attention::launch_attention(
            attention::AttentionOperands {
                query: query.clone(),
                own,
                step: None,
                group: 1,
                prefix_keys,
                prefix_values,
                prefix_mask,
                bias,
                past: query.clone(),
            },
            shape,
        )
        .0
    }

    fn fused_attention_cached(
        query: FloatTensor<Self>,
        keys_values: FloatTensor<Self>,
        cache: FloatTensor<Self>,
        prefix_keys: FloatTensor<Self>,
        prefix_values: FloatTensor<Self>,
        prefix_mask: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        past: FloatTensor<Self>,
        shape: AttentionShape,
        group: usize,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        attention::launch_attention(
            attention::AttentionOperands {
                query,
                own: cache,
                step: Some(keys_values),
                group,
                prefix_keys,
                prefix_values,
                prefix_mask,
                bias,
                past,
            },
            shape,
        )
    }

    fn fused_epilogue(
        product: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        residual: FloatTensor<Self>,
        epilogue: Epilogue,
    ) -> FloatTensor<Self> {
        epilogue::launch_epilogue(product, bias, residual, epilogue)
    }

    fn fused_residual_norm(
        product: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        residual: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        norm_bias: FloatTensor<Self>,
        epsilon: f32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        residual_norm::launch_residual_norm(
            residual_norm::ResidualNormOperands {
                product,
                bias,
                residual,
                weight,
                norm_bias,
            },
            epsilon,
        )
    }

    fn fused_embedding_rows(
        chunk: FloatTensor<Self>,
        ids: IntTensor<Self>,
        base: FloatTensor<Self>,
        start: usize,
    ) -> FloatTensor<Self> {
        embedding_rows::launch_embedding_rows(chunk, ids, base, start)
    }

    fn fused_draw(
        logits: FloatTensor<Self>,
        slot_starts: IntTensor<Self>,
        uniforms: FloatTensor<Self>,
        inverse_temperature: f32,
    ) -> IntTensor<Self> {
        draw::launch_draw(logits, slot_starts, uniforms, inverse_temperature)
    }

    fn fused_half_product(
        input: FloatTensor<Self>,
        weight: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        half_product::launch_half_product(input, weight)
    }
}
