//! Production probes with a loaded model, for the CLI (`clozelab probes`) and the Analysis
//! page's worker alike: the model's productions under each decoding strategy, each production's
//! words, tags and embedding, and every probe per context ([`crate::analysis::variability`]).

use std::collections::{BTreeSet, HashMap};

use crate::analysis::figures::Figure;
use crate::analysis::figures::variability::summary_figures;
use crate::analysis::variability::{
    ContextProbe, Production, StrategySummary, probe_context, summarise,
};
use crate::data::provo::ProvoContext;
use crate::estimators::decoding::{DecodingStrategy, SamplingError};
use crate::estimators::progress::{Progress, Unmonitored};
use crate::estimators::sampler::{
    SamplerConfig, SamplerError, contexts_to_join, sample_words, sample_words_together,
};
use crate::runtime::distributions::InferenceError;
use crate::runtime::engine::Engine;
use crate::text::pos::Tagger;
use crate::text::words::normalize;

/// The strategies probed when none is named: ancestral sampling and one common setting of each
/// other family.
pub const DEFAULT_STRATEGIES: [&str; 5] = [
    "ancestral",
    "temperature=0.7",
    "top-k=40",
    "top-p=0.9",
    "typical=0.95",
];

#[derive(Debug, thiserror::Error)]
pub enum ProbeRunError {
    #[error(transparent)]
    Sampling(#[from] SamplingError),
    #[error(transparent)]
    Sampler(#[from] SamplerError),
    #[error(transparent)]
    Inference(#[from] InferenceError),
    #[error("line {line}: {why}")]
    References { line: usize, why: String },
    #[error("no context to probe")]
    NoContexts,
    #[error("at least 2 samples per context are needed, got {0}")]
    TooFewSamples(usize),
}

/// What the Analysis page asks the worker to probe.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProbeRequest {
    /// Each strategy's text (`top-p=0.9`) names it in the report.
    pub strategies: Vec<DecodingStrategy>,
    pub contexts: usize,
    pub samples: usize,
    pub seed: u64,
    /// Where the page serves the tagger's lexicon.
    pub lexicon_url: String,
    /// Multi-reference JSON Lines; `None`: the last analysed norms.
    pub references: Option<String>,
}

/// One context and what people produced after it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProbeItem {
    pub id: String,
    pub context: String,
    pub humans: Vec<String>,
    /// Words per model production: 1 for next-word norms, the references' median otherwise.
    pub words_per_production: usize,
}

/// `n` contexts spread evenly over the norms, among those with at least 4 people (the control
/// group needs two halves of two); each response counted as often as people gave it.
pub fn provo_items(norms: &[ProvoContext], n: usize) -> Vec<ProbeItem> {
    let usable: Vec<&ProvoContext> = norms
        .iter()
        .filter(|c| c.human.values().sum::<u32>() >= 4)
        .collect();
    let step = (usable.len() / n.max(1)).max(1);
    usable
        .into_iter()
        .step_by(step)
        .take(n)
        .map(|c| ProbeItem {
            id: c.key().to_string(),
            context: c.context.clone(),
            humans: c
                .human
                .iter()
                .flat_map(|(w, k)| std::iter::repeat_n(w.clone(), *k as usize))
                .collect(),
            words_per_production: 1,
        })
        .collect()
}

#[derive(serde::Deserialize)]
struct ReferenceLine {
    context: String,
    references: Vec<String>,
}

/// Multi-reference data: JSON Lines `{"context": "…", "references": ["…", …]}` (blank lines
/// skipped), the first `n` contexts. A bad line is an error naming it.
pub fn reference_items(text: &str, n: usize) -> Result<Vec<ProbeItem>, ProbeRunError> {
    let mut items = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let parsed: ReferenceLine =
            serde_json::from_str(line).map_err(|e| ProbeRunError::References {
                line: i + 1,
                why: format!("expected {{\"context\": \"…\", \"references\": [\"…\", …]}}: {e}"),
            })?;
        let humans: Vec<String> = parsed
            .references
            .into_iter()
            .filter(|r| !r.trim().is_empty())
            .collect();
        if humans.len() < 2 {
            return Err(ProbeRunError::References {
                line: i + 1,
                why: "a context needs at least 2 non-empty references".into(),
            });
        }
        let mut lengths: Vec<usize> = humans
            .iter()
            .map(|t| t.split_whitespace().count())
            .collect();
        lengths.sort_unstable();
        items.push(ProbeItem {
            id: format!("line {}", i + 1),
            context: parsed.context,
            words_per_production: lengths[lengths.len() / 2].clamp(1, 40),
            humans,
        });
        if items.len() == n {
            break;
        }
    }
    if items.is_empty() {
        return Err(ProbeRunError::NoContexts);
    }
    Ok(items)
}

