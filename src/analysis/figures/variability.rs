//! The production probes' figures: per strategy, the model's distance from people beside the
//! human control's, and per probe the spread of W1 over contexts.

use super::histograms::share_histograms;
use super::plot::{Figure, Plot, Series};
use crate::analysis::variability::{ContextProbe, Probe, StrategySummary};

/// Figure 5 of Giulianelli et al. as two panels — W₁(C, H) per probe and strategy beside the
/// human control's, and μ_M − μ_H — and, per probe, the histogram of per-context W₁.
pub fn summary_figures(
    summary: &[StrategySummary],
    results: &[(String, Vec<ContextProbe>)],
) -> Vec<Figure> {
    let probes: Vec<Probe> = Probe::ALL
        .into_iter()
        .filter(|p| summary.iter().any(|s| s.probe == *p))
        .collect();
    let strategies: Vec<String> = results.iter().fold(Vec::new(), |mut acc, (s, _)| {
        if !acc.contains(s) {
            acc.push(s.clone());
        }
        acc
    });
    let value = |strategy: &str, probe: Probe, f: fn(&StrategySummary) -> Option<f64>| {
        summary
            .iter()
            .find(|s| s.strategy == strategy && s.probe == probe)
            .and_then(f)
    };
    // One series per strategy: (x offset + probe index, f of its summary).
    let per_strategy = |x0: f64, f: fn(&StrategySummary) -> Option<f64>| -> Vec<Series> {
        strategies
            .iter()
            .map(|s| Series {
                name: s.clone(),
                points: probes
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| Some((x0 + i as f64, value(s, *p, f)?)))
                    .collect(),
            })
            .collect()
    };
    let mut series = per_strategy(0.0, |x| Some(x.w1));
    if let Some(first) = strategies.first() {
        series.push(Series {
            name: "human control".into(),
            points: probes
                .iter()
                .enumerate()
                .filter_map(|(i, p)| Some((i as f64, value(first, *p, |x| x.control_w1)?)))
                .collect(),
        });
    }
    let labels: Vec<String> = probes.iter().map(|p| p.label()).collect();
    let csv_rows = summary.iter().map(|s| {
        vec![
            s.strategy.clone(),
            s.probe.label(),
            s.contexts.to_string(),
            format!("{:.6}", s.mean_difference),
            format!("{:.6}", s.w1),
            s.control_w1.map(|v| format!("{v:.6}")).unwrap_or_default(),
        ]
    });
    let summary_csv = crate::data::write_delimited(
        &[
            "strategy",
            "probe",
            "contexts",
            "mean_difference",
            "w1",
            "control_w1",
        ],
        csv_rows,
        crate::data::Delimiter::Comma,
    );
    let mut out = vec![Figure {
        id: "probes-summary-w1".into(),
        title: "Mean W1(C, H) per decoding strategy and probe, beside the human control".into(),
        plot: Plot::Bars {
            labels: labels.clone(),
            series,
            y_label: "mean W1(C, H) over contexts".into(),
        },
        csv: summary_csv.clone(),
    }];
    let differences = per_strategy(1.0, |x| Some(x.mean_difference));
    out.push(Figure {
        id: "probes-summary-difference".into(),
        title: "Mean μM − μH per decoding strategy (above 0: more varied than people)".into(),
        plot: Plot::Lines {
            series: differences,
            x_label: format!(
                "probe: {}",
                labels
                    .iter()
                    .enumerate()
                    .map(|(i, l)| format!("{} {l}", i + 1))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            y_label: "μM − μH".into(),
            x_range: (0.5, probes.len() as f64 + 0.5),
            y_range: (-1.0, 1.0),
            diagonal: false,
            markers: true,
            joined: true,
        },
        csv: summary_csv,
    });
    for probe in &probes {
        let mut groups: Vec<(String, Vec<f64>)> = strategies
            .iter()
            .map(|s| {
                let values = results
                    .iter()
                    .filter(|(name, _)| name == s)
                    .flat_map(|(_, c)| c.iter().filter(|c| c.probe == *probe))
                    .map(|c| c.model.w1_cross_human)
                    .collect();
                (s.clone(), values)
            })
            .collect();
        let control: Vec<f64> = results
            .iter()
            .filter(|(name, _)| Some(name) == strategies.first())
            .flat_map(|(_, c)| c.iter().filter(|c| c.probe == *probe))
            .filter_map(|c| c.control.map(|s| s.w1_cross_human))
            .collect();
        groups.push(("human control".into(), control));
        let slug = probe.label().replace(' ', "-");
        out.extend(share_histograms(
            &format!("probes-w1-{slug}"),
            &format!("W1(C, H) per context, {} probe", probe.label()),
            "W1",
            &groups,
            10,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::variability::{people_and_a_parrot, probe_context, summarise};

    #[test]
    fn one_summary_figure_per_measure_and_one_histogram_per_probe() {
        let (humans, parrot) = people_and_a_parrot();
        let results = probe_context(&humans, &parrot, 7);
        let summary = summarise(&[("parrot".into(), results.clone())]);
        let figures = summary_figures(&summary, &[("parrot".into(), results)]);
        let ids: Vec<&str> = figures.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "probes-summary-w1",
                "probes-summary-difference",
                "probes-w1-lexical-1-gram",
                "probes-w1-syntactic-1-gram",
                "probes-w1-semantic"
            ]
        );
    }
}
