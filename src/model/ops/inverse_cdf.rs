//! The parts of [`super::draw`]'s composed body: cumulative sums of each row's probabilities
//! (`blocked_cdf`), searched in two passes (`CdfSearch`), on the device, so that only token
//! ids are read back.

use burn::tensor::{Int, Tensor};

/// Vocabulary block for the two-pass inverse CDF on the device ([`CdfSearch`]).
pub(crate) const CDF_BLOCK: usize = 128;
/// Block of each level of the cumulative sum on the device ([`scan`]).
const SCAN_BLOCK: usize = 16;

/// Cumulative sums along the vocabulary, padded with zeros to a multiple of [`CDF_BLOCK`] (the
/// block [`CdfSearch`] searches by), computed by [`scan`].
///
/// # Shapes
/// - probs `[rows, vocab]` → `[rows, vocab padded to a multiple of CDF_BLOCK]`
pub(crate) fn blocked_cdf(probs: Tensor<2>) -> Tensor<2> {
    let vocab = probs.dims()[1];
    scan(pad_columns(probs, vocab.div_ceil(CDF_BLOCK) * CDF_BLOCK))
}

/// Inclusive cumulative sums along each row, in levels: within blocks of [`SCAN_BLOCK`], then
/// each block's exclusive prefix from the same scan over the block totals. The device's cumulative
/// kernel reads an element's whole prefix along the scanned dimension, so that dimension is kept
/// short: ~`SCAN_BLOCK / 2` reads per element over the vocabulary instead of half a 128-block
/// (a third of a word distribution's device time went there on lavapipe).
///
/// # Shapes
/// - `[rows, len]` → `[rows, len]`
fn scan(values: Tensor<2>) -> Tensor<2> {
    let [rows, len] = values.dims();
    if len <= SCAN_BLOCK {
        return values.cumsum(1);
    }
    let padded_len = len.div_ceil(SCAN_BLOCK) * SCAN_BLOCK;
    let blocks = padded_len / SCAN_BLOCK;
    let within = pad_columns(values, padded_len)
        .reshape([rows, blocks, SCAN_BLOCK])
        .cumsum(2);
    let totals = within
        .clone()
        .slice([0..rows, 0..blocks, SCAN_BLOCK - 1..SCAN_BLOCK])
        .reshape([rows, blocks]);
    let before = scan(totals.clone()) - totals;
    let sums = (within + before.reshape([rows, blocks, 1])).reshape([rows, padded_len]);
    if padded_len > len {
        sums.slice([0..rows, 0..len])
    } else {
        sums
    }
}

/// `values` with zero columns appended up to `len` columns.
///
/// # Shapes
/// - `[rows, columns ≤ len]` → `[rows, len]`
fn pad_columns(values: Tensor<2>, len: usize) -> Tensor<2> {
    let [rows, columns] = values.dims();
    if columns == len {
        return values;
    }
    let device = values.device();
    Tensor::cat(
        vec![values, Tensor::zeros([rows, len - columns], &device)],
        1,
    )
}

/// The inverse CDF on the device, in two passes over a [`blocked_cdf`]: the sums rise, so whole
/// blocks that end at or below a threshold are counted first (`[slots, padded / CDF_BLOCK]`
/// comparisons), then the sums inside the block where it falls (`[slots, CDF_BLOCK]`), instead
/// of comparing each slot with the whole vocabulary.
pub(crate) struct CdfSearch {
    /// Each block's last sum `[rows, blocks]`, taken from the sums themselves so that both
    /// passes compare against the same numbers.
    block_ends: Tensor<2>,
    /// The sums, a block per row `[rows · blocks, CDF_BLOCK]`.
    block_rows: Tensor<2>,
    blocks: usize,
}

impl CdfSearch {
    /// # Shapes
    /// - cdf `[rows, padded_len]`, `padded_len` a multiple of `CDF_BLOCK`
    pub(crate) fn new(cdf: Tensor<2>) -> Self {
        let [rows, padded_len] = cdf.dims();
        let blocks = padded_len / CDF_BLOCK;
        let by_block = cdf.reshape([rows, blocks, CDF_BLOCK]);
        let block_ends = by_block
            .clone()
            .slice([0..rows, 0..blocks, CDF_BLOCK - 1..CDF_BLOCK])
            .reshape([rows, blocks]);
        Self {
            block_ends,
            block_rows: by_block.reshape([rows * blocks, CDF_BLOCK]),
            blocks,
        }
    }

