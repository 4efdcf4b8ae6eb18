//! Products against a layer's weight packed once into column panels: the browser's CPU backend
//! (the blocks' four projections, and `wteᵀ` for the LM head, see `embedding`): the
//! [`super::backend::Op::browser_cpu`] body of those ops.
//!
//! gemm (under burn-flex) packs a weight into its kernel's layout on every product of more than
//! one row, and its single-threaded wasm kernel runs short products (a prompt, a tree level of a
//! few rows) well below its speed on long ones. ORT's wasm backend packs its weights once when a
//! session starts. [`PanelWeight`] does the same: the weight `[in, out]` is stored as panels of
//! [`PANEL`] output columns, each `[in, PANEL]` contiguous, so a product streams each weight once
//! with no per-call copy. In Chromium on the 2-core machine the twelve blocks' products of a
//! GPT-2-small-shaped model took, against burn's `matmul` (median of 5, 2026-11-26): 16.2 against
//! 32.8 ms at 2 rows, 61.6 against 88.4 at 16, 228 against 275 at 64 and 905 against 1023 at 256.
//!
//! The kernel works on tiles of 4 input rows × [`PANEL`] outputs with the sum over `in` unrolled
//! four times (unrolled once, it was slower than gemm from 64 rows on); a single row (a decoding
//! step) has its own loop, since a tile would compute three empty rows beside it. On wasm with `simd128` it
//! is written with wasm's SIMD instructions; elsewhere the same tiles in plain arrays serve the
//! tests (natively the CPU backend keeps gemm, which runs on every core).

use std::ops::Range;
use std::sync::Arc;

use super::product_helpers::{HelperError, ProductHelpers, SplitWeight, WeightPart, chunk_ranges};
pub use crate::model::error::PanelError;

/// Output columns per panel: three 4-lane vectors.
pub const PANEL: usize = 12;

/// Rows per tile of the input.
const TILE_ROWS: usize = 4;

/// A weight `[in, out]` stored as panels `[ceil(out / PANEL), in, PANEL]` (the last panel padded
/// with zero columns).
#[derive(Debug, Clone)]
pub struct PanelWeight {
    n_in: usize,
    n_out: usize,
    panels: Arc<[f32]>,
    /// Added to each output row (`out` values), where the layer has one.
    bias: Option<Arc<[f32]>>,
    /// Helpers holding parts of the weight, once it is shared ([`PanelWeight::share_with`]).
    split: Option<SplitWeight>,
}

impl PanelWeight {
    /// Packs a row-major weight `[n_in, n_out]`.
    ///
    /// ```
    /// use clozelab::model::ops::panel_product::PanelWeight;
    /// // [2, 3]: x · w for x = [1, 2] is [1·1 + 2·4, 1·2 + 2·5, 1·3 + 2·6].
    /// let w = PanelWeight::pack(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3).unwrap();
    /// assert_eq!(w.product(&[1.0, 2.0], 1).unwrap(), vec![9.0, 12.0, 15.0]);
    /// assert!(PanelWeight::pack(&[1.0; 5], 2, 3).is_err());
    /// ```
    pub fn pack(weight: &[f32], n_in: usize, n_out: usize) -> Result<Self, PanelError> {
        if n_in.checked_mul(n_out) != Some(weight.len()) {
            return Err(PanelError::WeightShape {
                values: weight.len(),
                n_in,
                n_out,
            });
        }
        let n_panels = n_out.div_ceil(PANEL);
        let mut panels = vec![0.0; n_panels * n_in * PANEL];
        for (k, row) in weight.chunks_exact(n_out.max(1)).enumerate() {
            for (o, &value) in row.iter().enumerate() {
                panels[((o / PANEL) * n_in + k) * PANEL + o % PANEL] = value;
            }
        }
        Ok(Self {
            n_in,
            n_out,
            panels: panels.into(),
            bias: None,
            split: None,
        })
    }

