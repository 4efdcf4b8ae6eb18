//! Distances and calibration between human and model next-word distributions (Ilia & Aziz 2024).
//!
//! Statistics follow statrs' habits: constructors validate and return `Result`, empty input
//! gives `None`/`Err` (never NaN), formulas are in the docs, tolerances live in [`TOLERANCE`].

use std::collections::BTreeMap;

use crate::rng::SplitMix64;
use crate::text::words::normalize;

/// Absolute tolerance for comparing probabilities computed along different paths.
pub const TOLERANCE: f64 = 1e-12;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MetricsError {
    #[error("no observations")]
    Empty,
    #[error("count for {word:?} is {count}; counts must be finite and non-negative")]
    BadCount { word: String, count: f64 },
}

/// A distribution over normalised words: p(w) = count(w) / Σ counts.
#[derive(Clone, Debug, PartialEq)]
pub struct WordDistribution {
    probs: BTreeMap<String, f64>,
    total: f64,
}

impl WordDistribution {
    /// From (word, count) pairs. Words are normalised ([`normalize`]) and merged; words that
    /// normalise to nothing are dropped. Errors on a negative/NaN count or a zero total.
    ///
    /// ```
    /// use clozelab::analysis::metrics::WordDistribution;
    /// let p = WordDistribution::from_counts([("The", 3.0), ("the", 1.0), ("a", 4.0)]).unwrap();
    /// assert_eq!(p.prob("the"), 0.5);
    /// ```
    pub fn from_counts<S: AsRef<str>>(
        counts: impl IntoIterator<Item = (S, f64)>,
    ) -> Result<Self, MetricsError> {
        let mut merged: BTreeMap<String, f64> = BTreeMap::new();
        for (word, count) in counts {
            if !(count.is_finite() && count >= 0.0) {
                return Err(MetricsError::BadCount {
                    word: word.as_ref().to_string(),
                    count,
                });
            }
            let w = normalize(word.as_ref());
            if !w.is_empty() && count > 0.0 {
                *merged.entry(w).or_insert(0.0) += count;
            }
        }
        let total: f64 = merged.values().sum();
        if total <= 0.0 {
            return Err(MetricsError::Empty);
        }
        let probs = merged.into_iter().map(|(w, c)| (w, c / total)).collect();
        Ok(Self { probs, total })
    }

    /// From individual observations (each counted once).
    pub fn from_samples<S: AsRef<str>>(
        samples: impl IntoIterator<Item = S>,
    ) -> Result<Self, MetricsError> {
        Self::from_counts(samples.into_iter().map(|s| (s, 1.0)))
    }

    /// p(w) for a normalised word (0 outside the support).
    pub fn prob(&self, word: &str) -> f64 {
        self.probs.get(word).copied().unwrap_or(0.0)
    }

    /// Words with positive probability, sorted.
    pub fn support(&self) -> impl Iterator<Item = (&str, f64)> {
        self.probs.iter().map(|(w, p)| (w.as_str(), *p))
    }

    /// Σ counts the distribution was built from.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// Shannon entropy in nats, H(p) = −Σ p(w) ln p(w).
    ///
    /// ```
    /// use clozelab::analysis::metrics::WordDistribution;
    /// let p = WordDistribution::from_samples(["a", "b"]).unwrap();
    /// assert!((p.entropy() - 2f64.ln()).abs() < 1e-12);
    /// ```
    pub fn entropy(&self) -> f64 {
        -self
            .probs
            .values()
            .filter(|p| **p > 0.0)
            .map(|p| p * p.ln())
            .sum::<f64>()
    }

    /// The most probable word and its probability. Ties go to the alphabetically first word, a
    /// deterministic rule that does not depend on insertion order.
    pub fn mode(&self) -> (&str, f64) {
        let mut best: Option<(&str, f64)> = None;
        for (w, p) in self.support() {
            // BTreeMap order is alphabetical, so a strict `>` keeps the first of equals.
            if best.is_none_or(|(_, bp)| p > bp + TOLERANCE) {
                best = Some((w, p));
            }
        }
        // A validated distribution has at least one word.
        best.unwrap_or(("", 0.0))
    }
}

/// Total variation distance, TVD(p, q) = ½ Σ_w |p(w) − q(w)| over the union of supports.
///
/// ```
/// use clozelab::analysis::metrics::{tvd, WordDistribution};
/// let p = WordDistribution::from_samples(["a", "a", "b", "b"]).unwrap();
/// let q = WordDistribution::from_samples(["a", "c"]).unwrap();
/// assert!((tvd(&p, &q) - 0.5).abs() < 1e-12);
/// ```
pub fn tvd(p: &WordDistribution, q: &WordDistribution) -> f64 {
    let mut sum = 0.0;
    for (w, pw) in p.support() {
        sum += (pw - q.prob(w)).abs();
    }
    for (w, qw) in q.support() {
        if p.prob(w) == 0.0 {
            sum += qw;
        }
    }
    (0.5 * sum).clamp(0.0, 1.0)
}

