//! Reproduces Table 1 of Ilia & Aziz (2024) from ../shared/provo: calibration and distance of
//! several systems' next-word distributions against the Provo human norms.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::analysis::metrics::{
    MetricsError, WordDistribution, ece, interpretation_curve, mean, mean_with_bootstrap_ci, tvd,
    wasserstein1,
};
use crate::data::provo::{
    ContextKey, ProvoContext, ProvoError, Samples, read_continuations, read_counted_samples,
    read_norms, read_word_lists,
};
use crate::rng::SplitMix64;
use crate::text::words::normalize;

/// Confidence bins for ECE, as in the paper (Guo et al. 2017).
pub const ECE_BINS: usize = 10;

/// Splits the flattened responses into two disjoint, equal halves, uniformly at random: a
/// seeded Fisher–Yates shuffle, one response dropped when the count is odd. `None` when fewer
/// than two responses.
pub fn oracle_halves(
    human: &BTreeMap<String, u32>,
    rng: &mut SplitMix64,
) -> Option<(WordDistribution, WordDistribution)> {
    let mut flat: Vec<&str> = human
        .iter()
        .flat_map(|(w, c)| std::iter::repeat_n(w.as_str(), *c as usize))
        .collect();
    for i in (1..flat.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        flat.swap(i, j);
    }
    if flat.len() % 2 == 1 {
        flat.pop();
    }
    let half = flat.len() / 2;
    let first = WordDistribution::from_samples(flat[..half].iter().copied()).ok()?;
    let second = WordDistribution::from_samples(flat[half..].iter().copied()).ok()?;
    Some((first, second))
}

/// One row of the table (means over the system's contexts; oracle-dependent figures are means
/// over resampled splits, with their standard deviation).
#[derive(Debug, Serialize)]
pub struct Row {
    pub system: String,
    pub contexts: usize,
    pub ece_original: Option<f64>,
    pub ece_human_majority: Option<f64>,
    pub ece_oracle_majority: (f64, f64),
    /// Mean TVD to the full human distribution (for the oracle: half₂ vs half₁).
    pub tvd_human: Option<f64>,
    /// Bootstrap 95% interval of that mean over contexts (1000 resamples).
    pub tvd_human_ci: Option<(f64, f64)>,
    /// Wasserstein-1 between this system's per-context TVDs (to oracle half₁) and the oracle's.
    pub w1_to_oracle: Option<f64>,
    /// Expected TVD to oracle half₁ when k% of contexts (worst first) take the oracle's TVD.
    pub interpretation_curve: Option<Vec<f64>>,
    /// Mean TVD to oracle half₁ (mean ± sd over resamples).
    pub tvd_oracle: Option<(f64, f64)>,
    pub top1_accuracy: f64,
    pub mean_entropy: f64,
    pub failed_samples: u64,
}

/// Per-context figures, for `--per-context`.
#[derive(Debug, Serialize)]
pub struct PerContext {
    pub text_id: u32,
    pub word_num: u32,
    pub system: String,
    pub tvd_human: Option<f64>,
    pub tvd_oracle: Option<f64>,
    pub entropy: f64,
    pub mode: String,
    pub mode_prob: f64,
}

fn mean_sd(values: &[f64]) -> (f64, f64) {
    let m = mean(values).unwrap_or(0.0);
    let var = if values.len() > 1 {
        values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (values.len() - 1) as f64
    } else {
        0.0
    };
    (m, var.sqrt())
}

enum Predictor<'a> {
    Human,
    Oracle,
    Model(&'a BTreeMap<ContextKey, Samples>),
}

