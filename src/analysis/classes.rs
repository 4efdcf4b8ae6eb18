//! Syntactic and semantic TVD (Ilia & Aziz 2024, §5, Figure 4, Appendix G): the TVD between two
//! next-word distributions after each word is replaced by a class — its part of speech in the
//! context (syntactic), or its meaning cluster among the context's words (semantic) — so that
//! two systems that disagree on the words but agree on the kind of word come out close.
//!
//! Per context, the class of a word is decided once for everything compared there: for a model,
//! over the union of people's words and the model's; for the oracle, over people's words.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::clusters::{ClusterError, class_tvd, elbow};
use super::dataset::Dataset;
use super::figures::{Figure, share_histograms};
use super::metrics::{Interval, MetricsError, WordDistribution, mean, mean_with_bootstrap_ci};
use super::table1::{ORACLE, Table1Options, human_distributions, oracle_rng, oracle_split};
use crate::data::provo::{ContextKey, ProvoContext};
use crate::text::pos::{Tagger, UniversalTag};

/// Which classes words are merged into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Syntactic,
    Semantic,
}

impl Level {
    pub fn label(self) -> &'static str {
        match self {
            Level::Syntactic => "syntactic",
            Level::Semantic => "semantic",
        }
    }
}

/// Puts one context's words into classes. A word left out of the map is a class of its own.
pub trait WordClasses {
    fn classes(&self, context: &ProvoContext, words: &BTreeSet<&str>) -> BTreeMap<String, String>;
}

/// Syntactic classes: each word's universal part-of-speech tag after the context.
pub struct PartOfSpeech<'a>(pub &'a Tagger);

impl WordClasses for PartOfSpeech<'_> {
    fn classes(&self, context: &ProvoContext, words: &BTreeSet<&str>) -> BTreeMap<String, String> {
        words
            .iter()
            .filter_map(|w| {
                let tag = self.0.tag_in_context(&context.context, w)?;
                Some((w.to_string(), UniversalTag::as_str(tag).to_string()))
            })
            .collect()
    }
}

/// Semantic classes: k-means clusters (k at the elbow, [`elbow`]) of the words' embeddings,
/// standardised per dimension over the context's words (z-scores, as scikit-learn's
/// `StandardScaler` before clustering in the paper). Words without an embedding are left out.
pub struct MeaningClusters<F> {
    pub embed: F,
    pub seed: u64,
}

impl<F: Fn(&str) -> Option<Vec<f64>>> WordClasses for MeaningClusters<F> {
    fn classes(&self, _context: &ProvoContext, words: &BTreeSet<&str>) -> BTreeMap<String, String> {
        let (names, points): (Vec<&str>, Vec<Vec<f64>>) = words
            .iter()
            .filter_map(|w| Some((*w, (self.embed)(w)?)))
            .unzip();
        let Ok(partition) = cluster_standardised(points, self.seed) else {
            return BTreeMap::new();
        };
        names
            .iter()
            .zip(partition)
            .map(|(w, c)| (w.to_string(), format!("cluster {c}")))
            .collect()
    }
}

/// Standardises the points per dimension (a constant dimension becomes 0) and clusters them at
/// the elbow.
///
/// ```
/// use clozelab::analysis::classes::cluster_standardised;
/// // Two tight groups on a scale where the second dimension is huge.
/// let points = vec![vec![0.0, 1e6], vec![0.1, 1e6], vec![9.0, 1e6], vec![9.1, 1e6]];
/// let clusters = cluster_standardised(points, 1).unwrap();
/// assert_eq!(clusters[0], clusters[1]);
/// assert_ne!(clusters[0], clusters[2]);
/// ```
pub fn cluster_standardised(
    mut points: Vec<Vec<f64>>,
    seed: u64,
) -> Result<Vec<usize>, ClusterError> {
    let n = points.len();
    let dim = points.first().ok_or(ClusterError::Empty)?.len();
    if points.iter().any(|p| p.len() != dim) {
        return Err(ClusterError::BadPoint(dim));
    }
    for d in 0..dim {
        let m = points.iter().map(|p| p[d]).sum::<f64>() / n as f64;
        let sd = (points.iter().map(|p| (p[d] - m).powi(2)).sum::<f64>() / n as f64).sqrt();
        for p in points.iter_mut() {
            p[d] = if sd > 0.0 { (p[d] - m) / sd } else { 0.0 };
        }
    }
    Ok(elbow(&points, seed)?.assignment)
}