    /// Packs the transpose of a row-major `[n_rows, width]` matrix: the weight `[width, n_rows]`
    /// (GPT-2's tied LM head is `wteᵀ`).
    ///
    /// ```
    /// use clozelab::model::ops::panel_product::PanelWeight;
    /// // Rows [1, 2] and [3, 4]: x · rowsᵀ for x = [1, 1] is [3, 7]; column 1 is row 1.
    /// let w = PanelWeight::pack_transposed(&[1.0, 2.0, 3.0, 4.0], 2, 2).unwrap();
    /// assert_eq!(w.product(&[1.0, 1.0], 1).unwrap(), vec![3.0, 7.0]);
    /// assert_eq!(w.column(1), Some(vec![3.0, 4.0]));
    /// assert_eq!(w.column(2), None);
    /// ```
    pub fn pack_transposed(rows: &[f32], n_rows: usize, width: usize) -> Result<Self, PanelError> {
        if n_rows.checked_mul(width) != Some(rows.len()) {
            return Err(PanelError::WeightShape {
                values: rows.len(),
                n_in: width,
                n_out: n_rows,
            });
        }
        let mut panels = vec![0.0; n_rows.div_ceil(PANEL) * width * PANEL];
        for (o, row) in rows.chunks_exact(width.max(1)).enumerate() {
            let panel = &mut panels[(o / PANEL) * width * PANEL..][..width * PANEL];
            for (k, &value) in row.iter().enumerate() {
                panel[k * PANEL + o % PANEL] = value;
            }
        }
        Ok(Self {
            n_in: width,
            n_out: n_rows,
            panels: panels.into(),
            bias: None,
            split: None,
        })
    }

    /// Column `o` of the weight (`in` values; for the LM head, token `o`'s embedding), or `None`
    /// past the last.
    pub fn column(&self, o: usize) -> Option<Vec<f32>> {
        if o >= self.n_out {
            return None;
        }
        let panel = &self.panels[(o / PANEL) * self.n_in * PANEL..][..self.n_in * PANEL];
        Some(
            panel
                .iter()
                .skip(o % PANEL)
                .step_by(PANEL)
                .copied()
                .collect(),
        )
    }

    /// `[in, out]`.
    pub fn dims(&self) -> [usize; 2] {
        [self.n_in, self.n_out]
    }

    /// A weight from its panels as stored, `[ceil(out / PANEL), in, PANEL]` (a helper receives
    /// its part so, from [`PanelWeight::part`]).
    pub fn from_panels(n_in: usize, n_out: usize, panels: Vec<f32>) -> Result<Self, PanelError> {
        if n_out.div_ceil(PANEL).checked_mul(n_in * PANEL) != Some(panels.len()) {
            return Err(PanelError::WeightShape {
                values: panels.len(),
                n_in,
                n_out,
            });
        }
        Ok(Self {
            n_in,
            n_out,
            panels: panels.into(),
            bias: None,
            split: None,
        })
    }

    /// This weight with `bias` (`out` values), which its products add to each output row as
    /// they compute it, on whichever thread computes the columns (a burn pass over the whole
    /// output on the worker's thread before). Shared parts carry their columns of it.
    ///
    /// ```
    /// use clozelab::model::ops::panel_product::PanelWeight;
    /// let w = PanelWeight::pack(&[1.0, 2.0], 1, 2).unwrap().with_bias(vec![0.5, -0.5]).unwrap();
    /// assert_eq!(w.product(&[1.0], 1).unwrap(), vec![1.5, 1.5]);
    /// assert!(PanelWeight::pack(&[1.0, 2.0], 1, 2).unwrap().with_bias(vec![0.5]).is_err());
    /// ```
    pub fn with_bias(mut self, bias: Vec<f32>) -> Result<Self, PanelError> {
        if bias.len() != self.n_out {
            return Err(PanelError::BiasShape {
                values: bias.len(),
                n_out: self.n_out,
            });
        }
        self.bias = Some(bias.into());
        Ok(self)
    }

    /// A helper's part as a weight again, with its bias where it has one.
    pub fn from_part(part: WeightPart) -> Result<Self, PanelError> {
        let weight = Self::from_panels(part.n_in, part.n_out, part.panels)?;
        match part.bias {
            Some(bias) => weight.with_bias(bias),
            None => Ok(weight),
        }
    }

    /// How many panels the weight is stored in (`ceil(out / PANEL)`).
    pub fn panel_count(&self) -> usize {
        self.n_out.div_ceil(PANEL)
    }