/// One row of the per-context table.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProbeRow {
    pub strategy: String,
    pub context: String,
    pub result: ContextProbe,
}

/// Everything a probe run shows: the per-strategy summary, the per-context rows and the
/// figures (Figure 5-like summaries, per-context W₁ histograms).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProbeReport {
    pub summary: Vec<StrategySummary>,
    pub rows: Vec<ProbeRow>,
    pub figures: Vec<Figure>,
}

impl ProbeReport {
    /// The per-context rows as CSV (the CLI's `probes_per_context.csv`, the page's download).
    pub fn per_context_csv(&self) -> String {
        let f = |v: f64| format!("{v:.6}");
        let rows = self.rows.iter().map(|r| {
            let p = &r.result;
            let control = |g: fn(&crate::analysis::variability::ProbeSummary) -> f64| {
                p.control.as_ref().map(|c| f(g(c))).unwrap_or_default()
            };
            vec![
                r.strategy.clone(),
                r.context.clone(),
                p.probe.label(),
                f(p.model.mean_human),
                f(p.model.mean_model),
                f(p.model.mean_difference),
                f(p.model.w1_cross_human),
                control(|c| c.mean_difference),
                control(|c| c.w1_cross_human),
            ]
        });
        crate::data::write_delimited(
            &[
                "strategy",
                "context",
                "probe",
                "mean_human",
                "mean_model",
                "mean_difference",
                "w1",
                "control_mean_difference",
                "control_w1",
            ],
            rows,
            crate::data::Delimiter::Comma,
        )
    }
}

/// The model's productions for one item under `strategy`: `samples` first words, or, for
/// multi-word items, continuations of `words_per_production` words drawn one word at a time.
async fn sample_productions(
    engine: &Engine,
    item: &ProbeItem,
    strategy: &DecodingStrategy,
    samples: usize,
    seed: u64,
) -> Result<Vec<String>, ProbeRunError> {
    let mut progress = Progress {
        contexts_done: 0,
        contexts_total: 1,
        samples_done: 0,
        elapsed_s: 0.0,
    };
    if item.words_per_production <= 1 {
        let config = SamplerConfig::new(samples, seed)?.with_strategy(strategy.clone());
        let drawn = sample_words(
            &engine.model,
            &engine.tokenizer,
            &item.context,
            &config,
            &mut Unmonitored,
            &mut progress,
        )
        .await?;
        return Ok(drawn
            .words
            .iter()
            .flat_map(|(w, k)| std::iter::repeat_n(w.clone(), *k))
            .collect());
    }
    // Multi-word productions grow one word at a time, every production's next word drawn in
    // one pass over all of them (each its own context and seed).
    let one_each = SamplerConfig::new(1, seed)?.with_strategy(strategy.clone());
    let mut productions: Vec<Vec<String>> = vec![Vec::new(); samples];
    let mut open: Vec<usize> = (0..samples).collect();
    for step in 0..item.words_per_production {
        if open.is_empty() {
            break;
        }
        let contexts: Vec<String> = open
            .iter()
            .map(|&s| {
                format!("{} {}", item.context, productions[s].join(" "))
                    .trim_end()
                    .to_string()
            })
            .collect();
        let seeded: Vec<(&str, u64)> = open
            .iter()
            .zip(&contexts)
            .map(|(&s, context)| (context.as_str(), seed ^ ((s as u64) << 20) ^ step as u64))
            .collect();
        let mut drawn = Vec::with_capacity(seeded.len());
        for group in seeded.chunks(contexts_to_join(1)) {
            drawn.extend(
                sample_words_together(
                    &engine.model,
                    &engine.tokenizer,
                    group,
                    &one_each,
                    &mut Unmonitored,
                    &mut progress,
                )
                .await?,
            );
        }
        let mut still_open = Vec::with_capacity(open.len());
        for (&s, words) in open.iter().zip(drawn) {
            // A production whose next word failed ends where it is.
            if let Some(word) = words.surface.keys().next() {
                productions[s].push(word.clone());
                still_open.push(s);
            }
        }
        open = still_open;
    }
    Ok(productions
        .into_iter()
        .map(|words| words.join(" "))
        .collect())
}

