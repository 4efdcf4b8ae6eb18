//! Distances and calibration between human and model next-word distributions (Ilia & Aziz 2024):
//! the distribution and TVD ([`distribution`]), summaries with bootstrap intervals and W1
//! ([`summary`]), ECE and reliability bins ([`calibration`]), interpretation curves
//! ([`interpretation`]), kernel densities ([`density`]) and entropy from samples ([`entropy`]).
//!
//! Statistics follow statrs' habits: constructors validate and return `Result`, empty input
//! gives `None`/`Err` (never NaN), formulas are in the docs, tolerances live in [`TOLERANCE`].

pub mod calibration;
pub mod density;
pub mod distribution;
pub mod entropy;
pub mod interpretation;
pub mod summary;
#[cfg(test)]
mod tests;

pub use calibration::{EceConvention, ece, ece_with, reliability_bins};
pub use density::{kde, silverman_bandwidth};
pub use distribution::{WordDistribution, tvd};
pub use entropy::EntropyEstimate;
pub use interpretation::{CurvePoint, interpretation_curve, worst_first_curve};
pub use summary::{Interval, MeanSd, fit_line, mean, mean_with_bootstrap_ci, wasserstein1};

/// Absolute tolerance for comparing probabilities computed along different paths.
pub const TOLERANCE: f64 = 1e-12;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MetricsError {
    #[error("no observations")]
    Empty,
    #[error("count for {word:?} is {count}; counts must be finite and non-negative")]
    BadCount { word: String, count: f64 },
}