    /// The weight's columns in `panels` (a range of panel indices), copied once: a helper's
    /// part of it, which [`PanelWeight::from_panels`] makes a weight again.
    ///
    /// ```
    /// use clozelab::model::ops::panel_product::{PanelWeight, PANEL};
    /// let weight: Vec<f32> = (0..2 * 30).map(|v| v as f32).collect();
    /// let w = PanelWeight::pack(&weight, 2, 30).unwrap();
    /// let part = w.part(1..3);
    /// assert_eq!([part.n_in, part.n_out], [2, 30 - PANEL]);
    /// let part = PanelWeight::from_part(part).unwrap();
    /// assert_eq!(part.column(0), w.column(PANEL));
    /// ```
    pub fn part(&self, panels: Range<usize>) -> WeightPart {
        let panels = panels.start.min(self.panel_count())..panels.end.min(self.panel_count());
        let (first, last) = (panels.start * PANEL, (panels.end * PANEL).min(self.n_out));
        let size = self.n_in * PANEL;
        WeightPart {
            n_in: self.n_in,
            n_out: last.saturating_sub(first),
            panels: self.panels[panels.start * size..panels.end * size].to_vec(),
            bias: self
                .bias
                .as_ref()
                .map(|bias| bias[first.min(last)..last].to_vec()),
        }
    }

    /// Shares the weight's panels out among `helpers`, so that products big enough to pay for
    /// the hand-over are computed by the calling thread and the helpers together (see
    /// [`super::product_helpers`]); `weight` is the id the helpers know it by. With no
    /// helpers, or fewer panels than threads, products stay on the calling thread.
    pub fn share_with(
        &mut self,
        helpers: &Arc<dyn ProductHelpers>,
        weight: usize,
    ) -> Result<(), HelperError> {
        let shape = [self.panel_count(), PANEL, self.n_out];
        self.split = SplitWeight::share(helpers, weight, shape, |panels| self.part(panels))?;
        Ok(())
    }

    /// Whether products may be split over helpers.
    pub fn is_shared(&self) -> bool {
        self.split.is_some()
    }

    /// `input · weight + bias` for `rows` row-major input rows of `in` values: `rows × out`
    /// values.
    pub fn product(&self, input: &[f32], rows: usize) -> Result<Vec<f32>, PanelError> {
        let n_in = self.n_in;
        if rows.checked_mul(n_in) != Some(input.len()) {
            return Err(PanelError::InputShape {
                values: input.len(),
                rows,
                n_in,
            });
        }
        if let Some(split) = &self.split
            && let Some(output) = split.product(self.dims(), input, rows, |chunk, count, panels| {
                self.product_of_panels(chunk, count, panels)
            })
        {
            return Ok(output);
        }
        Ok(self.product_of_panels(input, rows, 0..self.panel_count()))
    }

    /// A helper's side of a split product: `input · weight + bias` (this weight being the
    /// helper's part) piece by piece ([`chunk_ranges`]), for each piece that `claim` hands it (`None`:
    /// the rest are taken), handing `write` where its values go in the helper's output
    /// (`rows × (its first column)`) and the values (`rows ×` its columns, row-major). Returns
    /// how many pieces it computed.
    ///
    /// ```
    /// use clozelab::model::ops::panel_product::{PanelWeight, PANEL};
    /// let w = PanelWeight::pack(&vec![1.0; 2 * 3 * PANEL], 2, 3 * PANEL).unwrap();
    /// let mut output = vec![0.0; 3 * PANEL];
    /// let mut next = 1; // piece 0 was claimed by someone else
    /// let computed = w.pieces_product(&[1.0, 2.0], 1, || { next += 1; (next <= 3).then_some(next - 1) },
    ///     |at, values| output[at..at + values.len()].copy_from_slice(values));
    /// assert_eq!(computed, 2);
    /// assert_eq!((output[0], output[PANEL], output[3 * PANEL - 1]), (0.0, 3.0, 3.0));
    /// ```
    pub fn pieces_product(
        &self,
        input: &[f32],
        rows: usize,
        mut claim: impl FnMut() -> Option<usize>,
        mut write: impl FnMut(usize, &[f32]),
    ) -> usize {
        let pieces = chunk_ranges(self.panel_count());
        let mut computed = 0;
        while let Some(panels) = claim().and_then(|piece| pieces.get(piece)) {
            let values = self.product_of_panels(input, rows, panels.clone());
            write(rows * panels.start * PANEL, &values);
            computed += 1;
        }
        computed
    }