/// Each text as a production after `context`: its normalised words, its tags in the context and
/// its embedding (the distinct texts embedded in one read back).
async fn productions(
    engine: &Engine,
    tagger: &Tagger,
    context: &str,
    texts: &[String],
) -> Result<Vec<Production>, ProbeRunError> {
    let distinct: Vec<&str> = texts
        .iter()
        .map(String::as_str)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let vectors = engine.word_embeddings(&distinct).await?;
    let table: HashMap<&str, Vec<f64>> = distinct
        .iter()
        .zip(vectors)
        .filter_map(|(t, v)| Some((*t, v?.into_iter().map(f64::from).collect())))
        .collect();
    Ok(texts
        .iter()
        .map(|text| Production {
            words: text
                .split_whitespace()
                .map(normalize)
                .filter(|w| !w.is_empty())
                .collect(),
            tags: tagger.tags_after(context, text),
            embedding: table.get(text.as_str()).cloned(),
        })
        .collect())
}

/// Runs every strategy on every item. `on_item(done, total)` is called after each (strategy,
/// item); returning `false` stops the run (`Ok(None)`).
pub async fn run_probes(
    engine: &Engine,
    tagger: &Tagger,
    items: &[ProbeItem],
    strategies: &[DecodingStrategy],
    samples: usize,
    seed: u64,
    mut on_item: impl FnMut(usize, usize) -> bool,
) -> Result<Option<ProbeReport>, ProbeRunError> {
    if items.is_empty() {
        return Err(ProbeRunError::NoContexts);
    }
    if samples < 2 {
        return Err(ProbeRunError::TooFewSamples(samples));
    }
    let total = items.len() * strategies.len();
    let mut results: Vec<(String, Vec<ContextProbe>)> = Vec::new();
    let mut rows = Vec::new();
    let mut people: Vec<Option<Vec<Production>>> = vec![None; items.len()];
    for strategy in strategies {
        let name = strategy.to_string();
        for (i, item) in items.iter().enumerate() {
            let drawn =
                sample_productions(engine, item, strategy, samples, seed + i as u64).await?;
            // People's productions are the same under every strategy: built once per item.
            if people[i].is_none() {
                people[i] = Some(productions(engine, tagger, &item.context, &item.humans).await?);
            }
            let humans = people[i].as_deref().unwrap_or_default();
            let model = productions(engine, tagger, &item.context, &drawn).await?;
            let probes = probe_context(humans, &model, seed ^ i as u64);
            rows.extend(probes.iter().map(|p| ProbeRow {
                strategy: name.clone(),
                context: item.id.clone(),
                result: p.clone(),
            }));
            results.push((name.clone(), probes));
            if !on_item(results.len(), total) {
                return Ok(None);
            }
        }
    }
    let summary = summarise(&results);
    let figures = summary_figures(&summary, &results);
    Ok(Some(ProbeReport {
        summary,
        rows,
        figures,
    }))
}
