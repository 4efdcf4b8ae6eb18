//! A distribution over normalised words, and the total variation distance between two.

use std::collections::BTreeMap;

use super::{MetricsError, TOLERANCE};
use crate::text::words::normalize;

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
