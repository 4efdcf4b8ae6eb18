//! Tokens drawn on the device by inverse CDF, so that only their ids are read back: the
//! sampler's temperature-only draws, each comparing a uniform from the host's seeded generator
//! with the running sums of its row's `softmax(logits / temperature)`.
//!
//! Its bodies: on a GPU one kernel (one workgroup per row, [`kernels::draw_tokens`]); on the CPU
//! burn's composition (the reference body: the softmax, the blocked cumulative sums and the two-pass
//! search of [`super::inverse_cdf`]), which runs on any backend.

use burn::tensor::activation::softmax;
use burn::tensor::{Int, Tensor, TensorData};

use std::future::Future;
use std::pin::Pin;

use super::backend::Op;
use super::inverse_cdf::{CdfSearch, blocked_cdf};
use super::kernels;
use crate::model::error::ModelError;
use crate::model::readback::read_i64;

/// Slots compared at once by the composed body: its comparisons' buffers stay small.
const SLOT_GROUP: usize = 128;

/// Each slot's token from `logits` `[rows, vocab]`, row r having `counts[r]` slots in order:
/// slot s gets the first token whose running sum of weights exceeds `uniforms[s]` times its
/// row's total. A token whose weight underflows to 0 is never drawn; rounding can give `vocab`
/// (the caller takes the last token then).
///
/// # Shapes
/// - logits `[rows, vocab]`, counts `rows`, uniforms `Σ counts` in [0, 1) → ids `Σ counts`
#[derive(Clone, Debug)]
pub struct DrawTokens {
    pub logits: Tensor<2>,
    pub counts: Vec<usize>,
    pub uniforms: Vec<f32>,
    pub temperature: f64,
}

/// The ids a [`DrawTokens`] body reads back.
pub type DrawnIds = Pin<Box<dyn Future<Output = Result<Vec<i64>, ModelError>>>>;

impl Op for DrawTokens {
    type Output = DrawnIds;

    fn gpu(self) -> DrawnIds {
        let vocab = self.logits.dims()[1];
        Box::pin(checked(
            draw_by_kernel(
                self.logits,
                self.counts,
                self.uniforms,
                self.temperature as f32,
            ),
            vocab,
        ))
    }

    fn cpu(self) -> DrawnIds {
        self.reference()
    }

    fn browser_cpu(self) -> DrawnIds {
        self.reference()
    }

    /// burn's composition: the softmax, the blocked cumulative sums, the two-pass search, the
    /// slots in groups.
    fn reference(self) -> DrawnIds {
        let vocab = self.logits.dims()[1];
        Box::pin(checked(
            composed(self.logits, self.counts, self.uniforms, self.temperature),
            vocab,
        ))
    }
}

/// `draws`' ids, refused where the device marked NaN weights ([`kernels::NOT_A_NUMBER_DRAW`]) or
/// gave an id no draw can have (outside `0..=vocab`: `vocab` itself is rounding's, which the
/// caller takes as the last token): such a device's results cannot be trusted.
async fn checked(
    draws: impl Future<Output = Result<Vec<i64>, ModelError>>,
    vocab: usize,
) -> Result<Vec<i64>, ModelError> {
    let ids = draws.await?;
    if ids.contains(&kernels::NOT_A_NUMBER_DRAW) {
        return Err(ModelError::NotANumber("the logits a token was drawn from"));
    }
    match ids.iter().find(|&&id| !(0..=vocab as i64).contains(&id)) {
        Some(&id) => Err(ModelError::DrawOutOfRange { id, vocab }),
        None => Ok(ids),
    }
}

async fn draw_by_kernel(
    logits: Tensor<2>,
    counts: Vec<usize>,
    uniforms: Vec<f32>,
    temperature: f32,
) -> Result<Vec<i64>, ModelError> {
    let device = logits.device();
    let mut starts = Vec::with_capacity(counts.len() + 1);
    starts.push(0i64);
    for &count in &counts {
        starts.push(starts[starts.len() - 1] + count as i64);
    }
    let slot_starts =
        Tensor::<1, Int>::from_data(TensorData::new(starts, [counts.len() + 1]), &device);
    let slots = uniforms.len();
    let uniforms = Tensor::<1>::from_data(TensorData::new(uniforms, [slots]), &device);
    read_i64(kernels::draw_tokens(
        logits,
        slot_starts,
        uniforms,
        temperature,
    ))
    .await
}

async fn composed(
    logits: Tensor<2>,
    counts: Vec<usize>,
    uniforms: Vec<f32>,
    temperature: f64,
) -> Result<Vec<i64>, ModelError> {
    let device = logits.device();
    let rows = logits.dims()[0];
    let slot_rows: Vec<i64> = counts
        .iter()
        .enumerate()
        .flat_map(|(r, &c)| std::iter::repeat_n(r as i64, c))
        .collect();
    let cdf = blocked_cdf(softmax(logits / temperature, 1));
    let padded_len = cdf.dims()[1];
    let totals = cdf.clone().slice([0..rows, padded_len - 1..padded_len]);
    let search = CdfSearch::new(cdf);
    let mut ids = Vec::with_capacity(slot_rows.len());
    for group in (0..slot_rows.len()).step_by(SLOT_GROUP) {
        let end = (group + SLOT_GROUP).min(slot_rows.len());
        let index = Tensor::<1, Int>::from_data(
            TensorData::new(slot_rows[group..end].to_vec(), [end - group]),
            &device,
        );
        let u = Tensor::<2>::from_data(
            TensorData::new(uniforms[group..end].to_vec(), [end - group, 1]),
            &device,
        );
        let thresholds = u * totals.clone().select(0, index.clone());
        ids.extend(read_i64(search.count_at_or_below(index, thresholds)).await?);
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ids: Vec<i64>) -> Result<Vec<i64>, ModelError> {
        pollster::block_on(checked(async { Ok(ids) }, 10))
    }

    #[test]
    fn draws_inside_the_vocabulary_pass_and_others_are_refused() {
        // 10 is one past the end: rounding's, which the caller takes as the last token.
        assert_eq!(check(vec![0, 9, 10]), Ok(vec![0, 9, 10]));
        assert_eq!(
            check(vec![3, kernels::NOT_A_NUMBER_DRAW]),
            Err(ModelError::NotANumber("the logits a token was drawn from"))
        );
        assert_eq!(
            check(vec![3, 2_143_289_344]),
            Err(ModelError::DrawOutOfRange {
                id: 2_143_289_344,
                vocab: 10
            })
        );
        assert!(matches!(
            check(vec![-2]),
            Err(ModelError::DrawOutOfRange { .. })
        ));
    }
}
