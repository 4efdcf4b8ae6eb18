//! How well a context's cloze norms are known after n answers: the 95% interval of the target
//! word's cloze probability, the probability mass of words nobody has given yet, and a target a
//! researcher states on either, for every context or a share of them.

/// z of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Pseudo-answers the model's probability of a target is worth in adaptive assignment's
/// estimate before answers outweigh it.
pub const PRIOR_WEIGHT: f64 = 2.0;

/// The Wilson score interval of a proportion k / n (Wilson 1927): centre
/// (p̂ + z²/2n) / (1 + z²/n), half-width z √(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n). Unlike the Wald
/// interval it stays inside [0, 1] and is not empty at k = 0, where cloze targets often are.
/// `None` for n = 0 or k > n.
///
/// ```
/// use clozelab::analysis::norming::precision::{Z95, wilson_interval};
/// let (lo, hi) = wilson_interval(20, 40, Z95).unwrap();
/// assert!((lo - 0.3519).abs() < 1e-4 && (hi - 0.6481).abs() < 1e-4);
/// let (lo, hi) = wilson_interval(0, 40, Z95).unwrap();
/// assert_eq!(lo, 0.0);
/// assert!(hi > 0.08 && hi < 0.09);
/// assert!(wilson_interval(1, 0, Z95).is_none());
/// ```
pub fn wilson_interval(k: u32, n: u32, z: f64) -> Option<(f64, f64)> {
    if n == 0 || k > n {
        return None;
    }
    let n = n as f64;
    let p = k as f64 / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// The width of the Wilson interval at a proportion `p` (any real in [0, 1]) of `n` answers:
/// what the interval's width tends to when the estimate is the true probability.
///
/// ```
/// use clozelab::analysis::norming::precision::{Z95, wilson_interval, wilson_width};
/// let (lo, hi) = wilson_interval(20, 40, Z95).unwrap();
/// assert!((wilson_width(0.5, 40) - (hi - lo)).abs() < 1e-12);
/// ```
pub fn wilson_width(p: f64, n: u32) -> f64 {
    let n = n.max(1) as f64;
    let z2 = Z95 * Z95;
    2.0 * Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n)
}

/// The probability that the next answer is a word not yet given, from the answers' frequency
/// counts: Chao & Jost's (2012) coverage deficit, (f₁/n) · (n−1)f₁ / ((n−1)f₁ + 2f₂), with f₁
/// the words given once and f₂ those given twice; when f₂ = 0, (f₁/n) · (n−1)(f₁−1) / ((n−1)(f₁−1)
/// + 2). Good–Turing's f₁/n without the correction for small n. `None` for no answers.
///
/// ```
/// use clozelab::analysis::norming::precision::unseen_mass;
/// // 10 answers: 4 words once, 3 twice.
/// let m = unseen_mass(10, 4, 3).unwrap();
/// assert!((m - 0.4 * 36.0 / 42.0).abs() < 1e-12);
/// assert_eq!(unseen_mass(40, 0, 5), Some(0.0));
/// assert!(unseen_mass(0, 0, 0).is_none());
/// ```
pub fn unseen_mass(n: u32, f1: u32, f2: u32) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let (n, f1, f2) = (n as f64, f1 as f64, f2 as f64);
    let factor = if f2 > 0.0 {
        (n - 1.0) * f1 / ((n - 1.0) * f1 + 2.0 * f2)
    } else if f1 > 1.0 {
        (n - 1.0) * (f1 - 1.0) / ((n - 1.0) * (f1 - 1.0) + 2.0)
    } else {
        // One word seen once and none twice: the formula's limit, f₁/n.
        1.0
    };
    Some((f1 / n * factor).clamp(0.0, 1.0))
}

/// What a context's answers so far say.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContextPrecision {
    /// Answers.
    pub n: u32,
    /// Answers that are the target word.
    pub target: u32,
    /// Width of the target's 95% Wilson interval.
    pub interval_width: f64,
    /// The widest the interval would be at any probability inside it (at the point nearest
    /// ½): what the target is checked on, so that a stop when an estimate first dips under the
    /// bound does not claim more than the answers show.
    pub worst_width: f64,
    /// The estimated probability of a word nobody has given yet.
    pub unseen_mass: f64,
    /// The same with the words given once raised by z√f₁ (their count's Poisson 95% margin):
    /// what the target is checked on, for the reason [`Self::worst_width`] is.
    pub worst_unseen_mass: f64,
}

impl ContextPrecision {
    /// From the counts; `None` without answers.
    pub fn new(n: u32, target: u32, f1: u32, f2: u32) -> Option<Self> {
        let (lo, hi) = wilson_interval(target, n, Z95)?;
        Some(Self {
            n,
            target,
            interval_width: hi - lo,
            worst_width: wilson_width(0.5f64.clamp(lo, hi), n),
            unseen_mass: unseen_mass(n, f1, f2)?,
            worst_unseen_mass: unseen_mass(
                n,
                (f1 as f64 + Z95 * (f1.max(1) as f64).sqrt())
                    .ceil()
                    .min(n as f64) as u32,
                f2,
            )?,
        })
    }
}

