//! The papers' figures as data, each with the CSV of the numbers behind it, drawn by plotters on
//! any backend: a canvas in the page, SVG for downloads and for `clozelab figures`.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::dataset::Dataset;
use super::metrics::{
    EceConvention, WordDistribution, fit_line, kde, reliability_bins, silverman_bandwidth,
};
use super::table1::{ECE_BINS, PUBLISHED_TVD, PerContext, Row};
use crate::data::provo::ContextKey;
use crate::data::write_delimited;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("cannot draw the figure: {0}")]
pub struct FigureError(String);

/// One named line or set of points.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One panel of a scatter figure: points and their least-squares line (a, b, r).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Panel {
    pub x_label: String,
    pub points: Vec<(f64, f64)>,
    pub fit: Option<(f64, f64, f64)>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Plot {
    /// Lines over shared axes; `diagonal` draws y = x (perfect calibration); `markers` dots.
    Lines {
        series: Vec<Series>,
        x_label: String,
        y_label: String,
        x_range: (f64, f64),
        y_range: (f64, f64),
        diagonal: bool,
        markers: bool,
    },
    /// Side by side, one panel per predictor, y shared.
    Scatter { panels: Vec<Panel>, y_label: String },
    /// Grouped bars: one group per label, one bar per series (y ≥ 0).
    Bars {
        labels: Vec<String>,
        series: Vec<Series>,
        y_label: String,
    },
    /// Counts per bin [lo, hi) over x, with named vertical marks (a participant, a model).
    Histogram {
        bins: Vec<(f64, f64, u32)>,
        marks: Vec<(String, f64)>,
        x_label: String,
    },
}

/// A figure: a stable id (file names), a title, what to draw and the CSV behind it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Figure {
    pub id: String,
    pub title: String,
    pub plot: Plot,
    pub csv: String,
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(200, 90, 40),
    RGBColor(70, 110, 190),
    RGBColor(60, 150, 80),
    RGBColor(150, 80, 170),
    RGBColor(200, 160, 30),
    RGBColor(40, 160, 170),
    RGBColor(120, 120, 120),
    RGBColor(220, 60, 110),
];

fn err(e: impl std::fmt::Display) -> FigureError {
    FigureError(e.to_string())
}

fn csv(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    write_delimited(header, rows, crate::data::Delimiter::Comma)
}

impl Figure {
    /// The pixel size the figure is drawn at (on the page and in files).
    pub fn size(&self) -> (u32, u32) {
        match self.plot {
            Plot::Scatter { .. } => (1200, 380),
            _ => (900, 520),
        }
    }

