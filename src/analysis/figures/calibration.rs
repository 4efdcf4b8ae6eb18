//! Reliability diagrams (what ECE summarises) and the interpretation curves of Table 1's W1.

use super::plot::{Figure, Plot, Series};
use super::{csv, systems};
use crate::analysis::metrics::{EceConvention, reliability_bins};
use crate::analysis::table1::{ECE_BINS, PerContext, Row};

/// What a prediction is checked against in a reliability diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Original,
    HumanMajority,
    OracleMajority,
}

impl Target {
    pub const ALL: [Target; 3] = [
        Target::Original,
        Target::HumanMajority,
        Target::OracleMajority,
    ];
    fn name(self) -> (&'static str, &'static str) {
        match self {
            Target::Original => ("original", "the original word"),
            Target::HumanMajority => ("human-majority", "the human majority"),
            Target::OracleMajority => ("oracle-majority", "oracle group 1's majority"),
        }
    }
    fn hit(self, p: &PerContext) -> Option<bool> {
        match self {
            Target::Original => Some(p.hit_original),
            Target::HumanMajority => Some(p.hit_majority),
            Target::OracleMajority => p.hit_oracle,
        }
    }
}

/// A reliability diagram: per confidence bin, how often the system's most likely word was
/// `target`, against its mean confidence (the diagonal is perfect calibration). The CSV has
/// every bin's count, confidence, accuracy and gap: why ECE misleads here shows in the counts.
pub fn reliability(
    per_context: &[PerContext],
    target: Target,
    convention: EceConvention,
) -> Option<Figure> {
    let (id, words) = target.name();
    let mut series = Vec::new();
    let mut csv_rows = Vec::new();
    for name in systems(per_context) {
        let predictions: Vec<(f64, bool)> = per_context
            .iter()
            .filter(|p| p.system == name)
            .filter_map(|p| Some((p.mode_prob, target.hit(p)?)))
            .collect();
        if predictions.is_empty() {
            continue;
        }
        let bins = reliability_bins(&predictions, ECE_BINS, convention);
        for (b, (n, conf, acc)) in bins.iter().enumerate() {
            csv_rows.push(vec![
                name.clone(),
                b.to_string(),
                n.to_string(),
                format!("{conf:.6}"),
                format!("{acc:.6}"),
                format!("{:.6}", if *n > 0 { (acc - conf).abs() } else { 0.0 }),
            ]);
        }
        series.push(Series {
            name,
            points: bins
                .iter()
                .filter(|b| b.0 > 0)
                .map(|b| (b.1, b.2))
                .collect(),
        });
    }
    (!series.is_empty()).then(|| Figure {
        id: format!("reliability-{id}"),
        title: format!("Reliability: the most likely word vs {words}"),
        plot: Plot::Lines {
            series,
            x_label: "confidence (probability of the most likely word)".into(),
            y_label: format!("share that was {words}"),
            x_range: (0.0, 1.0),
            y_range: (0.0, 1.0),
            diagonal: true,
            markers: true,
            joined: true,
        },
        csv: csv(
            &["system", "bin", "count", "confidence", "accuracy", "gap"],
            csv_rows.into_iter(),
        ),
    })
}

/// The interpretation curve (Figures 14–16), mean TVD or W1 to the oracle against the percent
/// of contexts replaced by the oracle's at random.
pub fn interpretation_curves(rows: &[Row], w1: bool) -> Option<Figure> {
    let mut csv_rows = Vec::new();
    let series: Vec<Series> = rows
        .iter()
        .filter_map(|r| {
            let curve = r.interpretation_curve.as_ref()?;
            for p in curve {
                csv_rows.push(vec![
                    r.system.clone(),
                    p.percent.to_string(),
                    format!("{:.6}", p.mean_tvd),
                    format!("{:.6}", p.w1_to_oracle),
                ]);
            }
            let points = curve
                .iter()
                .map(|p| {
                    (
                        f64::from(p.percent),
                        if w1 { p.w1_to_oracle } else { p.mean_tvd },
                    )
                })
                .collect();
            Some(Series {
                name: r.system.clone(),
                points,
            })
        })
        .collect();
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let (id, title, y) = if w1 {
        (
            "interpretation-w1",
            "Interpretation curve: W1 to the oracle's TVDs",
            "W1 to the oracle",
        )
    } else {
        (
            "interpretation-mean",
            "Interpretation curve: mean TVD (to oracle group 1)",
            "mean TVD",
        )
    };
    (!series.is_empty()).then(|| Figure {
        id: id.into(),
        title: format!("{title}, a random k % of contexts given the oracle's TVD"),
        plot: Plot::Lines {
            series,
            x_label: "contexts replaced by the oracle's (%)".into(),
            y_label: y.into(),
            x_range: (0.0, 100.0),
            y_range: (0.0, top * 1.1),
            diagonal: false,
            markers: true,
            joined: true,
        },
        csv: csv(
            &["system", "percent", "mean_tvd", "w1_to_oracle"],
            csv_rows.into_iter(),
        ),
    })
}