/// One system's syntactic or semantic TVD: its mean over contexts (for the oracle, group 2
/// against group 1, averaged over the oracle resamples) and the per-context values, for the
/// histograms of Figure 4.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct ClassRow {
    pub system: String,
    pub level: Level,
    pub contexts: usize,
    pub tvd_human: Option<f64>,
    pub tvd_human_ci: Option<Interval>,
    /// (text_id, word_num, TVD) per context.
    pub per_context: Vec<(u32, u32, f64)>,
}

fn distribution(counts: impl Iterator<Item = (String, f64)>) -> Option<WordDistribution> {
    let counts: Vec<(String, f64)> = counts.collect();
    WordDistribution::from_counts(counts.iter().map(|(w, c)| (w.as_str(), *c))).ok()
}

fn words_of<'a>(dists: &[&'a WordDistribution]) -> BTreeSet<&'a str> {
    dists
        .iter()
        .flat_map(|d| d.support().map(|(w, _)| w))
        .collect()
}

/// The oracle's row and one row per system, at one level. The oracle groups are drawn exactly as
/// in [`super::table1::compute_on`] (same seeds), so the word-level and class-level oracles are
/// the same people.
pub fn class_tvd_rows(
    data: &Dataset,
    classes: &dyn WordClasses,
    level: Level,
    options: &Table1Options,
) -> Result<Vec<ClassRow>, MetricsError> {
    let norms = &data.norms;
    let full = human_distributions(norms)?;
    let resamples = options.resamples.max(1);
    let mut oracle_sum = vec![(0.0, 0usize); norms.len()];
    let human_classes: Vec<BTreeMap<String, String>> = norms
        .iter()
        .zip(&full)
        .map(|(c, h)| classes.classes(c, &words_of(&[h])))
        .collect();
    for r in 0..resamples {
        let mut rng = oracle_rng(options.seed, r);
        for (i, c) in norms.iter().enumerate() {
            if let Some((g1, g2)) = oracle_split(&c.human, options.oracle_size, &mut rng) {
                oracle_sum[i].0 += class_tvd(&g2, &g1, &human_classes[i]);
                oracle_sum[i].1 += 1;
            }
        }
    }
    let oracle: Vec<(u32, u32, f64)> = norms
        .iter()
        .zip(&oracle_sum)
        .filter(|(_, (_, n))| *n > 0)
        .map(|(c, (sum, n))| (c.text_id, c.word_num, sum / *n as f64))
        .collect();
    let mut rows = vec![make_row(ORACLE, level, oracle)];
    for (name, samples) in &data.systems {
        let per_context: Vec<(u32, u32, f64)> = norms
            .iter()
            .zip(&full)
            .filter_map(|(c, h)| {
                let s = samples.get(&c.key())?;
                let model = distribution(s.words.iter().map(|(w, n)| (w.clone(), *n)))?;
                let map = classes.classes(c, &words_of(&[h, &model]));
                Some((c.text_id, c.word_num, class_tvd(&model, h, &map)))
            })
            .collect();
        if !per_context.is_empty() {
            rows.push(make_row(name, level, per_context));
        }
    }
    Ok(rows)
}

fn make_row(system: &str, level: Level, per_context: Vec<(u32, u32, f64)>) -> ClassRow {
    let values: Vec<f64> = per_context.iter().map(|(_, _, t)| *t).collect();
    ClassRow {
        system: system.to_string(),
        level,
        contexts: values.len(),
        tvd_human: mean(&values),
        tvd_human_ci: mean_with_bootstrap_ci(&values, 1000, 17).map(|(_, ci)| ci),
        per_context,
    }
}

