//! Interpretation curves: how a mean TVD moves as contexts are replaced by the oracle's.

use super::summary::wasserstein1;
use crate::rng::SplitMix64;

/// One point of the interpretation curve.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CurvePoint {
    /// Percent of contexts whose model TVD was replaced by the oracle's.
    pub percent: u32,
    /// Mean TVD after the replacement (averaged over the random draws).
    pub mean_tvd: f64,
    /// W₁ between the TVDs after the replacement and the oracle's TVDs (averaged over draws).
    pub w1_to_oracle: f64,
}

/// The interpretation curve of Ilia & Aziz (2024): for each k in `percents`, a *random* k % of
/// the contexts (⌊k·n/100 + ½⌋ of them, drawn uniformly without replacement, `draws` times from
/// `seed`) take the oracle's TVD instead of the model's; the point is the mean of the resulting
/// TVDs and the W₁ distance of their distribution to the oracle's, each averaged over the draws.
/// At k = 0 it is the model; at 100 the oracle (W₁ = 0). `None` when the inputs are empty or of
/// different lengths, or `draws` is 0.
///
/// In expectation the mean falls linearly from the model's to the oracle's; W₁ says how far the
/// *distribution* of TVDs still is from an oracle's, which the mean alone hides.
///
/// ```
/// use clozelab::analysis::metrics::interpretation_curve;
/// let model = [0.9, 0.5, 0.7, 0.3];
/// let oracle = [0.4, 0.4, 0.2, 0.4];
/// let curve = interpretation_curve(&model, &oracle, &[0, 50, 100], 200, 1).unwrap();
/// assert!((curve[0].mean_tvd - 0.6).abs() < 1e-12);
/// assert!((curve[2].mean_tvd - 0.35).abs() < 1e-12 && curve[2].w1_to_oracle == 0.0);
/// // Halfway, on average halfway: 0.475 ± the randomness of which contexts were drawn.
/// assert!((curve[1].mean_tvd - 0.475).abs() < 0.02);
/// ```
pub fn interpretation_curve(
    model: &[f64],
    oracle: &[f64],
    percents: &[u32],
    draws: usize,
    seed: u64,
) -> Option<Vec<CurvePoint>> {
    if model.is_empty() || model.len() != oracle.len() || draws == 0 {
        return None;
    }
    let n = model.len();
    let mut rng = SplitMix64::new(seed);
    percents
        .iter()
        .map(|&k| {
            let replaced = (k.min(100) as usize * n + 50) / 100;
            let (mut mean_sum, mut w1_sum) = (0.0, 0.0);
            for _ in 0..draws {
                let mut order: Vec<usize> = (0..n).collect();
                rng.choose_to_front(&mut order, replaced);
                let mut values = model.to_vec();
                for &i in &order[..replaced] {
                    values[i] = oracle[i];
                }
                mean_sum += values.iter().sum::<f64>() / n as f64;
                w1_sum += wasserstein1(&values, oracle)?;
            }
            Some(CurvePoint {
                percent: k,
                mean_tvd: mean_sum / draws as f64,
                w1_to_oracle: w1_sum / draws as f64,
            })
        })
        .collect()
}

/// Not the paper's curve: the mean TVD when the model's *worst* k % of contexts (largest model −
/// oracle gap) take the oracle's TVD, k = 0..=100. It answers "how good would the model be if
/// its worst contexts were as good as a person", and can fall below the oracle's mean (once the
/// contexts where the model beats the oracle are all that is left). `None` when the inputs are
/// empty or of different lengths.
///
/// ```
/// use clozelab::analysis::metrics::worst_first_curve;
/// let curve = worst_first_curve(&[0.9, 0.5], &[0.4, 0.4]).unwrap();
/// assert_eq!(curve.len(), 101);
/// assert!((curve[0] - 0.7).abs() < 1e-12 && (curve[100] - 0.4).abs() < 1e-12);
/// assert!((curve[50] - 0.45).abs() < 1e-12);
/// ```
pub fn worst_first_curve(model: &[f64], oracle: &[f64]) -> Option<Vec<f64>> {
    if model.is_empty() || model.len() != oracle.len() {
        return None;
    }
    let n = model.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        (model[b] - oracle[b])
            .total_cmp(&(model[a] - oracle[a]))
            .then(a.cmp(&b))
    });
    Some(
        (0..=100)
            .map(|k| {
                let replaced = (k * n + 50) / 100;
                let mut values = model.to_vec();
                for &i in &order[..replaced] {
                    values[i] = oracle[i];
                }
                values.iter().sum::<f64>() / n as f64
            })
            .collect(),
    )
}