    /// `input · weight + bias` over the columns of `panels` only: `rows × width` values,
    /// `width` the number of those columns. Each column is summed in the same order whatever the
    /// range, and its bias added the same way, so a product split by panels equals the whole
    /// one exactly.
    pub fn product_of_panels(&self, input: &[f32], rows: usize, panels: Range<usize>) -> Vec<f32> {
        let first_column = panels.start * PANEL;
        let width = (panels.end * PANEL).min(self.n_out) - first_column;
        let mut output = self.sums_of_panels(input, rows, panels);
        if let Some(bias) = &self.bias
            && width > 0
        {
            let bias = &bias[first_column..first_column + width];
            for row in output.chunks_exact_mut(width) {
                row.iter_mut().zip(bias).for_each(|(value, b)| *value += b);
            }
        }
        output
    }

    /// `input · weight` over the columns of `panels` only (see [`Self::product_of_panels`]).
    fn sums_of_panels(&self, input: &[f32], rows: usize, panels: Range<usize>) -> Vec<f32> {
        let n_in = self.n_in;
        let first_column = panels.start * PANEL;
        let width = (panels.end * PANEL).min(self.n_out) - first_column;
        let mut output = vec![0.0; rows * width];
        if n_in == 0 || width == 0 {
            return output;
        }
        let chosen = self
            .panels
            .chunks_exact(n_in * PANEL)
            .enumerate()
            .skip(panels.start)
            .take(panels.len());
        if rows == 1 {
            // A decoding step: a tile would compute three empty rows beside the one.
            for (p, panel) in chosen {
                let columns = PANEL.min(self.n_out - p * PANEL);
                let start = p * PANEL - first_column;
                let sums = row_product(panel, input);
                output[start..start + columns].copy_from_slice(&sums[..columns]);
            }
            return output;
        }
        // The input as tiles [tile, in, TILE_ROWS] (missing rows zero), so that the kernel reads
        // one tile's values at each step of the sum together.
        let tiles = rows.div_ceil(TILE_ROWS);
        let mut packed_input = vec![0.0; tiles * n_in * TILE_ROWS];
        for (row, values) in input.chunks_exact(n_in).enumerate() {
            let (tile, lane) = (row / TILE_ROWS, row % TILE_ROWS);
            for (k, &value) in values.iter().enumerate() {
                packed_input[(tile * n_in + k) * TILE_ROWS + lane] = value;
            }
        }
        for (p, panel) in chosen {
            let columns = PANEL.min(self.n_out - p * PANEL);
            for tile in 0..tiles {
                let tile_input =
                    &packed_input[tile * n_in * TILE_ROWS..(tile + 1) * n_in * TILE_ROWS];
                let sums = tile_product(panel, tile_input);
                let filled = TILE_ROWS.min(rows - tile * TILE_ROWS);
                for (lane, row_sums) in sums.iter().enumerate().take(filled) {
                    let start = (tile * TILE_ROWS + lane) * width + p * PANEL - first_column;
                    output[start..start + columns].copy_from_slice(&row_sums[..columns]);
                }
            }
        }
        output
    }
}

