//! Histograms: participants' top-1 accuracy, and shares of contexts per bin side by side.

use super::csv;
use super::plot::{Figure, Plot, Series};

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
