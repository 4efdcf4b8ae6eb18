//! Calibration: expected calibration error under either binning convention, and the bins of a
//! reliability diagram.

/// Where a confidence of exactly 1 goes when binning for ECE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EceConvention {
    /// In the last bin, [0.9, 1.0] (Guo et al.): every prediction counts. clozelab's default.
    #[default]
    LastBin,
    /// In no bin, as the paper's released code does (bins are [lo, hi), so 1.0 falls outside
    /// every one): such predictions still count in N but add no gap. Reproduces the published
    /// numbers (e.g. ChatGPT's ECE of 0.37, against 0.44 with the last-bin rule).
    DropCertain,
}

/// Expected calibration error (Guo et al. 2017) of (confidence, correct) pairs over `bins`
/// equal-width confidence bins: ECE = Σ_b (n_b / N) |acc_b − conf_b|. A confidence of exactly 1
/// falls in the last bin (see [`ece_with`] for the paper's convention). `None` when empty or
/// `bins` is 0.
///
/// ```
/// use clozelab::analysis::metrics::ece;
/// assert_eq!(ece(&[(1.0, true), (1.0, true)], 10), Some(0.0));
/// assert_eq!(ece(&[(0.9, false)], 10), Some(0.9));
/// ```
pub fn ece(predictions: &[(f64, bool)], bins: usize) -> Option<f64> {
    ece_with(predictions, bins, EceConvention::LastBin)
}

/// [`ece`] with a choice of where confidence 1 goes.
///
/// ```
/// use clozelab::analysis::metrics::{EceConvention, ece_with};
/// let wrong_and_sure = [(1.0, false), (0.75, true)];
/// assert_eq!(ece_with(&wrong_and_sure, 10, EceConvention::LastBin), Some(0.625));
/// // The certain miss is dropped from every bin but still counts in N = 2.
/// assert_eq!(ece_with(&wrong_and_sure, 10, EceConvention::DropCertain), Some(0.125));
/// ```
pub fn ece_with(
    predictions: &[(f64, bool)],
    bins: usize,
    convention: EceConvention,
) -> Option<f64> {
    if predictions.is_empty() || bins == 0 {
        return None;
    }
    let mut count = vec![0usize; bins];
    let mut conf = vec![0.0; bins];
    let mut acc = vec![0.0; bins];
    for &(c, correct) in predictions {
        let c = c.clamp(0.0, 1.0);
        if c >= 1.0 && convention == EceConvention::DropCertain {
            continue;
        }
        let b = ((c * bins as f64) as usize).min(bins - 1);
        count[b] += 1;
        conf[b] += c;
        acc[b] += if correct { 1.0 } else { 0.0 };
    }
    let n = predictions.len() as f64;
    Some(
        (0..bins)
            .filter(|b| count[*b] > 0)
            .map(|b| {
                (count[b] as f64 / n) * (acc[b] / count[b] as f64 - conf[b] / count[b] as f64).abs()
            })
            .sum(),
    )
}

/// Reliability diagram data: for each of `bins` equal-width confidence bins, (predictions,
/// mean confidence, accuracy); empty bins give (0, NaN-free zeros). Confidence 1 goes to the
/// last bin, or nowhere under [`EceConvention::DropCertain`].
pub fn reliability_bins(
    predictions: &[(f64, bool)],
    bins: usize,
    convention: EceConvention,
) -> Vec<(usize, f64, f64)> {
    let mut out = vec![(0usize, 0.0, 0.0); bins];
    for &(c, correct) in predictions {
        let c = c.clamp(0.0, 1.0);
        if bins == 0 || (c >= 1.0 && convention == EceConvention::DropCertain) {
            continue;
        }
        let b = ((c * bins as f64) as usize).min(bins - 1);
        out[b].0 += 1;
        out[b].1 += c;
        out[b].2 += if correct { 1.0 } else { 0.0 };
    }
    out.into_iter()
        .map(|(n, c, a)| {
            if n == 0 {
                (0, 0.0, 0.0)
            } else {
                (n, c / n as f64, a / n as f64)
            }
        })
        .collect()
}
