//! Products against a packed weight split by columns between the calling thread and helpers
//! that hold the other columns: the browser's CPU backend on more than one core.
//!
//! The browser's wasm has no threads of its own (a standard library built with atomics needs a
//! nightly toolchain with its sources, which this project's setup does not have). Where the
//! page is cross-origin isolated the worker starts helper workers instead, each running this
//! same wasm, and hands each its columns of every packed weight once, at load
//! ([`crate::model::Transformer::share_products`]). A product then splits the weight's panels
//! into one range per thread: the calling thread computes the first range while the helpers
//! compute theirs ([`ProductHelpers`], over shared memory in the worker), and the columns are
//! put side by side. Every column is summed in the same order as in one call, so the result is
//! the same to the bit.
//!
//! A helper's range is cut into [`chunk_ranges`], which it claims one at a time; the calling
//! thread, which holds the whole weight, claims whichever of them are left once its own range
//! is done. So a helper that the system has not yet woken, or has set aside for another
//! thread, costs the product its own pieces only, computed by the calling thread, instead of the
//! whole wait: in Chromium on the 2-core machine a helper was set aside for 1–7 ms at a time
//! (several times a forward pass), where its whole range of a decoding step takes 0.1 ms.
//!
//! [`super::thread_helpers::ThreadHelpers`] is the same contract on native threads: the tests
//! hold split products against whole ones with it (natively the CPU backend runs gemm on every
//! core instead). This file knows nothing of the panels' layout: the packed weight hands it
//! its parts and computes its own columns ([`super::panel_product`]).

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// Multiply-adds from which a product is split: below, handing it over costs more than it
/// saves (a round trip through shared memory is tens of microseconds in Chromium).
pub const SPLIT_FROM: usize = 1 << 16;

/// Why helpers could not take a product (the calling thread then computes it alone).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HelperError {
    /// A helper did not answer in time: it failed, or never started.
    #[error("only {answered} of {helpers} product helpers answered within {waited_ms} ms")]
    NoAnswer {
        answered: usize,
        helpers: usize,
        waited_ms: u32,
    },
    /// The helpers are not there (never started, or stopped after a failure).
    #[error("product helpers unavailable: {0}")]
    Unavailable(String),
}

/// Pieces a helper's range is cut into at most, each claimed by the helper or the calling thread.
pub const CHUNKS: usize = 16;

/// How a helper's `panels` panels are cut into pieces claimed one at a time: [`CHUNKS`] ranges
/// of panels (fewer where there are fewer panels), in order, covering them all. The helper
/// writes its output piece after piece: piece `c` is `rows × its columns`, row-major, starting
/// at value `rows × (its first column)`.
///
/// ```
/// use clozelab::model::ops::product_helpers::chunk_ranges;
/// assert_eq!(chunk_ranges(3), vec![0..1, 1..2, 2..3]);
/// let pieces = chunk_ranges(100);
/// assert_eq!((pieces.len(), pieces[0].start, pieces[15].end), (16, 0, 100));
/// assert!(chunk_ranges(0).is_empty());
/// ```
pub fn chunk_ranges(panels: usize) -> Vec<Range<usize>> {
    let pieces = panels.min(CHUNKS);
    (0..pieces)
        .map(|c| c * panels / pieces..(c + 1) * panels / pieces)
        .collect()
}

/// Helpers that compute their part of a shared weight's products beside the calling thread.
pub trait ProductHelpers: Send + Sync + fmt::Debug {
    /// How many helpers work beside the calling thread.
    fn count(&self) -> usize;
    /// Whether they take work now (false once one has failed).
    fn available(&self) -> bool;
    /// The most values one job's input, and each helper's output, may hold.
    fn capacity(&self) -> usize;
    /// Hands helper `helper` its part of weight `weight`.
    fn share(&self, weight: usize, helper: usize, part: WeightPart) -> Result<(), HelperError>;
    /// Starts every helper on its part of `input · weight + bias` (`rows` rows).
    fn start(&self, weight: usize, input: &[f32], rows: usize) -> Result<(), HelperError>;
    /// Claims for the calling thread the next piece of helper `helper`'s part of the product
    /// started that neither has claimed yet (of `chunks`, see [`chunk_ranges`]); `None` once
    /// all are.
    fn claim(&self, helper: usize, chunks: usize) -> Option<usize>;
    /// Waits for the helpers that claimed pieces of the product started, handing each one's
    /// output (`rows ×` its columns, piece after piece as [`chunk_ranges`] says; the pieces
    /// the calling thread claimed hold anything) to `take` with its index.
    fn join(&self, take: &mut dyn FnMut(usize, &[f32])) -> Result<(), HelperError>;
}

/// A helper's part of a packed weight: `[in, out]` columns of it, its panels as stored, and
/// its columns of the bias where the weight has one.
#[derive(Debug, Clone)]
pub struct WeightPart {
    pub n_in: usize,
    pub n_out: usize,
    pub panels: Vec<f32>,
    pub bias: Option<Vec<f32>>,
}

/// A packed weight's split: the panels the calling thread computes and each helper's columns.
#[derive(Clone)]
pub struct SplitWeight {
    helpers: Arc<dyn ProductHelpers>,
    weight: usize,
    own: Range<usize>,
    /// Helper `h`'s panels.
    parts: Vec<Range<usize>>,
    panel_width: usize,
    n_out: usize,
}