/// Mean of `values`, `None` when empty.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Mean with a percentile-bootstrap 95% interval: `resamples` means of `values` resampled with
/// replacement (seeded), interval = their 2.5th and 97.5th percentiles. `None` when empty.
pub fn mean_with_bootstrap_ci(
    values: &[f64],
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64, f64)> {
    let m = mean(values)?;
    if resamples == 0 {
        return Some((m, m, m));
    }
    let mut rng = SplitMix64::new(seed);
    let n = values.len();
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            (0..n)
                .map(|_| values[(rng.next_u64() % n as u64) as usize])
                .sum::<f64>()
                / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    Some((m, at(0.025), at(0.975)))
}

/// Wasserstein-1 distance between two samples of real values (their empirical distributions):
/// W₁ = ∫ |F_a(x) − F_b(x)| dx. `None` when either sample is empty or holds NaN.
///
/// ```
/// use clozelab::analysis::metrics::wasserstein1;
/// assert_eq!(wasserstein1(&[0.0, 1.0], &[0.5, 1.5]), Some(0.5));
/// ```
pub fn wasserstein1(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| x.is_nan()) {
        return None;
    }
    let mut xs: Vec<(f64, bool)> = a
        .iter()
        .map(|x| (*x, true))
        .chain(b.iter().map(|x| (*x, false)))
        .collect();
    xs.sort_by(|u, v| u.0.total_cmp(&v.0));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut fa, mut fb, mut area) = (0.0, 0.0, 0.0);
    for k in 0..xs.len() {
        if xs[k].1 {
            fa += 1.0 / na
        } else {
            fb += 1.0 / nb
        }
        if let Some(next) = xs.get(k + 1) {
            area += (fa - fb).abs() * (next.0 - xs[k].0);
        }
    }
    Some(area)
}

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

/// Silverman's rule-of-thumb bandwidth for a Gaussian kernel density estimate:
/// h = 0.9 · min(sd, IQR / 1.34) · n^(−1/5) (sd when the IQR is 0). `None` for fewer than two
/// values or no spread.
///
/// ```
/// use clozelab::analysis::metrics::silverman_bandwidth;
/// assert_eq!(silverman_bandwidth(&[0.5]), None);
/// assert_eq!(silverman_bandwidth(&[0.5, 0.5]), None);
/// let h = silverman_bandwidth(&[0.1, 0.2, 0.3, 0.4, 0.5]).unwrap();
/// assert!(h > 0.05 && h < 0.15);
/// ```
pub fn silverman_bandwidth(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let m = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let quantile = |q: f64| sorted[((q * (n - 1.0)).round() as usize).min(sorted.len() - 1)];
    let iqr = (quantile(0.75) - quantile(0.25)) / 1.34;
    let spread = if iqr > 0.0 { sd.min(iqr) } else { sd };
    (spread > 0.0).then(|| 0.9 * spread * n.powf(-0.2))
}

/// Gaussian kernel density estimate of `values` with bandwidth `h` at each point of `at`:
/// f(x) = (1 / (n h)) Σᵢ φ((x − xᵢ) / h). `None` when empty or `h` is not positive.
///
/// ```
/// use clozelab::analysis::metrics::kde;
/// let grid: Vec<f64> = (0..=400).map(|i| -2.0 + i as f64 / 100.0).collect();
/// let f = kde(&[0.0], 0.5, &grid).unwrap();
/// // A density: it integrates to 1 (here by the trapezoid rule over ±4 bandwidths).
/// let area: f64 = f.windows(2).map(|w| (w[0] + w[1]) / 2.0 * 0.01).sum();
/// assert!((area - 1.0).abs() < 1e-3);
/// ```
pub fn kde(values: &[f64], h: f64, at: &[f64]) -> Option<Vec<f64>> {
    if values.is_empty() || h.is_nan() || h <= 0.0 {
        return None;
    }
    let norm = 1.0 / (values.len() as f64 * h * (2.0 * std::f64::consts::PI).sqrt());
    Some(
        at.iter()
            .map(|x| {
                norm * values
                    .iter()
                    .map(|v| (-0.5 * ((x - v) / h).powi(2)).exp())
                    .sum::<f64>()
            })
            .collect(),
    )
}

