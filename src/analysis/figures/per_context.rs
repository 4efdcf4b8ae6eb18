//! Figures about single contexts: one context's words (Figure 1) and what a system's
//! per-context TVD goes with (Appendix B).

use std::collections::BTreeMap;

use super::csv;
use super::plot::{Figure, Panel, Plot, Series};
use crate::analysis::dataset::Dataset;
use crate::analysis::metrics::{WordDistribution, fit_line};
use crate::analysis::table1::{ORACLE, PerContext};
use crate::data::provo::ContextKey;

/// Appendix B: a system's per-context TVD to the humans against the oracle's TVD, the human
/// entropy, the system's entropy and the context length, each with its least-squares line.
pub fn predictors(per_context: &[PerContext], system: &str) -> Option<Figure> {
    let mine: Vec<&PerContext> = per_context.iter().filter(|p| p.system == system).collect();
    let oracle: BTreeMap<ContextKey, f64> = per_context
        .iter()
        .filter(|p| p.system == ORACLE)
        .filter_map(|p| Some((ContextKey::new(p.text_id, p.word_num), p.tvd_human?)))
        .collect();
    let with = |x: &dyn Fn(&PerContext) -> Option<f64>| -> Vec<(f64, f64)> {
        mine.iter()
            .filter_map(|p| Some((x(p)?, p.tvd_human?)))
            .collect()
    };
    let columns: [(&str, Vec<(f64, f64)>); 4] = [
        (
            "oracle TVD",
            with(&|p| oracle.get(&ContextKey::new(p.text_id, p.word_num)).copied()),
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
                .get(&ContextKey::new(p.text_id, p.word_num))
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
    let ctx = data.norms.iter().find(|c| c.key() == key)?;
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
        id: format!("context-{}-{}", key.text_id, key.word_num),
        title: format!("“…{}” — people vs {system}", tail_words(&ctx.context, 8)),
        csv: csv(&["word", "human", system], csv_rows),
        plot: Plot::Bars {
            series: vec![series_of("people", &human), series_of(system, &model)],
            labels,
            y_label: "probability".into(),
        },
    })
}

fn tail_words(text: &str, n: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    words[words.len().saturating_sub(n)..].join(" ")
}
