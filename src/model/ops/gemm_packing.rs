//! How gemm, under the CPU backend's matrix products, reads GPT-2's weights: packed into its
//! kernel's layout for every product of more than a few rows.
//!
//! burn-flex hands gemm row-major operands, so gemm solves the transposed product and a layer's
//! weight becomes its left operand. By default gemm packs that operand only for products of more
//! than 8 (one thread) or 16 (several threads) times its kernel's width of rows, about 32 to 96
//! tokens; below that its kernel reads the weight in place, with a stride of a whole weight row
//! between consecutive values. The sampler's tree levels and short contexts are just those
//! products. Packing from one kernel width of rows on (measured 2026-11-26, GPT-2-small shape):
//! natively a prefill of 64 tokens 144–149 → 110–114 ms and decoding at batch 64 321 → 375–382
//! tokens/s; in the browser's worker a prefill of 16 tokens 269–272 → 207–211 ms and the
//! 100-sample word distribution 2.13–2.17 → 1.99–2.08 s (docs/performance.md). One-row
//! products (gemv) never pack and are unchanged.

/// Sets gemm's packing thresholds for this process (gemm keeps them in globals), as the CLI
/// and the inference worker do first thing.
pub fn pack_weights_from_few_rows() {
    gemm::set_lhs_packing_threshold_single_thread(1);
    gemm::set_lhs_packing_threshold_multi_thread(1);
}
