//! How precise the norms are so far: each context's 95% interval width of the target word's
//! cloze probability (at the least favourable probability inside it, as the target is checked)
//! against its number of answers, those meeting the target apart from those
//! not yet, and the target's bound as a line.

use super::csv;
use super::plot::{Figure, Plot, Series};
use crate::analysis::norming::precision::{ContextPrecision, PrecisionTarget};
use crate::data::provo::ProvoContext;
use crate::text::words::normalize;

/// The target the Analysis page and `clozelab figures` show precision against: the interval
/// 0.3 wide or narrower for 90% of the contexts (what `docs/norming.md` finds about 39 readings
/// per passage buy).
pub fn default_target() -> PrecisionTarget {
    PrecisionTarget::new(Some(0.3), None, 0.9).expect("a valid target")
}

/// Each context's precision from its answers (`None` for a context nobody answered).
pub fn context_precision(context: &ProvoContext) -> Option<ContextPrecision> {
    let n: u32 = context.human.values().sum();
    let target = context
        .human
        .get(&normalize(&context.original))
        .copied()
        .unwrap_or(0);
    let f1 = context.human.values().filter(|&&k| k == 1).count() as u32;
    let f2 = context.human.values().filter(|&&k| k == 2).count() as u32;
    ContextPrecision::new(n, target, f1, f2)
}

/// The figure; `None` without answered contexts.
pub fn precision(norms: &[ProvoContext], target: &PrecisionTarget) -> Option<Figure> {
    let rows: Vec<(&ProvoContext, ContextPrecision)> = norms
        .iter()
        .filter_map(|c| Some((c, context_precision(c)?)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let (met, open): (Vec<_>, Vec<_>) = rows.iter().partition(|(_, p)| target.met_by(p));
    // The width the target is checked on, so that the bound's line parts the two groups.
    let point = |(_, p): &&(&ProvoContext, ContextPrecision)| (p.n as f64, p.worst_width);
    let max_n = rows.iter().map(|(_, p)| p.n).max().unwrap_or(1) as f64;
    let mut series = vec![
        Series {
            name: format!("meets the target ({})", met.len()),
            points: met.iter().map(point).collect(),
        },
        Series {
            name: format!("not yet ({})", open.len()),
            points: open.iter().map(point).collect(),
        },
    ];
    if let Some(w) = target.max_interval_width() {
        series.push(Series {
            name: format!("bound {w}"),
            // Unjoined dots: a dot per answer count draws the bound as a dotted line.
            points: (0..=max_n as u32 + 1).map(|n| (n as f64, w)).collect(),
        });
    }
    let share = met.len() as f64 / rows.len() as f64;
    let verdict = if target.enough(met.len(), rows.len()) {
        "target met"
    } else {
        "target not met yet"
    };
    let csv_rows = rows.iter().map(|(c, p)| {
        vec![
            c.text_id.to_string(),
            c.word_num.to_string(),
            p.n.to_string(),
            p.target.to_string(),
            format!("{:.6}", p.interval_width),
            format!("{:.6}", p.worst_width),
            format!("{:.6}", p.unseen_mass),
            target.met_by(p).to_string(),
        ]
    });
    Some(Figure {
        id: "norming_precision".into(),
        title: format!(
            "Norming precision: {} of {} contexts ({:.0}%) meet {}: {verdict}",
            met.len(),
            rows.len(),
            100.0 * share,
            target.describe()
        ),
        plot: Plot::Lines {
            series,
            x_label: "answers to the context".into(),
            y_label: "target word's 95% interval width, at its widest".into(),
            x_range: (0.0, max_n + 1.0),
            y_range: (0.0, 1.0),
            diagonal: false,
            markers: true,
            joined: false,
        },
        csv: csv(
            &[
                "text_id",
                "word_num",
                "answers",
                "target_answers",
                "interval_width",
                "interval_width_at_widest",
                "unseen_mass",
                "meets_target",
            ],
            csv_rows,
        ),
    })
}
