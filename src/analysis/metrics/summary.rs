//! Summaries of per-context values: the mean with its bootstrap interval, Wasserstein-1 between
//! two samples, and a least-squares line.

use serde::{Deserialize, Serialize};

use crate::rng::SplitMix64;

/// A mean and its sample standard deviation (over oracle resamples, for instance).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeanSd {
    pub mean: f64,
    pub sd: f64,
}

impl MeanSd {
    /// The mean and the sample standard deviation s = √(Σ (x − x̄)² / (n − 1)) of `values`
    /// (0 for a single value); `None` when empty.
    ///
    /// ```
    /// use clozelab::analysis::metrics::MeanSd;
    /// let m = MeanSd::of(&[1.0, 3.0]).unwrap();
    /// assert_eq!((m.mean, m.sd), (2.0, 2f64.sqrt()));
    /// assert_eq!(MeanSd::of(&[]), None);
    /// ```
    pub fn of(values: &[f64]) -> Option<Self> {
        let m = mean(values)?;
        let var = if values.len() > 1 {
            values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (values.len() - 1) as f64
        } else {
            0.0
        };
        Some(Self {
            mean: m,
            sd: var.sqrt(),
        })
    }
}

/// A closed interval [low, high]: a bootstrap confidence interval, for instance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl std::fmt::Display for Interval {
    /// `low–high`, each with the precision asked for.
    ///
    /// ```
    /// use clozelab::analysis::metrics::Interval;
    /// assert_eq!(format!("{:.2}", Interval { low: 0.1, high: 0.25 }), "0.10–0.25");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match f.precision() {
            Some(p) => write!(f, "{:.p$}–{:.p$}", self.low, self.high),
            None => write!(f, "{}–{}", self.low, self.high),
        }
    }
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
) -> Option<(f64, Interval)> {
    let m = mean(values)?;
    if resamples == 0 {
        return Some((m, Interval { low: m, high: m }));
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
    Some((
        m,
        Interval {
            low: at(0.025),
            high: at(0.975),
        },
    ))
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