/// One tile's sums: `sums[lane][j] = Σ_k input[k][lane] · panel[k][j]`, with `panel` `[in, PANEL]`
/// and `input` `[in, TILE_ROWS]`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn tile_product(panel: &[f32], input: &[f32]) -> [[f32; PANEL]; TILE_ROWS] {
    use core::arch::wasm32::*;
    let n_in = input.len() / TILE_ROWS;
    debug_assert_eq!(panel.len(), n_in * PANEL);
    let mut acc = [f32x4_splat(0.0); 12];
    // One step of the sum: three vectors of the panel's row k times each lane's input value.
    // Safety: `k < n_in`, so the panel's 12 values at k·PANEL and the input's 4 at k·TILE_ROWS
    // lie inside the slices (asserted above; unaligned loads are allowed on wasm).
    #[inline(always)]
    unsafe fn step(acc: &mut [v128; 12], panel: *const f32, input: *const f32, k: usize) {
        unsafe {
            let w = panel.add(k * PANEL) as *const v128;
            let (w0, w1, w2) = (v128_load(w), v128_load(w.add(1)), v128_load(w.add(2)));
            let x = input.add(k * TILE_ROWS) as *const u32;
            for lane in 0..TILE_ROWS {
                let xs = v128_load32_splat(x.add(lane));
                acc[lane * 3] = f32x4_add(acc[lane * 3], f32x4_mul(w0, xs));
                acc[lane * 3 + 1] = f32x4_add(acc[lane * 3 + 1], f32x4_mul(w1, xs));
                acc[lane * 3 + 2] = f32x4_add(acc[lane * 3 + 2], f32x4_mul(w2, xs));
            }
        }
    }
    let (w, x) = (panel.as_ptr(), input.as_ptr());
    let mut k = 0;
    // Unrolled four times: V8 does not unroll, and the loop's own cost was a fifth of the time.
    unsafe {
        while k + 4 <= n_in {
            step(&mut acc, w, x, k);
            step(&mut acc, w, x, k + 1);
            step(&mut acc, w, x, k + 2);
            step(&mut acc, w, x, k + 3);
            k += 4;
        }
        while k < n_in {
            step(&mut acc, w, x, k);
            k += 1;
        }
    }
    let mut sums = [[0.0; PANEL]; TILE_ROWS];
    for (lane, row) in sums.iter_mut().enumerate() {
        for part in 0..3 {
            row[part * 4..part * 4 + 4].copy_from_slice(&lanes(acc[lane * 3 + part]));
        }
    }
    sums
}

/// A vector's four values.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn lanes(v: core::arch::wasm32::v128) -> [f32; 4] {
    use core::arch::wasm32::f32x4_extract_lane;
    [
        f32x4_extract_lane::<0>(v),
        f32x4_extract_lane::<1>(v),
        f32x4_extract_lane::<2>(v),
        f32x4_extract_lane::<3>(v),
    ]
}

/// One row's sums: `sums[j] = Σ_k input[k] · panel[k][j]`, with `panel` `[in, PANEL]`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn row_product(panel: &[f32], input: &[f32]) -> [f32; PANEL] {
    use core::arch::wasm32::*;
    let n_in = input.len();
    debug_assert_eq!(panel.len(), n_in * PANEL);
    // Four steps of the sum at once, each into its own accumulators: one chain of additions
    // would wait on each addition's latency.
    let mut acc = [f32x4_splat(0.0); 12];
    // Safety: `k < n_in`, so the panel's 12 values at k·PANEL and the input's value at k lie
    // inside the slices (asserted above).
    #[inline(always)]
    unsafe fn step(acc: &mut [v128], panel: *const f32, input: *const f32, k: usize) {
        unsafe {
            let w = panel.add(k * PANEL) as *const v128;
            let xs = v128_load32_splat(input.add(k) as *const u32);
            acc[0] = f32x4_add(acc[0], f32x4_mul(v128_load(w), xs));
            acc[1] = f32x4_add(acc[1], f32x4_mul(v128_load(w.add(1)), xs));
            acc[2] = f32x4_add(acc[2], f32x4_mul(v128_load(w.add(2)), xs));
        }
    }
    let (w, x) = (panel.as_ptr(), input.as_ptr());
    let mut k = 0;
    unsafe {
        while k + 4 <= n_in {
            step(&mut acc[0..3], w, x, k);
            step(&mut acc[3..6], w, x, k + 1);
            step(&mut acc[6..9], w, x, k + 2);
            step(&mut acc[9..12], w, x, k + 3);
            k += 4;
        }
        while k < n_in {
            step(&mut acc[0..3], w, x, k);
            k += 1;
        }
    }
    let mut sums = [0.0; PANEL];
    for part in 0..3 {
        let v = f32x4_add(
            f32x4_add(acc[part], acc[3 + part]),
            f32x4_add(acc[6 + part], acc[9 + part]),
        );
        sums[part * 4..part * 4 + 4].copy_from_slice(&lanes(v));
    }
    sums
}

