//! Matrix products with few rows, split over the CPU's threads.
//!
//! burn-flex gives gemm its thread pool only for products of at least 192³ multiply-adds, and
//! gemm runs a product with one row or one column (a gemv) on one thread whatever it is given.
//! A decoding step at batch 1 is nothing but such products (every layer's projections and the
//! LM head over one hidden state), so natively it kept one core busy and left the others idle.
//! [`matmul`] cuts the wide side of such a product into one block per thread and runs the
//! blocks at once; every other product, every GPU product and the browser (no threads there)
//! take burn's `matmul` unchanged.

use burn::tensor::Tensor;

/// burn-flex's own limit (`PARALLEL_THRESHOLD` in its `ops/matmul.rs`): from this many
/// multiply-adds on it hands gemm its threads, which gemm uses unless the product is a gemv.
pub const GEMM_THREADS_FROM: usize = 192 * 192 * 192;

/// A block narrower than this is not worth a thread: the hand-over costs more than it saves.
const MIN_BLOCK: usize = 64;

/// `lhs · rhs`, with the wide side split over the CPU backend's threads when burn-flex would
/// run the product on one thread.
///
/// Each output element is the same dot product as in one call, so the result equals `matmul`'s
/// up to the kernel's summation order.
///
/// # Shapes
/// - lhs `[m, k]`, rhs `[k, n]` → `[m, n]`
pub fn matmul(lhs: Tensor<2>, rhs: Tensor<2>) -> Tensor<2> {
    let [m, k] = lhs.dims();
    let n = rhs.dims()[1];
    match split_for(m, k, n, threads(&lhs)) {
        Some(Split::Columns(blocks)) => {
            let parts = in_parallel(blocks, |range| {
                lhs.clone().matmul(rhs.clone().slice([0..k, range]))
            });
            Tensor::cat(parts, 1)
        }
        Some(Split::Rows(blocks)) => {
            let parts = in_parallel(blocks, |range| {
                lhs.clone().slice([range, 0..k]).matmul(rhs.clone())
            });
            Tensor::cat(parts, 0)
        }
        None => lhs.matmul(rhs),
    }
}

/// `input · weight + bias` over the last dimension, as burn's `linear`, with the product split
/// as in [`matmul`] where that applies.
///
/// # Shapes
/// - input `[..., in]`, weight `[in, out]`, bias `[out]` → `[..., out]`
pub fn linear<const D: usize>(input: Tensor<D>, weight: Tensor<2>, bias: Tensor<1>) -> Tensor<D> {
    let dims = input.dims();
    let [n_in, n_out] = weight.dims();
    let rows = dims[..D - 1].iter().product::<usize>();
    if split_for(rows, n_in, n_out, threads(&weight)).is_none() {
        return burn::tensor::module::linear(input, weight, Some(bias));
    }
    let mut out_dims = dims;
    out_dims[D - 1] = n_out;
    (matmul(input.reshape([rows, n_in]), weight) + bias.unsqueeze::<2>()).reshape(out_dims)
}

/// How a product is cut: the output's columns or its rows, in these ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split {
    Columns(Vec<std::ops::Range<usize>>),
    Rows(Vec<std::ops::Range<usize>>),
}

/// The blocks a `[m, k] · [k, n]` product is run in on `threads` threads, or `None` for one call:
/// split only where gemm would stay on one thread (a gemv, or under [`GEMM_THREADS_FROM`]), and
/// along the wider of the output's two sides. An empty product is never split.
pub fn split_for(m: usize, k: usize, n: usize, threads: usize) -> Option<Split> {
    let single_threaded =
        m <= 1 || n <= 1 || m.saturating_mul(k).saturating_mul(n) < GEMM_THREADS_FROM;
    let wide = m.max(n);
    let blocks = threads.min(wide / MIN_BLOCK);
    if !single_threaded || blocks < 2 || m.min(n) == 0 {
        return None;
    }
    let ranges = (0..blocks)
        .map(|b| b * wide / blocks..(b + 1) * wide / blocks)
        .collect();
    Some(if n >= m {
        Split::Columns(ranges)
    } else {
        Split::Rows(ranges)
    })
}

#[cfg(not(target_arch = "wasm32"))]
fn threads(lhs: &Tensor<2>) -> usize {
    if lhs.device() == burn::tensor::Device::flex() {
        rayon::current_num_threads()
    } else {
        1
    }
}

/// The browser's CPU backend has no threads (see Cargo.toml).
#[cfg(target_arch = "wasm32")]
fn threads(_: &Tensor<2>) -> usize {
    1
}

#[cfg(not(target_arch = "wasm32"))]
fn in_parallel(
    blocks: Vec<std::ops::Range<usize>>,
    product: impl Fn(std::ops::Range<usize>) -> Tensor<2> + Sync + Send,
) -> Vec<Tensor<2>> {
    use rayon::prelude::*;
    blocks.into_par_iter().map(product).collect()
}

#[cfg(target_arch = "wasm32")]
fn in_parallel(
    blocks: Vec<std::ops::Range<usize>>,
    product: impl Fn(std::ops::Range<usize>) -> Tensor<2>,
) -> Vec<Tensor<2>> {
    blocks.into_iter().map(product).collect()
}