#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum TargetError {
    #[error("state a bound: the interval width, the unseen mass, or both")]
    NoBound,
    #[error("the interval width bound must be in (0, 1], got {0}")]
    Width(f64),
    #[error("the unseen-mass bound must be in (0, 1), got {0}")]
    Unseen(f64),
    #[error("the share of contexts must be in (0, 1], got {0}")]
    Share(f64),
}

/// A precision target: every stated bound holds for at least `share` of the contexts.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PrecisionTarget {
    max_interval_width: Option<f64>,
    max_unseen_mass: Option<f64>,
    share: f64,
}

impl PrecisionTarget {
    /// ```
    /// use clozelab::analysis::norming::precision::PrecisionTarget;
    /// assert!(PrecisionTarget::new(Some(0.3), None, 0.9).is_ok());
    /// assert!(PrecisionTarget::new(None, None, 0.9).is_err());
    /// assert!(PrecisionTarget::new(Some(0.0), None, 0.9).is_err());
    /// assert!(PrecisionTarget::new(None, Some(0.2), 1.5).is_err());
    /// ```
    pub fn new(
        max_interval_width: Option<f64>,
        max_unseen_mass: Option<f64>,
        share: f64,
    ) -> Result<Self, TargetError> {
        if max_interval_width.is_none() && max_unseen_mass.is_none() {
            return Err(TargetError::NoBound);
        }
        if let Some(w) = max_interval_width.filter(|w| !(*w > 0.0 && *w <= 1.0)) {
            return Err(TargetError::Width(w));
        }
        if let Some(u) = max_unseen_mass.filter(|u| !(*u > 0.0 && *u < 1.0)) {
            return Err(TargetError::Unseen(u));
        }
        if !(share > 0.0 && share <= 1.0) {
            return Err(TargetError::Share(share));
        }
        Ok(Self {
            max_interval_width,
            max_unseen_mass,
            share,
        })
    }

    pub fn max_interval_width(&self) -> Option<f64> {
        self.max_interval_width
    }

    pub fn max_unseen_mass(&self) -> Option<f64> {
        self.max_unseen_mass
    }

    pub fn share(&self) -> f64 {
        self.share
    }

    /// Whether one context meets every stated bound.
    pub fn met_by(&self, p: &ContextPrecision) -> bool {
        self.max_interval_width.is_none_or(|w| p.worst_width <= w)
            && self
                .max_unseen_mass
                .is_none_or(|u| p.worst_unseen_mass <= u)
    }

    /// How far a context is from the target: the sum of each bound's excess (0 when met).
    pub fn shortfall(&self, p: &ContextPrecision) -> f64 {
        self.max_interval_width
            .map_or(0.0, |w| (p.worst_width - w).max(0.0))
            + self
                .max_unseen_mass
                .map_or(0.0, |u| (p.worst_unseen_mass - u).max(0.0))
    }

    /// How far a context is from the target as adaptive assignment sees it: its shortfall with
    /// the width the next answers would likely show, the model's probability of the target
    /// (`prior`) mixed in as [`PRIOR_WEIGHT`] answers — a target nobody has given yet is not
    /// yet known to be rare.
    ///
    /// ```
    /// use clozelab::analysis::norming::precision::{ContextPrecision, PrecisionTarget};
    /// let target = PrecisionTarget::new(Some(0.5), None, 1.0).unwrap();
    /// // Nobody gave the target in 4 answers: further from the target if the model finds it
    /// // likely. (From 10 answers on the answers' own interval mostly outweighs the prior.)
    /// let p = ContextPrecision::new(4, 0, 2, 1).unwrap();
    /// assert!(target.guided_shortfall(&p, 0.9) > target.guided_shortfall(&p, 0.01));
    /// ```
    pub fn guided_shortfall(&self, p: &ContextPrecision, prior: f64) -> f64 {
        let mut guided = *p;
        if let Some(w) = self.max_interval_width {
            let estimate = (p.target as f64 + PRIOR_WEIGHT * prior) / (p.n as f64 + PRIOR_WEIGHT);
            let wald = 2.0 * Z95 * (estimate * (1.0 - estimate) / p.n as f64).sqrt();
            guided.worst_width = p.worst_width.max(wald.min(w * 2.0));
        }
        self.shortfall(&guided)
    }

    /// Whether `met` of `total` contexts is enough.
    pub fn enough(&self, met: usize, total: usize) -> bool {
        total > 0 && met as f64 >= self.share * total as f64 - 1e-9
    }

    /// The target in words, as the page and the command line say it.
    pub fn describe(&self) -> String {
        let mut bounds = Vec::new();
        if let Some(w) = self.max_interval_width {
            bounds.push(format!("the target word's 95% interval at most {w} wide"));
        }
        if let Some(u) = self.max_unseen_mass {
            bounds.push(format!(
                "at most {u} of the probability on words nobody gave"
            ));
        }
        format!(
            "{} of the contexts with {}",
            if self.share >= 1.0 {
                "all".to_string()
            } else {
                format!("{:.0}%", 100.0 * self.share)
            },
            bounds.join(" and ")
        )
    }
}
