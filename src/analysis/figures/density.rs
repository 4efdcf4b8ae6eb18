//! Figure 2 and its token-level companion: densities of per-context TVD (Gaussian KDE).

use super::plot::{Figure, Plot, Series};
use super::{csv, systems};
use crate::analysis::metrics::{kde, mean, silverman_bandwidth};
use crate::analysis::table1::{PerContext, Row};

/// Figure 2: the density (Gaussian KDE, Silverman bandwidth, stated) of per-context TVD to the
/// human distribution, each system beside the oracle's (group 2 vs group 1), with the mean and
/// its bootstrap interval in the legend.
pub fn tvd_density(rows: &[Row], per_context: &[PerContext]) -> Option<Figure> {
    let groups = systems(per_context)
        .into_iter()
        .map(|name| {
            let values: Vec<f64> = per_context
                .iter()
                .filter(|p| p.system == name)
                .filter_map(|p| p.tvd_human)
                .collect();
            let row = rows.iter().find(|r| r.system == name);
            let extra = row
                .and_then(|r| Some((r.tvd_human?, r.tvd_human_ci?)))
                .map(|(m, ci)| format!("E[TVD] {m:.2} [{:.2}, {:.2}]", ci.low, ci.high));
            (name, values, extra)
        })
        .collect();
    density_figure(
        "tvd-density",
        "Per-context TVD to the human distribution (Gaussian KDE, Silverman bandwidth h)",
        groups,
    )
}

/// Appendix D beside the word level: the density of the model's per-context TVD at the token
/// level (its exact next-token distribution against people's first tokens) and, for each system
/// of Table 1, at the word level.
pub fn token_level_density(
    model: &str,
    token_level_tvds: &[f64],
    per_context: &[PerContext],
) -> Option<Figure> {
    let mean_of = |v: &[f64]| mean(v).map(|m| format!("mean {m:.3}"));
    let mut groups = vec![(
        format!("{model}, token level"),
        token_level_tvds.to_vec(),
        mean_of(token_level_tvds),
    )];
    for name in systems(per_context) {
        let values: Vec<f64> = per_context
            .iter()
            .filter(|p| p.system == name)
            .filter_map(|p| p.tvd_human)
            .collect();
        let extra = mean_of(&values);
        groups.push((format!("{name}, word level"), values, extra));
    }
    density_figure(
        "token-level-density",
        "Per-context TVD at the token level and at the word level (Gaussian KDE, bandwidth h)",
        groups,
    )
}

/// The narrowest kernel drawn on the 0.01-step grid of the density figures.
const MIN_BANDWIDTH: f64 = 0.02;

/// Density curves (Gaussian KDE, Silverman bandwidth, at least [`MIN_BANDWIDTH`]) of groups of
/// TVDs on [0, 1]: each group is (name, values, what to add to its label); groups with fewer
/// than two values are left out.
fn density_figure(
    id: &str,
    title: &str,
    groups: Vec<(String, Vec<f64>, Option<String>)>,
) -> Option<Figure> {
    let grid: Vec<f64> = (0..=100).map(|i| i as f64 / 100.0).collect();
    let mut series = Vec::new();
    let mut csv_rows = Vec::new();
    for (name, values, extra) in groups {
        if values.len() < 2 {
            continue;
        }
        // Two grid steps at least: a narrower kernel falls between the points drawn (a model
        // at TVD 1 on every context has no spread at all).
        let h = silverman_bandwidth(&values)
            .unwrap_or(0.0)
            .max(MIN_BANDWIDTH);
        let density = kde(&values, h, &grid)?;
        let label = match extra {
            Some(extra) => format!("{name}: {extra}, h = {h:.3}"),
            None => format!("{name}: h = {h:.3}"),
        };
        for (x, d) in grid.iter().zip(&density) {
            csv_rows.push(vec![
                name.clone(),
                format!("{x:.2}"),
                format!("{d:.6}"),
                format!("{h:.6}"),
            ]);
        }
        series.push(Series {
            name: label,
            points: grid.iter().copied().zip(density).collect(),
        });
    }
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    (!series.is_empty()).then(|| Figure {
        id: id.into(),
        title: title.into(),
        plot: Plot::Lines {
            series,
            x_label: "TVD".into(),
            y_label: "density".into(),
            x_range: (0.0, 1.0),
            y_range: (0.0, top * 1.1),
            diagonal: false,
            markers: false,
            joined: true,
        },
        csv: csv(
            &["system", "tvd", "density", "bandwidth"],
            csv_rows.into_iter(),
        ),
    })
}
