//! Reproduces Table 1 of Ilia & Aziz (2024) from ../shared/provo: calibration and distance of
//! several systems' next-word distributions against the Provo human norms.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::analysis::dataset::Dataset;
use crate::analysis::metrics::{
    CurvePoint, EceConvention, Interval, MeanSd, MetricsError, WordDistribution, ece_with,
    interpretation_curve, mean, mean_with_bootstrap_ci, tvd, wasserstein1,
};
use crate::data::provo::{ContextKey, ProvoContext, ProvoError, Samples};
use crate::data::{Delimiter, write_delimited};
use crate::rng::SplitMix64;
use crate::text::words::normalize;

/// Confidence bins for ECE, as in the paper (Guo et al. 2017).
pub const ECE_BINS: usize = 10;

/// How big each of the two disjoint oracle groups is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OracleSize {
    /// Halves of each context's responses (the paper's main oracle).
    Half,
    /// Two groups of `n` responses each (Appendix E: 10 and 20); contexts with fewer than 2n
    /// responses are left out.
    Of(usize),
}

impl std::str::FromStr for OracleSize {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "half" => Ok(OracleSize::Half),
            n => match n.parse::<usize>() {
                Ok(n) if n > 0 => Ok(OracleSize::Of(n)),
                _ => Err(format!(
                    "an oracle size is `half` or a positive number, not {n:?}"
                )),
            },
        }
    }
}

/// Two disjoint oracle groups from the flattened responses, drawn without replacement (a seeded
/// Fisher–Yates shuffle, the first group then the second): halves (one response dropped when the
/// count is odd) or two groups of `n`. `None` when there are too few responses.
pub fn oracle_split(
    human: &BTreeMap<String, u32>,
    size: OracleSize,
    rng: &mut SplitMix64,
) -> Option<(WordDistribution, WordDistribution)> {
    let mut flat: Vec<&str> = human
        .iter()
        .flat_map(|(w, c)| std::iter::repeat_n(w.as_str(), *c as usize))
        .collect();
    let group = match size {
        OracleSize::Half => flat.len() / 2,
        OracleSize::Of(n) => n,
    };
    if group == 0 || 2 * group > flat.len() {
        return None;
    }
    rng.shuffle(&mut flat);
    let first = WordDistribution::from_samples(flat[..group].iter().copied()).ok()?;
    let second = WordDistribution::from_samples(flat[group..2 * group].iter().copied()).ok()?;
    Some((first, second))
}

/// How Table 1 is computed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Table1Options {
    pub seed: u64,
    /// Oracle resamples: every oracle-dependent figure is averaged over them.
    pub resamples: usize,
    pub oracle_size: OracleSize,
    pub ece: EceConvention,
}

impl Default for Table1Options {
    fn default() -> Self {
        Self {
            seed: 0,
            resamples: 10,
            oracle_size: OracleSize::Half,
            ece: EceConvention::LastBin,
        }
    }
}

/// The interpretation curve's points (percent of contexts replaced) and its random draws per
/// point and resample.
pub const CURVE_PERCENTS: [u32; 11] = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
pub const CURVE_DRAWS: usize = 10;

/// One row of the table: means over the system's contexts. Every figure that depends on the
/// oracle split — the oracle's own row, TVD and ECE against an oracle group, W₁ and the
/// interpretation curve — is averaged over the resamples (never resample 0 alone).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Row {
    pub system: String,
    pub contexts: usize,
    pub ece_original: Option<f64>,
    pub ece_human_majority: Option<f64>,
    /// ECE against the majority word of oracle group 1 (mean ± sd over resamples).
    pub ece_oracle_majority: Option<MeanSd>,
    /// Mean TVD to the full human distribution (for the oracle: group 2 vs group 1).
    pub tvd_human: Option<f64>,
    /// Bootstrap 95% interval of that mean over contexts (1000 resamples).
    pub tvd_human_ci: Option<Interval>,
    /// Wasserstein-1 between this system's per-context TVDs (to oracle group 1) and the oracle's.
    pub w1_to_oracle: Option<f64>,
    /// The interpretation curve at [`CURVE_PERCENTS`] (random replacement, see
    /// [`interpretation_curve`]).
    pub interpretation_curve: Option<Vec<CurvePoint>>,
    /// Mean TVD to oracle group 1 (mean ± sd over resamples).
    pub tvd_oracle: Option<MeanSd>,
    pub top1_accuracy: f64,
    pub mean_entropy: f64,
    pub failed_samples: u64,
}