/// The rows as text: system, level, contexts, mean TVD and its 95% interval.
pub fn format_rows(rows: &[ClassRow]) -> String {
    let mut out = format!(
        "{:<15} {:<10} {:>5} {:>9} {:>17}\n",
        "system", "level", "n", "TVD", "95% CI"
    );
    for r in rows {
        let tvd = r.tvd_human.map_or("—".into(), |v| format!("{v:.3}"));
        let ci = r.tvd_human_ci.map_or("—".into(), |ci| {
            format!("[{:.3}, {:.3}]", ci.low, ci.high)
        });
        out.push_str(&format!(
            "{:<15} {:<10} {:>5} {:>9} {:>17}\n",
            r.system,
            r.level.label(),
            r.contexts,
            tvd,
            ci
        ));
    }
    out
}

/// The rows as CSV: system, level, contexts, mean TVD and its 95% interval.
pub fn rows_csv(rows: &[ClassRow]) -> String {
    let f = |v: Option<f64>| v.map(|v| format!("{v:.6}")).unwrap_or_default();
    crate::data::write_delimited(
        &[
            "system",
            "level",
            "contexts",
            "tvd_human",
            "ci_low",
            "ci_high",
        ],
        rows.iter().map(|r| {
            vec![
                r.system.clone(),
                r.level.label().to_string(),
                r.contexts.to_string(),
                f(r.tvd_human),
                f(r.tvd_human_ci.map(|c| c.low)),
                f(r.tvd_human_ci.map(|c| c.high)),
            ]
        }),
        crate::data::Delimiter::Comma,
    )
}

