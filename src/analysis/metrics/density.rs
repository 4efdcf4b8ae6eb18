//! Kernel density estimates of per-context values (Gaussian kernel, Silverman's bandwidth).

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