    /// Draws the figure on `root` (its title included).
    pub fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), FigureError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(&self.title, ("sans-serif", 16)).map_err(err)?;
        match &self.plot {
            Plot::Lines {
                series,
                x_label,
                y_label,
                x_range,
                y_range,
                diagonal,
                markers,
            } => {
                let mut chart = ChartBuilder::on(&root)
                    .margin(10)
                    .x_label_area_size(36)
                    .y_label_area_size(52)
                    .build_cartesian_2d(x_range.0..x_range.1, y_range.0..y_range.1)
                    .map_err(err)?;
                chart
                    .configure_mesh()
                    .light_line_style(WHITE)
                    .x_desc(x_label.as_str())
                    .y_desc(y_label.as_str())
                    .draw()
                    .map_err(err)?;
                if *diagonal {
                    chart
                        .draw_series(LineSeries::new([(0.0, 0.0), (1.0, 1.0)], BLACK.mix(0.3)))
                        .map_err(err)?;
                }
                for (i, s) in series.iter().enumerate() {
                    let color = PALETTE[i % PALETTE.len()];
                    chart
                        .draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))
                        .map_err(err)?
                        .label(s.name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2))
                        });
                    if *markers {
                        chart
                            .draw_series(
                                s.points.iter().map(|p| Circle::new(*p, 3, color.filled())),
                            )
                            .map_err(err)?;
                    }
                }
                // Calibration lines climb to the upper right: the legend goes where they are not.
                let corner = if *diagonal {
                    SeriesLabelPosition::UpperLeft
                } else {
                    SeriesLabelPosition::UpperRight
                };
                chart
                    .configure_series_labels()
                    .position(corner)
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK.mix(0.3))
                    .draw()
                    .map_err(err)?;
            }
            Plot::Scatter { panels, y_label } => {
                let areas = root.split_evenly((1, panels.len().max(1)));
                for (panel, area) in panels.iter().zip(&areas) {
                    let x_max = panel.points.iter().map(|p| p.0).fold(1e-9, f64::max);
                    let x_min = panel.points.iter().map(|p| p.0).fold(0.0, f64::min);
                    let mut chart = ChartBuilder::on(area)
                        .margin(8)
                        .x_label_area_size(36)
                        .y_label_area_size(44)
                        .build_cartesian_2d(x_min..x_max * 1.05, 0.0..1.0)
                        .map_err(err)?;
                    chart
                        .configure_mesh()
                        .light_line_style(WHITE)
                        .x_labels(4)
                        .x_desc(panel.x_label.as_str())
                        .y_desc(y_label.as_str())
                        .draw()
                        .map_err(err)?;
                    chart
                        .draw_series(
                            panel
                                .points
                                .iter()
                                .map(|p| Circle::new(*p, 2, PALETTE[1].mix(0.35).filled())),
                        )
                        .map_err(err)?;
                    if let Some((a, b, _)) = panel.fit {
                        let line = [(x_min, a + b * x_min), (x_max, a + b * x_max)];
                        chart
                            .draw_series(LineSeries::new(line, PALETTE[0].stroke_width(2)))
                            .map_err(err)?;
                    }
                }
            }
            Plot::Bars {
                labels,
                series,
                y_label,
            } => {
                let top = series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.1))
                    .fold(0.05, f64::max);
                let groups = labels.len().max(1);
                let mut chart = ChartBuilder::on(&root)
                    .margin(10)
                    .x_label_area_size(70)
                    .y_label_area_size(52)
                    .build_cartesian_2d(0.0..groups as f64, 0.0..top * 1.1)
                    .map_err(err)?;
                let names = labels.clone();
                chart
                    .configure_mesh()
                    .disable_x_mesh()
                    .light_line_style(WHITE)
                    .x_labels(groups * 2 + 1)
                    .x_label_formatter(&|x| {
                        let i = x.floor() as usize;
                        if (x - x.floor() - 0.5).abs() < 0.01 {
                            names.get(i).cloned().unwrap_or_default()
                        } else {
                            String::new()
                        }
                    })
                    .x_label_style(if groups > 12 {
                        // Many groups (words): upright labels would overlap.
                        ("sans-serif", 11)
                            .into_font()
                            .transform(FontTransform::Rotate90)
                    } else {
                        ("sans-serif", 12).into_font()
                    })
                    .y_desc(y_label.as_str())
                    .draw()
                    .map_err(err)?;
                let width = 0.8 / series.len().max(1) as f64;
                for (k, s) in series.iter().enumerate() {
                    let color = PALETTE[k % PALETTE.len()];
                    chart
                        .draw_series(s.points.iter().map(|&(x, y)| {
                            let left = x + 0.1 + k as f64 * width;
                            Rectangle::new([(left, 0.0), (left + width, y)], color.filled())
                        }))
                        .map_err(err)?
                        .label(s.name.as_str())
                        .legend(move |(x, y)| {
                            Rectangle::new([(x, y - 4), (x + 10, y + 4)], color.filled())
                        });
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK.mix(0.3))
                    .draw()
                    .map_err(err)?;
            }
            Plot::Histogram {
                bins,
                marks,
                x_label,
            } => draw_histogram(&root, bins, marks, x_label)?,
        }
        root.present().map_err(err)
    }

    /// The figure as an SVG document.
    pub fn to_svg(&self, width: u32, height: u32) -> Result<String, FigureError> {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
            self.draw(&root)?;
        }
        Ok(out)
    }
}

