//! The entropy of a next-word distribution estimated from samples of it, with its standard
//! error: the predictor reading-time analyses put beside surprisal.

use super::MetricsError;

/// An entropy estimate in bits.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EntropyEstimate {
    /// Miller–Madow corrected: Ĥ = −Σ p̂ log₂ p̂ + (K − 1) / (2 n ln 2), K the distinct words.
    pub bits: f64,
    /// √((Σ p̂ (log₂ p̂)² − Ĥ₀²) / n), Ĥ₀ the uncorrected plug-in entropy: the delta method's
    /// standard error of the plug-in estimate.
    pub standard_error_bits: f64,
    /// Samples the estimate rests on (n).
    pub samples: f64,
}

impl EntropyEstimate {
    /// From sample counts (word → count). The plug-in entropy of n samples is biased low by
    /// about (K − 1) / (2n) nats (Miller 1955), which the estimate adds back; words still unseen
    /// make it an underestimate when n is small against the distribution's tail.
    ///
    /// ```
    /// use clozelab::analysis::metrics::EntropyEstimate;
    /// let e = EntropyEstimate::from_counts([50.0, 50.0]).unwrap();
    /// // 1 bit, plus (2 − 1) / (2 · 100 · ln 2) for the two words seen.
    /// assert!((e.bits - (1.0 + 1.0 / (200.0 * 2f64.ln()))).abs() < 1e-12);
    /// assert_eq!(e.standard_error_bits, 0.0);
    /// assert!(EntropyEstimate::from_counts([] as [f64; 0]).is_err());
    /// ```
    pub fn from_counts(counts: impl IntoIterator<Item = f64>) -> Result<Self, MetricsError> {
        let mut seen = Vec::new();
        for count in counts {
            if !(count.is_finite() && count >= 0.0) {
                return Err(MetricsError::BadCount {
                    word: String::new(),
                    count,
                });
            }
            if count > 0.0 {
                seen.push(count);
            }
        }
        let n: f64 = seen.iter().sum();
        if seen.is_empty() || n <= 0.0 {
            return Err(MetricsError::Empty);
        }
        let (mut plug_in, mut second_moment) = (0.0, 0.0);
        for count in &seen {
            let p = count / n;
            let surprisal = -p.log2();
            plug_in += p * surprisal;
            second_moment += p * surprisal * surprisal;
        }
        let variance = (second_moment - plug_in * plug_in).max(0.0) / n;
        Ok(Self {
            bits: plug_in + (seen.len() as f64 - 1.0) / (2.0 * n * std::f64::consts::LN_2),
            standard_error_bits: variance.sqrt(),
            samples: n,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converges_on_a_known_distribution() {
        // Counts proportional to (1/2, 1/4, 1/8, 1/8): 1.75 bits.
        let e = EntropyEstimate::from_counts([4000.0, 2000.0, 1000.0, 1000.0]).unwrap();
        assert!((e.bits - 1.75).abs() < 1e-3, "{e:?}");
        assert!(e.standard_error_bits > 0.0 && e.standard_error_bits < 0.02);
    }

    #[test]
    fn refuses_bad_counts() {
        assert!(EntropyEstimate::from_counts([1.0, f64::NAN]).is_err());
        assert!(EntropyEstimate::from_counts([0.0, 0.0]).is_err());
    }
}