/// Per-context figures (oracle resample 0), for `--per-context` and the figures.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct PerContext {
    pub text_id: u32,
    pub word_num: u32,
    pub system: String,
    pub tvd_human: Option<f64>,
    pub tvd_oracle: Option<f64>,
    pub entropy: f64,
    pub mode: String,
    pub mode_prob: f64,
    /// Entropy of the human distribution, and the context's length in words (the predictors of
    /// Appendix B).
    pub human_entropy: f64,
    pub context_words: usize,
    /// Whether the mode is the original word, the human majority, oracle group 1's majority.
    pub hit_original: bool,
    pub hit_majority: bool,
    pub hit_oracle: Option<bool>,
}

enum Predictor<'a> {
    Human,
    Oracle,
    Model(&'a BTreeMap<ContextKey, Samples>),
}

/// One system's figures under one oracle resample.
#[derive(Default)]
struct Run {
    ece_original: Option<f64>,
    ece_human_majority: Option<f64>,
    ece_oracle_majority: Option<f64>,
    top1: Option<f64>,
    entropy: Option<f64>,
    /// This system's TVD to oracle group 1, and the oracle's (group 2 to group 1), per context.
    own_vs_group: Vec<f64>,
    oracle_vs_group: Vec<f64>,
}

/// Computes one row. `splits[r][i]` are the oracle groups of context i in resample r.
fn row(
    name: &str,
    predictor: Predictor,
    norms: &[ProvoContext],
    full: &[WordDistribution],
    splits: &[Vec<Option<(WordDistribution, WordDistribution)>>],
    options: &Table1Options,
    per_context: &mut Vec<PerContext>,
) -> Option<Row> {
    let mut failed = 0;
    let is_oracle = matches!(predictor, Predictor::Oracle);
    let is_human = matches!(predictor, Predictor::Human);
    // The predictor's distribution where it does not depend on the split.
    let fixed: Vec<Option<WordDistribution>> = norms
        .iter()
        .enumerate()
        .map(|(i, ctx)| match &predictor {
            Predictor::Human => Some(full[i].clone()),
            Predictor::Oracle => None,
            Predictor::Model(samples) => {
                let s = samples.get(&ctx.key())?;
                failed += s.failed;
                WordDistribution::from_counts(s.words.iter().map(|(w, c)| (w.as_str(), *c))).ok()
            }
        })
        .collect();
    // Oracle groups exist in the same contexts in every resample (it depends on counts only).
    let covered: Vec<usize> = (0..norms.len())
        .filter(|&i| {
            if is_oracle {
                splits.first().is_some_and(|s| s[i].is_some())
            } else {
                fixed[i].is_some()
            }
        })
        .collect();
    if covered.is_empty() {
        return None;
    }
    let mut tvd_full_sum = vec![(0.0, 0usize); covered.len()];
    let mut runs = Vec::with_capacity(splits.len());
    for (r, split) in splits.iter().enumerate() {
        let (mut orig, mut major, mut oracle_major) = (Vec::new(), Vec::new(), Vec::new());
        let (mut top1, mut entropies) = (Vec::new(), Vec::new());
        let mut run = Run::default();
        for (slot, &i) in covered.iter().enumerate() {
            let groups = split[i].as_ref();
            let dist = match (is_oracle, groups, fixed[i].as_ref()) {
                (true, Some((_, g2)), _) => g2,
                (false, _, Some(d)) => d,
                _ => continue,
            };
            let (mode, p) = dist.mode();
            let original = normalize(&norms[i].original);
            orig.push((p, mode == original));
            major.push((p, mode == full[i].mode().0));
            top1.push(if mode == original { 1.0 } else { 0.0 });
            entropies.push(dist.entropy());
            let t_full = if is_oracle {
                groups.map(|(g1, g2)| tvd(g2, g1))
            } else if is_human {
                None
            } else {
                Some(tvd(dist, &full[i]))
            };
            if let Some(t) = t_full {
                tvd_full_sum[slot].0 += t;
                tvd_full_sum[slot].1 += 1;
            }
            let t_oracle = groups.filter(|_| !is_human).map(|(g1, _)| tvd(dist, g1));
            if let Some((g1, g2)) = groups {
                oracle_major.push((p, mode == g1.mode().0));
                if let Some(t) = t_oracle {
                    run.own_vs_group.push(t);
                    run.oracle_vs_group.push(tvd(g2, g1));
                }
            }
            if r == 0 {
                per_context.push(PerContext {
                    text_id: norms[i].text_id,
                    word_num: norms[i].word_num,
                    system: name.to_string(),
                    tvd_human: t_full,
                    tvd_oracle: t_oracle,
                    entropy: dist.entropy(),
                    mode: mode.to_string(),
                    mode_prob: p,
                    human_entropy: full[i].entropy(),
                    context_words: norms[i].context.split_whitespace().count(),
                    hit_original: mode == original,
                    hit_majority: mode == full[i].mode().0,
                    hit_oracle: groups.map(|(g1, _)| mode == g1.mode().0),
                });
            }
        }
        run.ece_original = ece_with(&orig, ECE_BINS, options.ece);
        run.ece_human_majority = ece_with(&major, ECE_BINS, options.ece);
        run.ece_oracle_majority = ece_with(&oracle_major, ECE_BINS, options.ece);
        run.top1 = mean(&top1);
        run.entropy = mean(&entropies);
        runs.push(run);
    }
    let over_runs =
        |f: &dyn Fn(&Run) -> Option<f64>| -> Vec<f64> { runs.iter().filter_map(f).collect() };
    // Per-context TVD to the humans, averaged over resamples (the oracle's varies with them).
    let tvd_full: Vec<f64> = tvd_full_sum
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(sum, n)| sum / *n as f64)
        .collect();
    let compares_with_oracle = !(is_human || is_oracle);
    let w1 = over_runs(&|r| wasserstein1(&r.own_vs_group, &r.oracle_vs_group));
    let curves: Vec<Vec<CurvePoint>> = runs
        .iter()
        .enumerate()
        .filter_map(|(k, r)| {
            interpretation_curve(
                &r.own_vs_group,
                &r.oracle_vs_group,
                &CURVE_PERCENTS,
                CURVE_DRAWS,
                options.seed ^ (k as u64 + 1),
            )
        })
        .collect();
    let curve = (!curves.is_empty()).then(|| {
        (0..CURVE_PERCENTS.len())
            .map(|j| {
                let n = curves.len() as f64;
                CurvePoint {
                    percent: CURVE_PERCENTS[j],
                    mean_tvd: curves.iter().map(|c| c[j].mean_tvd).sum::<f64>() / n,
                    w1_to_oracle: curves.iter().map(|c| c[j].w1_to_oracle).sum::<f64>() / n,
                }
            })
            .collect()
    });
    Some(Row {
        system: name.to_string(),
        contexts: covered.len(),
        ece_original: mean(&over_runs(&|r| r.ece_original)),
        ece_human_majority: mean(&over_runs(&|r| r.ece_human_majority)),
        ece_oracle_majority: MeanSd::of(&over_runs(&|r| r.ece_oracle_majority)),
        tvd_human: mean(&tvd_full),
        tvd_human_ci: mean_with_bootstrap_ci(&tvd_full, 1000, 17).map(|(_, ci)| ci),
        w1_to_oracle: if compares_with_oracle {
            mean(&w1)
        } else {
            None
        },
        interpretation_curve: if compares_with_oracle { curve } else { None },
        tvd_oracle: if is_human {
            None
        } else {
            MeanSd::of(&over_runs(&|r| mean(&r.own_vs_group)))
        },
        top1_accuracy: mean(&over_runs(&|r| r.top1)).unwrap_or(0.0),
        mean_entropy: mean(&over_runs(&|r| r.entropy)).unwrap_or(0.0),
        failed_samples: failed,
    })
}