/// Computes one row. `splits[r][i]` are the oracle halves of context i in resample r.
fn row(
    name: &str,
    predictor: Predictor,
    norms: &[ProvoContext],
    full: &[WordDistribution],
    splits: &[Vec<Option<(WordDistribution, WordDistribution)>>],
    per_context: &mut Vec<PerContext>,
) -> Option<Row> {
    let mut failed = 0;
    // The predictor's distribution in each context it covers (resample 0 for the oracle).
    let chosen: Vec<(usize, WordDistribution)> = norms
        .iter()
        .enumerate()
        .filter_map(|(i, ctx)| {
            let dist = match &predictor {
                Predictor::Human => full[i].clone(),
                Predictor::Oracle => splits[0][i].as_ref()?.1.clone(),
                Predictor::Model(samples) => {
                    let s = samples.get(&(ctx.text_id, ctx.word_num))?;
                    failed += s.failed;
                    WordDistribution::from_counts(s.words.iter().map(|(w, c)| (w.as_str(), *c)))
                        .ok()?
                }
            };
            Some((i, dist))
        })
        .collect();
    if chosen.is_empty() {
        return None;
    }
    let is_oracle = matches!(predictor, Predictor::Oracle);
    let is_human = matches!(predictor, Predictor::Human);
    let mut ece_orig = Vec::new();
    let mut ece_major = Vec::new();
    let mut top1 = Vec::new();
    let mut entropies = Vec::new();
    let mut tvd_full = Vec::new();
    let mut own_vs_half = Vec::new();
    let mut oracle_vs_half = Vec::new();
    for (i, dist) in &chosen {
        let (mode, p) = dist.mode();
        let original = normalize(&norms[*i].original);
        ece_orig.push((p, mode == original));
        ece_major.push((p, mode == full[*i].mode().0));
        top1.push(if mode == original { 1.0 } else { 0.0 });
        entropies.push(dist.entropy());
        let t_full = if is_oracle {
            splits[0][*i].as_ref().map(|(h1, h2)| tvd(h2, h1))
        } else if is_human {
            None
        } else {
            Some(tvd(dist, &full[*i]))
        };
        if let Some(t) = t_full {
            tvd_full.push(t);
        }
        let t_oracle = if is_human {
            None
        } else {
            splits[0][*i]
                .as_ref()
                .map(|(h1, h2)| tvd(if is_oracle { h2 } else { dist }, h1))
        };
        if let (Some(t), Some((h1, h2))) = (t_oracle, splits[0][*i].as_ref()) {
            own_vs_half.push(t);
            oracle_vs_half.push(tvd(h2, h1));
        }
        per_context.push(PerContext {
            text_id: norms[*i].text_id,
            word_num: norms[*i].word_num,
            system: name.to_string(),
            tvd_human: t_full,
            tvd_oracle: t_oracle,
            entropy: dist.entropy(),
            mode: mode.to_string(),
            mode_prob: p,
        });
    }
    // Oracle-dependent figures, over every resample.
    let mut ece_oracle_runs = Vec::new();
    let mut tvd_oracle_runs = Vec::new();
    for split in splits {
        let mut preds = Vec::new();
        let mut tvds = Vec::new();
        for (i, dist) in &chosen {
            let Some((h1, h2)) = &split[*i] else { continue };
            let predictor_dist = if is_oracle { h2 } else { dist };
            let (mode, p) = predictor_dist.mode();
            preds.push((p, mode == h1.mode().0));
            if !is_human {
                tvds.push(tvd(predictor_dist, h1));
            }
        }
        ece_oracle_runs.push(ece(&preds, ECE_BINS).unwrap_or(0.0));
        if let Some(m) = mean(&tvds) {
            tvd_oracle_runs.push(m);
        }
    }
    Some(Row {
        system: name.to_string(),
        contexts: chosen.len(),
        ece_original: ece(&ece_orig, ECE_BINS),
        ece_human_majority: ece(&ece_major, ECE_BINS),
        ece_oracle_majority: mean_sd(&ece_oracle_runs),
        tvd_human: mean(&tvd_full),
        tvd_human_ci: mean_with_bootstrap_ci(&tvd_full, 1000, 17).map(|(_, lo, hi)| (lo, hi)),
        w1_to_oracle: if is_human || is_oracle {
            None
        } else {
            wasserstein1(&own_vs_half, &oracle_vs_half)
        },
        interpretation_curve: if is_human || is_oracle {
            None
        } else {
            interpretation_curve(&own_vs_half, &oracle_vs_half)
        },
        tvd_oracle: (!tvd_oracle_runs.is_empty()).then(|| mean_sd(&tvd_oracle_runs)),
        top1_accuracy: mean(&top1).unwrap_or(0.0),
        mean_entropy: mean(&entropies).unwrap_or(0.0),
        failed_samples: failed,
    })
}

/// The published mean TVDs to the full human distribution (Table 1), for comparison.
pub const PUBLISHED_TVD: &[(&str, f64)] = &[
    ("Oracle", 0.42),
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
    seed: u64,
    resamples: usize,
) -> Result<(Vec<Row>, Vec<PerContext>), Table1Error> {
    let norms = read_norms(dir)?;
    let full: Vec<WordDistribution> = norms
        .iter()
        .map(|c| {
            WordDistribution::from_counts(c.human.iter().map(|(w, n)| (w.as_str(), *n as f64)))
        })
        .collect::<Result<_, _>>()?;
    let resamples = resamples.max(1);
    let splits: Vec<Vec<_>> = (0..resamples)
        .map(|r| {
            let mut rng =
                SplitMix64::new(seed.wrapping_add((r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
            norms
                .iter()
                .map(|c| oracle_halves(&c.human, &mut rng))
                .collect()
        })
        .collect();
    let gpt2 = read_counted_samples(&dir.join("samples_gpt2_ancestral_n1000.jsonl"))?;
    let gpt2_t05 = read_counted_samples(&dir.join("samples_gpt2_temp0.5_n40.jsonl"))?;
    let bloom = read_continuations(&dir.join("samples_bloom176b_raw_continuations.jsonl"))?;
    let chatgpt = read_word_lists(
        &dir.join("samples_chatgpt_words.jsonl"),
        "single_prompt_temp1",
    )?;
    let chatgpt_list = read_word_lists(&dir.join("samples_chatgpt_words.jsonl"), "list_prompt")?;
    let mut per_context = Vec::new();
    let systems = [
        ("Human", Predictor::Human),
        ("Oracle", Predictor::Oracle),
        ("GPT-2", Predictor::Model(&gpt2)),
        ("GPT-2 (T=0.5)", Predictor::Model(&gpt2_t05)),
        ("BLOOM", Predictor::Model(&bloom)),
        ("ChatGPT", Predictor::Model(&chatgpt)),
        ("ChatGPT (list)", Predictor::Model(&chatgpt_list)),
    ];
    let rows = systems
        .into_iter()
        .filter_map(|(name, p)| row(name, p, &norms, &full, &splits, &mut per_context))
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
            format!(
                "{:.3}±{:.3}",
                r.ece_oracle_majority.0, r.ece_oracle_majority.1
            ),
            f(r.tvd_human),
            r.tvd_human_ci
                .map(|(lo, hi)| format!("{lo:.3}–{hi:.3}"))
                .unwrap_or_else(|| "—".into()),
            r.tvd_oracle
                .map(|(m, s)| format!("{m:.3}±{s:.3}"))
                .unwrap_or_else(|| "—".into()),
            published,
            f(r.w1_to_oracle),
            r.top1_accuracy,
            r.mean_entropy,
        );
    }
    out
}