/// Figure 4: for each system, the histogram of its per-context TVD at `level` beside the
/// oracle's on the same contexts.
pub fn histograms(rows: &[ClassRow], level: Level) -> Vec<Figure> {
    let at_level: Vec<&ClassRow> = rows.iter().filter(|r| r.level == level).collect();
    let Some(oracle) = at_level.iter().find(|r| r.system == ORACLE) else {
        return Vec::new();
    };
    let oracle_at: BTreeMap<ContextKey, f64> = oracle
        .per_context
        .iter()
        .map(|(t, w, v)| (ContextKey::new(*t, *w), *v))
        .collect();
    at_level
        .iter()
        .filter(|r| r.system != ORACLE)
        .filter_map(|r| {
            let own: Vec<f64> = r.per_context.iter().map(|(_, _, v)| *v).collect();
            let oracle: Vec<f64> = r
                .per_context
                .iter()
                .filter_map(|(t, w, _)| oracle_at.get(&ContextKey::new(*t, *w)).copied())
                .collect();
            let slug: String = r
                .system
                .to_lowercase()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            share_histograms(
                &format!("{}-tvd-{slug}", level.label()),
                &format!(
                    "{} TVD per context: {} and the oracle",
                    capitalised(level.label()),
                    r.system
                ),
                &format!("{} TVD", level.label()),
                &[(r.system.clone(), own), (ORACLE.into(), oracle)],
                10,
            )
        })
        .collect()
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::metrics::tvd;
    use crate::data::provo::Samples;
    use proptest::prelude::*;

    /// Classes by first letter: a hand-checkable stand-in for tags or clusters.
    struct FirstLetter;
    impl WordClasses for FirstLetter {
        fn classes(&self, _: &ProvoContext, words: &BTreeSet<&str>) -> BTreeMap<String, String> {
            words
                .iter()
                .filter(|w| !w.starts_with('z'))
                .map(|w| (w.to_string(), w.chars().take(1).collect()))
                .collect()
        }
    }

    fn dataset() -> Dataset {
        let context = ProvoContext {
            text_id: 1,
            word_num: 2,
            context: "The".into(),
            original: "cat".into(),
            human: BTreeMap::from([("cat".to_string(), 2), ("cow".to_string(), 2)]),
            gpt2_logprob_human: None,
            gpt2_logprob_original: None,
        };
        let samples = Samples {
            words: BTreeMap::from([("car".to_string(), 3.0), ("dog".to_string(), 1.0)]),
            failed: 0,
        };
        Dataset {
            norms: vec![context],
            systems: vec![(
                "model".into(),
                BTreeMap::from([(ContextKey::new(1, 2), samples)]),
            )],
            ..Dataset::default()
        }
    }

    #[test]
    fn class_tvd_rows_merge_words_into_classes() {
        let options = Table1Options {
            resamples: 3,
            ..Table1Options::default()
        };
        let rows = class_tvd_rows(&dataset(), &FirstLetter, Level::Syntactic, &options).unwrap();
        assert_eq!(rows.len(), 2);
        // Words: people {cat ½, cow ½}, model {car ¾, dog ¼}: TVD 1. By first letter: c 1 vs
        // c ¾ + d ¼: TVD ¼.
        assert_eq!(rows[1].system, "model");
        assert_eq!(rows[1].per_context, [(1, 2, 0.25)]);
        // The oracle's halves hold only c-words: identical classes, TVD 0.
        assert_eq!(rows[0].tvd_human, Some(0.0));
        assert!(format_rows(&rows).contains("syntactic"));
        let figures = histograms(&rows, Level::Syntactic);
        assert_eq!(figures.len(), 1);
        assert_eq!(figures[0].id, "syntactic-tvd-model");
        assert!(histograms(&rows, Level::Semantic).is_empty());
    }

    proptest! {
        /// Merging words into classes never increases the TVD, and singleton classes (or none)
        /// leave it as it is.
        #[test]
        fn merging_never_increases_tvd(
            p in proptest::collection::vec(0.01f64..1.0, 1..6),
            q in proptest::collection::vec(0.01f64..1.0, 1..6),
            classes in proptest::collection::vec(0usize..3, 6),
        ) {
            let words = ["a", "b", "c", "d", "e", "f"];
            let dist = |w: &[f64]| WordDistribution::from_counts(words.iter().copied().zip(w.iter().copied())).unwrap();
            let (p, q) = (dist(&p), dist(&q));
            let map: BTreeMap<String, usize> = words.iter().map(|w| w.to_string()).zip(classes).collect();
            let merged = class_tvd(&p, &q, &map);
            prop_assert!(merged <= tvd(&p, &q) + 1e-12);
            let singletons: BTreeMap<String, usize> = words.iter().enumerate().map(|(i, w)| (w.to_string(), i)).collect();
            prop_assert!((class_tvd(&p, &q, &singletons) - tvd(&p, &q)).abs() < 1e-12);
            prop_assert!((class_tvd(&p, &q, &BTreeMap::<String, usize>::new()) - tvd(&p, &q)).abs() < 1e-12);
        }

        /// Standardising makes the clusters blind to each dimension's scale and offset.
        #[test]
        fn clusters_ignore_scale_and_offset(
            points in proptest::collection::vec(proptest::collection::vec(-10.0f64..10.0, 3), 3..12),
            scale in proptest::collection::vec(0.1f64..100.0, 3),
            offset in proptest::collection::vec(-50.0f64..50.0, 3),
        ) {
            let moved: Vec<Vec<f64>> = points
                .iter()
                .map(|p| p.iter().enumerate().map(|(d, x)| x * scale[d] + offset[d]).collect())
                .collect();
            let a = cluster_standardised(points, 3).unwrap();
            let b = cluster_standardised(moved, 3).unwrap();
            // The same partition (labels may be the same numbers: same seed, same z-scores).
            for i in 0..a.len() {
                for j in 0..a.len() {
                    prop_assert_eq!(a[i] == a[j], b[i] == b[j]);
                }
            }
        }
    }
}