fn draw_histogram<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    bins: &[(f64, f64, u32)],
    marks: &[(String, f64)],
    x_label: &str,
) -> Result<(), FigureError>
where
    DB::ErrorType: 'static,
{
    let top = f64::from(bins.iter().map(|b| b.2).max().unwrap_or(0).max(1));
    let x_min = bins.first().map_or(0.0, |b| b.0);
    let x_max = bins.last().map_or(1.0, |b| b.1);
    let mut chart = ChartBuilder::on(root)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(44)
        // A little room either side, so a mark at 0 or 1 is not hidden by an axis.
        .build_cartesian_2d(x_min - 0.02..x_max + 0.02, 0.0..top * 1.15)
        .map_err(err)?;
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .x_desc(x_label)
        .y_desc("participants")
        .draw()
        .map_err(err)?;
    chart
        .draw_series(bins.iter().map(|&(lo, hi, n)| {
            Rectangle::new(
                [(lo, 0.0), (hi, f64::from(n))],
                PALETTE[6].mix(0.5).filled(),
            )
        }))
        .map_err(err)?;
    // The first mark (the participant) in black, the next (the model) in blue, as in the
    // token game's histogram.
    for (i, (name, x)) in marks.iter().enumerate() {
        let color = if i == 0 { BLACK } else { PALETTE[1] };
        chart
            .draw_series(LineSeries::new(
                [(*x, 0.0), (*x, top * 1.1)],
                color.stroke_width(3),
            ))
            .map_err(err)?
            .label(format!("{name}: {:.1} %", 100.0 * x))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(err)?;
    Ok(())
}

/// The top-1 accuracy of every participant, (id, contexts, accuracy), as a histogram in
/// 5-point bins, with `marks` (name, accuracy) drawn over it.
pub fn participant_histogram(
    accuracies: &[(String, usize, f64)],
    marks: &[(String, f64)],
) -> Figure {
    const BINS: usize = 20;
    let mut counts = [0u32; BINS];
    for (_, _, a) in accuracies {
        let i = ((a * BINS as f64).floor() as usize).min(BINS - 1);
        counts[i] += 1;
    }
    let bins = counts
        .iter()
        .enumerate()
        .map(|(i, &n)| (i as f64 / BINS as f64, (i + 1) as f64 / BINS as f64, n))
        .collect();
    let rows = accuracies
        .iter()
        .map(|(id, n, a)| vec![id.clone(), n.to_string(), format!("{a:.6}")])
        .chain(
            marks
                .iter()
                .skip(1)
                .map(|(name, a)| vec![name.clone(), String::new(), format!("{a:.6}")]),
        );
    Figure {
        id: "participant-accuracy".into(),
        title: format!("Top-1 accuracy of {} participants", accuracies.len()),
        plot: Plot::Histogram {
            bins,
            marks: marks.to_vec(),
            x_label: "top-1 accuracy (the word that followed)".into(),
        },
        csv: csv(&["participant", "contexts", "top1_accuracy"], rows),
    }
}

fn systems(per_context: &[PerContext]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in per_context {
        if !names.contains(&p.system) {
            names.push(p.system.clone());
        }
    }
    names
}

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
                .map(|(m, (lo, hi))| format!("E[TVD] {m:.2} [{lo:.2}, {hi:.2}]"));
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
    let mean_of = |v: &[f64]| super::metrics::mean(v).map(|m| format!("mean {m:.3}"));
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
        },
        csv: csv(
            &["system", "tvd", "density", "bandwidth"],
            csv_rows.into_iter(),
        ),
    })
}

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
        },
        csv: csv(
            &["system", "percent", "mean_tvd", "w1_to_oracle"],
            csv_rows.into_iter(),
        ),
    })
}

/// Appendix B: a system's per-context TVD to the humans against the oracle's TVD, the human
/// entropy, the system's entropy and the context length, each with its least-squares line.
pub fn predictors(per_context: &[PerContext], system: &str) -> Option<Figure> {
    let mine: Vec<&PerContext> = per_context.iter().filter(|p| p.system == system).collect();
    let oracle: BTreeMap<ContextKey, f64> = per_context
        .iter()
        .filter(|p| p.system == "Oracle")
        .filter_map(|p| Some(((p.text_id, p.word_num), p.tvd_human?)))
        .collect();
    let with = |x: &dyn Fn(&PerContext) -> Option<f64>| -> Vec<(f64, f64)> {
        mine.iter()
            .filter_map(|p| Some((x(p)?, p.tvd_human?)))
            .collect()
    };
    let columns: [(&str, Vec<(f64, f64)>); 4] = [
        (
            "oracle TVD",
            with(&|p| oracle.get(&(p.text_id, p.word_num)).copied()),
        ),
        ("human entropy", with(&|p| Some(p.human_entropy))),
        ("model entropy", with(&|p| Some(p.entropy))),
        (
            "context length (words)",
            with(&|p| Some(p.context_words as f64)),
        ),
    ];
    if columns[1].1.is_empty() {
        return None;
    }
    let mut csv_rows = Vec::new();
    for p in &mine {
        csv_rows.push(vec![
            p.text_id.to_string(),
            p.word_num.to_string(),
            p.tvd_human.map(|t| format!("{t:.6}")).unwrap_or_default(),
            oracle
                .get(&(p.text_id, p.word_num))
                .map(|t| format!("{t:.6}"))
                .unwrap_or_default(),
            format!("{:.6}", p.human_entropy),
            format!("{:.6}", p.entropy),
            p.context_words.to_string(),
        ]);
    }
    let panels = columns
        .into_iter()
        .map(|(label, points)| {
            let fit = fit_line(&points);
            let x_label = match fit {
                Some((_, b, r)) => format!("{label} (slope {b:.2}, r = {r:.2})"),
                None => label.to_string(),
            };
            Panel {
                x_label,
                points,
                fit,
            }
        })
        .collect();
    let id: String = system
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    Some(Figure {
        id: format!("predictors-{id}"),
        title: format!("{system}: what its per-context TVD goes with"),
        plot: Plot::Scatter {
            panels,
            y_label: "TVD to humans".into(),
        },
        csv: csv(
            &[
                "text_id",
                "word_num",
                "tvd_human",
                "oracle_tvd",
                "human_entropy",
                "model_entropy",
                "context_words",
            ],
            csv_rows.into_iter(),
        ),
    })
}

