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

/// Expected calibration error (Guo et al. 2017) of (confidence, correct) pairs over `bins`
/// equal-width confidence bins: ECE = Σ_b (n_b / N) |acc_b − conf_b|. A confidence of exactly 1
/// falls in the last bin. `None` when empty or `bins` is 0.
///
/// ```
/// use clozelab::analysis::metrics::ece;
/// assert_eq!(ece(&[(1.0, true), (1.0, true)], 10), Some(0.0));
/// assert_eq!(ece(&[(0.9, false)], 10), Some(0.9));
/// ```
pub fn ece(predictions: &[(f64, bool)], bins: usize) -> Option<f64> {
    if predictions.is_empty() || bins == 0 {
        return None;
    }
    let mut count = vec![0usize; bins];
    let mut conf = vec![0.0; bins];
    let mut acc = vec![0.0; bins];
    for &(c, correct) in predictions {
        let c = c.clamp(0.0, 1.0);
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

/// The interpretation curve: expected TVD when, for k = 0..=100 percent of contexts, the model's
/// TVD is replaced by the oracle's. Contexts are replaced worst first (largest model − oracle
/// gap), so point k says how good the model would be if its k% worst contexts were as good as
/// another person. `None` when the inputs are empty or of different lengths.
///
/// ```
/// use clozelab::analysis::metrics::interpretation_curve;
/// let curve = interpretation_curve(&[0.9, 0.5], &[0.4, 0.4]).unwrap();
/// assert_eq!(curve.len(), 101);
/// assert!((curve[0] - 0.7).abs() < 1e-12 && (curve[100] - 0.4).abs() < 1e-12);
/// assert!((curve[50] - 0.45).abs() < 1e-12);
/// ```
pub fn interpretation_curve(model: &[f64], oracle: &[f64]) -> Option<Vec<f64>> {
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
}