    /// For each slot, how many sums of its row are at or below its threshold: the drawn token.
    /// A threshold at the very top counts every block: the last block is then searched, and all
    /// of it counts.
    ///
    /// # Shapes
    /// - rows `[slots]` (row of each slot), thresholds `[slots, 1]`
    /// - returns `[slots, 1]`
    pub(crate) fn count_at_or_below(
        &self,
        rows: Tensor<1, Int>,
        thresholds: Tensor<2>,
    ) -> Tensor<2, Int> {
        let [slots] = rows.dims();
        let blocks = self.blocks as i64;
        let whole_blocks = self
            .block_ends
            .clone()
            .select(0, rows.clone())
            .lower_equal(thresholds.clone())
            .int()
            .sum_dim(1)
            .clamp_max(blocks - 1);
        let block_row = rows.reshape([slots, 1]).mul_scalar(blocks) + whole_blocks.clone();
        let inside = self
            .block_rows
            .clone()
            .select(0, block_row.reshape([slots]))
            .lower_equal(thresholds)
            .int()
            .sum_dim(1);
        whole_blocks.mul_scalar(CDF_BLOCK as i64) + inside
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    /// Two rows of 300 probabilities with zeros among them (runs of equal sums) and their
    /// [`blocked_cdf`]; returns the probabilities, the sums and their padded row length.
    fn two_row_cdf(device: &burn::tensor::Device) -> (Vec<f32>, Tensor<2>, usize) {
        let vocab: usize = 300;
        let values: Vec<f32> = (0..2 * vocab)
            .map(|i| ((i * 37 % 11) as f32) / 1000.0)
            .collect();
        let cdf = blocked_cdf(Tensor::<2>::from_data(
            TensorData::new(values.clone(), [2, vocab]),
            device,
        ));
        (values, cdf, vocab.div_ceil(CDF_BLOCK) * CDF_BLOCK)
    }

    #[test]
    fn the_two_pass_search_counts_every_sum_at_or_below_the_threshold() {
        let device = burn::tensor::Device::flex();
        // Zeros make runs of equal sums, which a threshold can hit exactly.
        let (_, cdf, padded) = two_row_cdf(&device);
        let sums = cdf.clone().into_data().try_to_vec::<f32>().unwrap();
        let mut rows = Vec::new();
        let mut thresholds = Vec::new();
        for row in 0..2usize {
            let row_sums = &sums[row * padded..(row + 1) * padded];
            // Below everything, between sums, exactly on sums (block ends among them), the top.
            let mut picks = vec![0.0, row_sums[padded - 1], row_sums[padded - 1] * 2.0];
            for j in [0, 5, 127, 128, 200, 255, 256, 299] {
                picks.extend([row_sums[j], row_sums[j] + 1e-4, row_sums[j] - 1e-4]);
            }
            for t in picks {
                rows.push(row as i64);
                thresholds.push(t);
            }
        }
        let slots = rows.len();
        let got = CdfSearch::new(cdf)
            .count_at_or_below(
                Tensor::<1, Int>::from_data(TensorData::new(rows.clone(), [slots]), &device),
                Tensor::<2>::from_data(TensorData::new(thresholds.clone(), [slots, 1]), &device),
            )
            .into_data()
            .convert::<i64>()
            .try_into_vec::<i64>()
            .unwrap();
        for s in 0..slots {
            let row = rows[s] as usize;
            let want = sums[row * padded..(row + 1) * padded]
                .iter()
                .filter(|&&v| v <= thresholds[s])
                .count() as i64;
            assert_eq!(got[s], want, "row {row}, threshold {}", thresholds[s]);
        }
    }

    #[test]
    fn blocked_cdf_equals_running_sum() {
        let (values, cdf, padded) = two_row_cdf(&burn::tensor::Device::flex());
        let vocab = values.len() / 2;
        let got = cdf.into_data().try_to_vec::<f32>().unwrap();
        for r in 0..2 {
            let mut run = 0.0f32;
            for j in 0..padded {
                run += if j < vocab {
                    values[r * vocab + j]
                } else {
                    0.0
                };
                assert!((got[r * padded + j] - run).abs() < 1e-5, "row {r} col {j}");
            }
        }
    }
}