impl fmt::Debug for SplitWeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SplitWeight")
            .field("weight", &self.weight)
            .field("own_panels", &self.own)
            .field("helper_panels", &self.parts)
            .finish()
    }
}

impl SplitWeight {
    /// Splits a weight of `panel_count` panels of `panel_width` columns (`n_out` in all)
    /// evenly between the calling thread and `helpers`, handing each helper the part
    /// `part_of(its panels)`; `None` where there is nothing to split (no helpers, fewer panels
    /// than threads).
    pub fn share(
        helpers: &Arc<dyn ProductHelpers>,
        weight: usize,
        [panel_count, panel_width, n_out]: [usize; 3],
        part_of: impl Fn(Range<usize>) -> WeightPart,
    ) -> Result<Option<Self>, HelperError> {
        let threads = helpers.count() + 1;
        if threads < 2 || panel_count < threads {
            return Ok(None);
        }
        let ranges: Vec<Range<usize>> = (0..threads)
            .map(|t| t * panel_count / threads..(t + 1) * panel_count / threads)
            .collect();
        for (helper, range) in ranges[1..].iter().enumerate() {
            helpers.share(weight, helper, part_of(range.clone()))?;
        }
        Ok(Some(Self {
            helpers: helpers.clone(),
            weight,
            own: ranges[0].clone(),
            parts: ranges[1..].to_vec(),
            panel_width,
            n_out,
        }))
    }

    /// The output columns of `panels`.
    fn columns(&self, panels: &Range<usize>) -> Range<usize> {
        let end = (panels.end * self.panel_width).min(self.n_out);
        (panels.start * self.panel_width).min(end)..end
    }

    /// `input · weight + bias` (`[n_in, n_out]`) computed with the helpers, in chunks of rows
    /// that fit their shared memory, `compute(chunk, rows, panels)` giving the calling thread's
    /// columns of `panels` (its own range, then the pieces of the helpers' it claims); `None`
    /// where the calling thread should compute it alone: a product too small to pay for the
    /// hand-over, helpers that failed (the browser's pool then stops itself, so they are not
    /// asked again) or an answer of the wrong size.
    pub fn product(
        &self,
        [n_in, n_out]: [usize; 2],
        input: &[f32],
        rows: usize,
        compute: impl Fn(&[f32], usize, Range<usize>) -> Vec<f32>,
    ) -> Option<Vec<f32>> {
        let work = rows.saturating_mul(n_in).saturating_mul(n_out);
        if work < SPLIT_FROM || !self.helpers.available() {
            return None;
        }
        let widest = self.parts.iter().map(|p| self.columns(p).len()).max()?;
        let chunk_rows = self.helpers.capacity() / n_in.max(widest).max(1);
        if chunk_rows == 0 {
            return None;
        }
        let pieces: Vec<Vec<Range<usize>>> =
            self.parts.iter().map(|p| chunk_ranges(p.len())).collect();
        let mut output = vec![0.0; rows * n_out];
        // Writes `values` (`count × columns`, row-major) into the output's rows from `first`.
        let mut place = |first: usize, count: usize, columns: Range<usize>, values: &[f32]| {
            for (r, row) in values
                .chunks_exact(columns.len().max(1))
                .take(count)
                .enumerate()
            {
                output[(first + r) * n_out + columns.start..][..columns.len()].copy_from_slice(row);
            }
        };
        for first in (0..rows).step_by(chunk_rows) {
            let count = chunk_rows.min(rows - first);
            let chunk = &input[first * n_in..(first + count) * n_in];
            self.helpers.start(self.weight, chunk, count).ok()?;
            place(
                first,
                count,
                self.columns(&self.own),
                &compute(chunk, count, self.own.clone()),
            );
            let mut claimed = vec![Vec::new(); self.parts.len()];
            for (helper, part) in self.parts.iter().enumerate() {
                while let Some(piece) = self.helpers.claim(helper, pieces[helper].len()) {
                    let panels = pieces[helper].get(piece)?;
                    let panels = part.start + panels.start..part.start + panels.end;
                    place(
                        first,
                        count,
                        self.columns(&panels),
                        &compute(chunk, count, panels),
                    );
                    claimed[helper].push(piece);
                }
            }
            let mut misfit = false;
            self.helpers
                .join(&mut |helper, values| {
                    let Some(part) = self.parts.get(helper) else {
                        misfit = true;
                        return;
                    };
                    let base = self.columns(part).start;
                    if values.len() != count * self.columns(part).len() {
                        misfit = true;
                        return;
                    }
                    for (piece, panels) in pieces[helper].iter().enumerate() {
                        if claimed[helper].contains(&piece) {
                            continue;
                        }
                        let columns =
                            self.columns(&(part.start + panels.start..part.start + panels.end));
                        let from = count * (columns.start - base);
                        place(
                            first,
                            count,
                            columns.clone(),
                            &values[from..from + count * columns.len()],
                        );
                    }
                })
                .ok()?;
            if misfit {
                return None;
            }
        }
        Some(output)
    }
}