/// Figure 1: one context, the humans' words beside a system's, the top 15 of each.
pub fn context_bars(data: &Dataset, key: ContextKey, system: &str) -> Option<Figure> {
    let ctx = data.norms.iter().find(|c| (c.text_id, c.word_num) == key)?;
    let human =
        WordDistribution::from_counts(ctx.human.iter().map(|(w, n)| (w.as_str(), *n as f64)))
            .ok()?;
    let samples = data
        .systems
        .iter()
        .find(|(n, _)| n == system)?
        .1
        .get(&key)?;
    let model =
        WordDistribution::from_counts(samples.words.iter().map(|(w, c)| (w.as_str(), *c))).ok()?;
    let top = |d: &WordDistribution| {
        let mut words: Vec<(&str, f64)> = d.support().collect();
        words.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        words
            .into_iter()
            .take(15)
            .map(|(w, _)| w.to_string())
            .collect::<Vec<_>>()
    };
    let mut labels = top(&human);
    for w in top(&model) {
        if !labels.contains(&w) {
            labels.push(w);
        }
    }
    let series_of = |name: &str, d: &WordDistribution| Series {
        name: name.to_string(),
        points: labels
            .iter()
            .enumerate()
            .map(|(i, w)| (i as f64, d.prob(w)))
            .collect(),
    };
    let csv_rows = labels.iter().map(|w| {
        vec![
            w.clone(),
            format!("{:.6}", human.prob(w)),
            format!("{:.6}", model.prob(w)),
        ]
    });
    Some(Figure {
        id: format!("context-{}-{}", key.0, key.1),
        title: format!("“…{}” — people vs {system}", tail_words(&ctx.context, 8)),
        csv: csv(&["word", "human", system], csv_rows),
        plot: Plot::Bars {
            series: vec![series_of("people", &human), series_of(system, &model)],
            labels,
            y_label: "probability".into(),
        },
    })
}

/// Histograms side by side as grouped bars: for each group (a system, the oracle, the human
/// control) the share of its values in each of `bins` equal bins over [0, 1] (values outside
/// are clamped). The CSV has one row per group and bin. `None` when every group is empty.
pub fn share_histograms(
    id: &str,
    title: &str,
    x_label: &str,
    groups: &[(String, Vec<f64>)],
    bins: usize,
) -> Option<Figure> {
    let bins = bins.max(1);
    if groups.iter().all(|(_, v)| v.is_empty()) {
        return None;
    }
    let labels: Vec<String> = (0..bins)
        .map(|i| {
            format!(
                "{:.2}–{:.2}",
                i as f64 / bins as f64,
                (i + 1) as f64 / bins as f64
            )
        })
        .collect();
    let mut rows = Vec::new();
    let series = groups
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(name, values)| {
            let mut counts = vec![0usize; bins];
            for v in values {
                let i = ((v.clamp(0.0, 1.0) * bins as f64).floor() as usize).min(bins - 1);
                counts[i] += 1;
            }
            let n = values.len() as f64;
            for (i, c) in counts.iter().enumerate() {
                rows.push(vec![
                    name.clone(),
                    labels[i].clone(),
                    c.to_string(),
                    format!("{:.6}", *c as f64 / n),
                ]);
            }
            Series {
                name: format!("{name} (n = {})", values.len()),
                points: counts
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (i as f64, *c as f64 / n))
                    .collect(),
            }
        })
        .collect();
    Some(Figure {
        id: id.to_string(),
        title: title.to_string(),
        plot: Plot::Bars {
            labels,
            series,
            y_label: format!("share of contexts ({x_label})"),
        },
        csv: csv(&["group", "bin", "contexts", "share"], rows.into_iter()),
    })
}