/// The system name of Table 1's oracle: one half of the people predicting the other half.
pub const ORACLE: &str = "Oracle";

/// The system name of the people themselves (every response as the prediction).
pub const HUMAN: &str = "Human";

/// Whether `system` is one of the two reference rows rather than a model.
pub fn is_reference_system(system: &str) -> bool {
    system == HUMAN || system == ORACLE
}

/// The published mean TVDs to the full human distribution (Table 1), for comparison.
pub const PUBLISHED_TVD: &[(&str, f64)] = &[
    (ORACLE, 0.42),
    ("GPT-2", 0.64),
    ("GPT-2 (T=0.5)", 0.61),
    ("BLOOM", 0.61),
    ("ChatGPT", 0.76),
    ("ChatGPT (list)", 0.82),
];

/// Why Table 1 could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum Table1Error {
    #[error(transparent)]
    Data(#[from] ProvoError),
    #[error("human norms: {0}")]
    HumanNorms(#[from] MetricsError),
}

/// Computes the table from a directory laid out like ../shared/provo.
pub fn compute(
    dir: &Path,
    options: &Table1Options,
) -> Result<(Vec<Row>, Vec<PerContext>), Table1Error> {
    compute_on(&Dataset::from_shared_dir(dir)?, options)
}

/// People's next-word distribution in each context.
pub fn human_distributions(norms: &[ProvoContext]) -> Result<Vec<WordDistribution>, MetricsError> {
    norms
        .iter()
        .map(|c| {
            WordDistribution::from_counts(c.human.iter().map(|(w, n)| (w.as_str(), *n as f64)))
        })
        .collect()
}

/// The generator of oracle resample `r`: one per resample, drawn from over the contexts in
/// order, so any analysis using it splits the same people as Table 1.
pub fn oracle_rng(seed: u64, r: usize) -> SplitMix64 {
    SplitMix64::new(seed.wrapping_add((r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
}

/// Computes the table on any dataset: a row for the humans, the oracle, then each system.
pub fn compute_on(
    data: &Dataset,
    options: &Table1Options,
) -> Result<(Vec<Row>, Vec<PerContext>), Table1Error> {
    let norms = &data.norms;
    let seed = options.seed;
    let full = human_distributions(norms)?;
    let resamples = options.resamples.max(1);
    let splits: Vec<Vec<_>> = (0..resamples)
        .map(|r| {
            let mut rng = oracle_rng(seed, r);
            norms
                .iter()
                .map(|c| oracle_split(&c.human, options.oracle_size, &mut rng))
                .collect()
        })
        .collect();
    let mut per_context = Vec::new();
    let predictors = [(HUMAN, Predictor::Human), (ORACLE, Predictor::Oracle)]
        .into_iter()
        .chain(
            data.systems
                .iter()
                .map(|(name, samples)| (name.as_str(), Predictor::Model(samples))),
        );
    let rows = predictors
        .filter_map(|(name, p)| row(name, p, norms, &full, &splits, options, &mut per_context))
        .collect();
    Ok((rows, per_context))
}

/// The table as text, with the published TVD beside ours.
pub fn format_table(rows: &[Row]) -> String {
    let f = |x: Option<f64>| x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "—".into());
    let mut out = format!(
        "{:<15} {:>5} {:>9} {:>9} {:>13} {:>9} {:>13} {:>13} {:>9} {:>7} {:>7} {:>9}\n",
        "system",
        "n",
        "ECE orig",
        "ECE maj",
        "ECE oracle",
        "TVD hum",
        "95% CI",
        "TVD oracle",
        "published",
        "W1",
        "top-1",
        "entropy"
    );
    for r in rows {
        let published = PUBLISHED_TVD
            .iter()
            .find(|(n, _)| *n == r.system)
            .map(|(_, v)| format!("{v:.2}"))
            .unwrap_or_else(|| "—".into());
        out += &format!(
            "{:<15} {:>5} {:>9} {:>9} {:>13} {:>9} {:>13} {:>13} {:>9} {:>7} {:>7.3} {:>9.3}\n",
            r.system,
            r.contexts,
            f(r.ece_original),
            f(r.ece_human_majority),
            r.ece_oracle_majority
                .map(|m| format!("{:.3}±{:.3}", m.mean, m.sd))
                .unwrap_or_else(|| "—".into()),
            f(r.tvd_human),
            r.tvd_human_ci
                .map(|ci| format!("{ci:.3}"))
                .unwrap_or_else(|| "—".into()),
            r.tvd_oracle
                .map(|m| format!("{:.3}±{:.3}", m.mean, m.sd))
                .unwrap_or_else(|| "—".into()),
            published,
            f(r.w1_to_oracle),
            r.top1_accuracy,
            r.mean_entropy,
        );
    }
    out
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
            f(r.ece_oracle_majority.map(|e| e.mean)),
            f(r.tvd_human),
            f(r.tvd_human_ci.map(|c| c.low)),
            f(r.tvd_human_ci.map(|c| c.high)),
            f(published),
            f(r.tvd_oracle.map(|t| t.mean)),
            f(r.w1_to_oracle),
            format!("{:.6}", r.top1_accuracy),
            format!("{:.6}", r.mean_entropy),
        ]
    });
    write_delimited(
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
        Delimiter::Comma,
    )
}