/// The same row in plain arrays (the tests' path).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn row_product(panel: &[f32], input: &[f32]) -> [f32; PANEL] {
    let mut sums = [0.0; PANEL];
    for (weights, &x) in panel.chunks_exact(PANEL).zip(input) {
        for (sum, &w) in sums.iter_mut().zip(weights) {
            *sum += w * x;
        }
    }
    sums
}

/// The same tile in plain arrays (the tests' path: natively the CPU backend uses gemm).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn tile_product(panel: &[f32], input: &[f32]) -> [[f32; PANEL]; TILE_ROWS] {
    let mut sums = [[0.0; PANEL]; TILE_ROWS];
    for (weights, values) in panel.chunks_exact(PANEL).zip(input.chunks_exact(TILE_ROWS)) {
        for (row, &x) in sums.iter_mut().zip(values) {
            for (sum, &w) in row.iter_mut().zip(weights) {
                *sum += w * x;
            }
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: u32) -> Vec<f32> {
        (0..n as u32)
            .map(|i| {
                ((i.wrapping_mul(2_654_435_761).wrapping_add(seed)) % 1000) as f32 / 500.0 - 1.0
            })
            .collect()
    }

    fn naive(input: &[f32], rows: usize, weight: &[f32], n_in: usize, n_out: usize) -> Vec<f32> {
        let mut out = vec![0.0; rows * n_out];
        for r in 0..rows {
            for o in 0..n_out {
                out[r * n_out + o] = (0..n_in)
                    .map(|k| input[r * n_in + k] * weight[k * n_out + o])
                    .sum();
            }
        }
        out
    }

    #[test]
    fn products_equal_the_plain_sum_for_any_rows_and_widths() {
        // Rows around the tile's 4 and widths around the panel's 12, sums over 1 to 9 values
        // (the unrolled steps and the ones after them).
        for (n_in, n_out) in [(1, 1), (5, 12), (8, 13), (9, 25), (4, 36)] {
            let weight = values(n_in * n_out, 7);
            let packed = PanelWeight::pack(&weight, n_in, n_out).unwrap();
            assert_eq!(packed.dims(), [n_in, n_out]);
            for rows in [1, 3, 4, 5, 9] {
                let input = values(rows * n_in, rows as u32);
                let got = packed.product(&input, rows).unwrap();
                let want = naive(&input, rows, &weight, n_in, n_out);
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(&want) {
                    assert!(
                        (g - w).abs() < 1e-5,
                        "[{n_in}, {n_out}] × {rows} rows: {g} against {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_transposed_pack_is_the_pack_of_the_transpose() {
        let (n_rows, width) = (27, 5);
        let rows = values(n_rows * width, 11);
        let transposed: Vec<f32> = (0..width)
            .flat_map(|k| (0..n_rows).map(move |o| (k, o)))
            .map(|(k, o)| rows[o * width + k])
            .collect();
        let a = PanelWeight::pack_transposed(&rows, n_rows, width).unwrap();
        let b = PanelWeight::pack(&transposed, width, n_rows).unwrap();
        assert_eq!(a.dims(), [width, n_rows]);
        assert_eq!(a.panels, b.panels);
        for o in [0, 11, 12, 26] {
            assert_eq!(
                a.column(o).unwrap(),
                rows[o * width..(o + 1) * width].to_vec()
            );
        }
        assert_eq!(a.column(n_rows), None);
    }

    #[test]
    fn wrong_shapes_are_errors() {
        assert_eq!(
            PanelWeight::pack(&[0.0; 6], 4, 2).unwrap_err(),
            PanelError::WeightShape {
                values: 6,
                n_in: 4,
                n_out: 2
            }
        );
        let packed = PanelWeight::pack(&[1.0; 6], 2, 3).unwrap();
        assert_eq!(
            packed.product(&[1.0; 5], 2).unwrap_err(),
            PanelError::InputShape {
                values: 5,
                rows: 2,
                n_in: 2
            }
        );
        assert_eq!(packed.product(&[], 0).unwrap(), Vec::<f32>::new());
    }
}