/// Least-squares line y = a + b·x through the points: `(a, b, r)` with Pearson's r. `None` for
/// fewer than two points or no spread in x.
///
/// ```
/// use clozelab::analysis::metrics::fit_line;
/// let (a, b, r) = fit_line(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
/// assert!((a - 1.0).abs() < 1e-12 && (b - 2.0).abs() < 1e-12 && (r - 1.0).abs() < 1e-12);
/// ```
pub fn fit_line(points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let b = sxy / sxx;
    let r = if syy > 0.0 {
        sxy / (sxx * syy).sqrt()
    } else {
        0.0
    };
    Some((my - b * mx, b, r))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn random_dist(rng: &mut SplitMix64) -> WordDistribution {
        let words = ["a", "b", "c", "d", "e"];
        let counts: Vec<(&str, f64)> = words
            .iter()
            .map(|w| (*w, (rng.next_u64() % 4) as f64))
            .collect();
        WordDistribution::from_counts(counts)
            .unwrap_or_else(|_| WordDistribution::from_samples(["a"]).unwrap())
    }

    #[test]
    fn tvd_properties() {
        let mut rng = SplitMix64::new(11);
        for _ in 0..500 {
            let (p, q, r) = (
                random_dist(&mut rng),
                random_dist(&mut rng),
                random_dist(&mut rng),
            );
            let d = tvd(&p, &q);
            assert!((0.0..=1.0).contains(&d));
            assert!((d - tvd(&q, &p)).abs() < TOLERANCE, "symmetric");
            assert!(tvd(&p, &p) < TOLERANCE, "zero on itself");
            assert!(
                d <= tvd(&p, &r) + tvd(&r, &q) + TOLERANCE,
                "triangle inequality"
            );
            if d < TOLERANCE {
                assert!(
                    p.support().all(|(w, pw)| (pw - q.prob(w)).abs() < 1e-9),
                    "zero only if equal"
                );
            }
        }
        let disjoint = (
            WordDistribution::from_samples(["x"]).unwrap(),
            WordDistribution::from_samples(["y"]).unwrap(),
        );
        assert_eq!(tvd(&disjoint.0, &disjoint.1), 1.0);
    }

    #[test]
    fn empty_and_bad_input() {
        assert_eq!(
            WordDistribution::from_samples(Vec::<&str>::new()),
            Err(MetricsError::Empty)
        );
        assert_eq!(
            WordDistribution::from_samples(["...", "—"]),
            Err(MetricsError::Empty)
        );
        assert!(matches!(
            WordDistribution::from_counts([("a", -1.0)]),
            Err(MetricsError::BadCount { .. })
        ));
        assert!(matches!(
            WordDistribution::from_counts([("a", f64::NAN)]),
            Err(MetricsError::BadCount { .. })
        ));
        assert_eq!(mean(&[]), None);
        assert_eq!(mean_with_bootstrap_ci(&[], 100, 1), None);
        assert_eq!(wasserstein1(&[], &[1.0]), None);
        assert_eq!(wasserstein1(&[f64::NAN], &[1.0]), None);
        assert_eq!(ece(&[], 10), None);
        assert_eq!(ece(&[(0.5, true)], 0), None);
    }

    #[test]
    fn mode_ties_are_alphabetical() {
        let p =
            WordDistribution::from_samples(["zebra", "apple", "mango", "mango", "apple"]).unwrap();
        assert_eq!(p.mode(), ("apple", 0.4));
    }

    #[test]
    fn ece_in_unit_interval_and_bootstrap_brackets_mean() {
        let mut rng = SplitMix64::new(5);
        for _ in 0..200 {
            let preds: Vec<(f64, bool)> = (0..20)
                .map(|_| (rng.next_unit() as f64, rng.next_u64().is_multiple_of(2)))
                .collect();
            let e = ece(&preds, 10).unwrap();
            assert!((0.0..=1.0).contains(&e));
        }
        let values: Vec<f64> = (0..50).map(|i| (i as f64 * 0.37).sin().abs()).collect();
        let (m, lo, hi) = mean_with_bootstrap_ci(&values, 1000, 3).unwrap();
        assert!(lo <= m && m <= hi && lo < hi);
        assert_eq!(
            mean_with_bootstrap_ci(&values, 1000, 3),
            mean_with_bootstrap_ci(&values, 1000, 3)
        );
    }

    #[test]
    fn wasserstein_matches_sorted_difference_for_equal_sizes() {
        let a = [0.3, 0.1, 0.9, 0.5];
        let b = [0.2, 0.8, 0.4, 0.6];
        let (mut sa, mut sb) = (a.to_vec(), b.to_vec());
        sa.sort_by(f64::total_cmp);
        sb.sort_by(f64::total_cmp);
        let expected: f64 = sa.iter().zip(&sb).map(|(x, y)| (x - y).abs()).sum::<f64>() / 4.0;
        assert!((wasserstein1(&a, &b).unwrap() - expected).abs() < 1e-12);
        assert_eq!(wasserstein1(&a, &a), Some(0.0));
    }

    #[test]
    fn the_interpretation_curve_replaces_random_contexts_and_never_undercuts_the_oracle() {
        // A model better than the oracle on a fifth of the contexts, much worse elsewhere.
        let mut rng = SplitMix64::new(5);
        let oracle: Vec<f64> = (0..500)
            .map(|_| 0.3 + 0.2 * f64::from(rng.next_unit()))
            .collect();
        let model: Vec<f64> = oracle
            .iter()
            .enumerate()
            .map(|(i, o)| if i % 5 == 0 { o - 0.1 } else { o + 0.3 })
            .collect();
        let percents: Vec<u32> = (0..=10).map(|k| k * 10).collect();
        let curve = interpretation_curve(&model, &oracle, &percents, 20, 3).unwrap();
        let (m, o) = (mean(&model).unwrap(), mean(&oracle).unwrap());
        for p in &curve {
            let expected = m + (o - m) * f64::from(p.percent) / 100.0;
            assert!((p.mean_tvd - expected).abs() < 0.01, "{p:?} vs {expected}");
            assert!(p.mean_tvd >= o - 1e-9, "{p:?} below the oracle's {o}");
        }
        assert!(
            curve
                .windows(2)
                .all(|w| w[1].w1_to_oracle <= w[0].w1_to_oracle + 0.005)
        );
        assert_eq!(curve[10].w1_to_oracle, 0.0);
        assert_eq!(
            curve,
            interpretation_curve(&model, &oracle, &percents, 20, 3).unwrap()
        );
        assert!(interpretation_curve(&model, &oracle[1..], &percents, 20, 3).is_none());
        assert!(interpretation_curve(&model, &oracle, &percents, 0, 3).is_none());
        // Worst first answers another question: it undercuts the oracle at 90 %.
        let worst = worst_first_curve(&model, &oracle).unwrap();
        assert!(worst[90] < o, "{} vs {o}", worst[90]);
    }

    #[test]
    fn certain_predictions_go_in_the_last_bin_or_in_none() {
        let preds = [(1.0, false), (1.0, true), (0.35, false)];
        let ours = ece(&preds, 10).unwrap();
        let paper = ece_with(&preds, 10, EceConvention::DropCertain).unwrap();
        // Ours: bin 9 has one hit of two at confidence 1 (gap 0.5), bin 3 a miss at 0.35.
        assert!((ours - (2.0 / 3.0 * 0.5 + 1.0 / 3.0 * 0.35)).abs() < 1e-12);
        assert!((paper - 1.0 / 3.0 * 0.35).abs() < 1e-12);
        assert_eq!(ece_with(&[], 10, EceConvention::DropCertain), None);
    }

    proptest::proptest! {
        /// W₁ is a metric on samples: symmetric, zero on a copy, the triangle inequality; a shift
        /// of one sample by c moves it by |c| from the original; and for equal sizes it is the
        /// mean distance between the sorted values paired in order.
        #[test]
        fn wasserstein1_is_a_metric_and_pairs_sorted_values(
            a in proptest::collection::vec(-5.0f64..5.0, 1..12),
            b in proptest::collection::vec(-5.0f64..5.0, 1..12),
            c in proptest::collection::vec(-5.0f64..5.0, 1..12),
            shift in -3.0f64..3.0,
        ) {
            let w = |x: &[f64], y: &[f64]| wasserstein1(x, y).unwrap();
            proptest::prop_assert!((w(&a, &b) - w(&b, &a)).abs() < 1e-9);
            proptest::prop_assert!(w(&a, &a).abs() < 1e-12);
            proptest::prop_assert!(w(&a, &c) <= w(&a, &b) + w(&b, &c) + 1e-9);
            let shifted: Vec<f64> = a.iter().map(|x| x + shift).collect();
            proptest::prop_assert!((w(&a, &shifted) - shift.abs()).abs() < 1e-9);
            let n = a.len().min(b.len());
            let (mut x, mut y) = (a[..n].to_vec(), b[..n].to_vec());
            x.sort_by(f64::total_cmp);
            y.sort_by(f64::total_cmp);
            let paired = x.iter().zip(&y).map(|(p, q)| (p - q).abs()).sum::<f64>() / n as f64;
            proptest::prop_assert!((w(&x, &y) - paired).abs() < 1e-9);
        }
    }
}