fn tail_words(text: &str, n: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    words[words.len().saturating_sub(n)..].join(" ")
}

/// Table 1 as CSV, with the published mean TVD beside ours.
pub fn table1_csv(rows: &[Row]) -> String {
    let f = |x: Option<f64>| x.map(|v| format!("{v:.6}")).unwrap_or_default();
    let lines = rows.iter().map(|r| {
        let published = PUBLISHED_TVD
            .iter()
            .find(|(n, _)| *n == r.system)
            .map(|(_, v)| *v);
        vec![
            r.system.clone(),
            r.contexts.to_string(),
            f(r.ece_original),
            f(r.ece_human_majority),
            f(r.ece_oracle_majority.map(|e| e.0)),
            f(r.tvd_human),
            f(r.tvd_human_ci.map(|c| c.0)),
            f(r.tvd_human_ci.map(|c| c.1)),
            f(published),
            f(r.tvd_oracle.map(|t| t.0)),
            f(r.w1_to_oracle),
            format!("{:.6}", r.top1_accuracy),
            format!("{:.6}", r.mean_entropy),
        ]
    });
    csv(
        &[
            "system",
            "contexts",
            "ece_original",
            "ece_human_majority",
            "ece_oracle_majority",
            "tvd_human",
            "tvd_human_low",
            "tvd_human_high",
            "published_tvd_human",
            "tvd_oracle",
            "w1_to_oracle",
            "top1_accuracy",
            "mean_entropy",
        ],
        lines,
    )
}

/// Every dataset-wide figure: density, the three reliability diagrams, both interpretation
/// curves, and the predictors of each system.
pub fn all(rows: &[Row], per_context: &[PerContext], convention: EceConvention) -> Vec<Figure> {
    let mut out: Vec<Figure> = tvd_density(rows, per_context).into_iter().collect();
    out.extend(
        Target::ALL
            .iter()
            .filter_map(|t| reliability(per_context, *t, convention)),
    );
    out.extend(interpretation_curves(rows, false));
    out.extend(interpretation_curves(rows, true));
    for name in systems(per_context) {
        if name != "Human" && name != "Oracle" {
            out.extend(predictors(per_context, &name));
        }
    }
    out
}

/// Everything the Analysis page shows for a dataset, computed in one go (in the worker).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Analysis {
    pub rows: Vec<Row>,
    pub figures: Vec<Figure>,
    pub table1_csv: String,
    /// The systems compared (for the per-context figure).
    pub systems: Vec<String>,
    /// Every context: its key and its text (to search, and for the model to continue).
    pub contexts: Vec<(ContextKey, String)>,
    /// Participants of the app's exports in the data (for the participant panel).
    pub participants: Vec<String>,
    /// What was left out of the data and why.
    pub notes: Vec<String>,
}

impl Analysis {
    /// Computes Table 1 and every dataset-wide figure.
    pub fn compute(
        data: &Dataset,
        options: &super::table1::Table1Options,
    ) -> Result<Self, super::table1::Table1Error> {
        let (rows, per_context) = super::table1::compute_on(data, options)?;
        Ok(Self::from_table(data, rows, &per_context, options.ece))
    }

    /// From Table 1 already computed on `data` (its rows and per-context figures).
    pub fn from_table(
        data: &Dataset,
        rows: Vec<Row>,
        per_context: &[PerContext],
        convention: EceConvention,
    ) -> Self {
        Self {
            figures: all(&rows, per_context, convention),
            table1_csv: table1_csv(&rows),
            rows,
            systems: data.systems.iter().map(|s| s.0.clone()).collect(),
            contexts: data
                .norms
                .iter()
                .map(|c| ((c.text_id, c.word_num), c.context.clone()))
                .collect(),
            participants: data.participants.keys().cloned().collect(),
            notes: data.notes.clone(),
        }
    }
}
