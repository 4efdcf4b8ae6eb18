//! The trial table's model columns: for each system whose samples the analysis has, the
//! probability of the answer and the entropy of the next word; for each model whose surprisal
//! it has, the target word's surprisal. The first system and the first model fill the columns
//! [`super::codebook::TRIAL_COLUMNS`] names (`model`, …, `surprisal_bits`, …); every further one
//! adds the same columns numbered from 2 (`model_2`, `model_probability_2`, …,
//! `surprisal_model_2`, `surprisal_bits_2`, …), so that one row carries every model's predictors
//! of that answer, side by side, as a regression on several models needs them.

use crate::analysis::dataset::Dataset;
use crate::analysis::metrics::EntropyEstimate;
use crate::analysis::predictors::ModelPredictors;
use crate::data::provo::{ContextKey, SystemSamples};

/// A system's columns, as the first system's are named.
const SYSTEM_COLUMNS: [(&str, &str); 5] = [
    ("model", "string"),
    ("model_probability", "number"),
    ("model_samples", "integer"),
    ("model_entropy_bits", "number"),
    ("model_entropy_se_bits", "number"),
];

/// A surprisal model's columns, as the first model's are named.
const SURPRISAL_COLUMNS: [(&str, &str); 3] = [
    ("surprisal_model", "string"),
    ("surprisal_bits", "number"),
    ("surprisal_all_segmentations_bits", "number"),
];

/// The systems and surprisal models of one analysis that hold any of its contexts, in the order
/// given (a samples file of other studies' passages only adds no columns).
pub struct ModelColumns<'a> {
    systems: Vec<&'a SystemSamples>,
    predictors: Vec<&'a ModelPredictors>,
}

fn number_cell(x: Option<f64>) -> String {
    x.map(|x| format!("{x}")).unwrap_or_default()
}

/// `system`'s cells for an answer `normalized` at `key`: its name, the answer's share of its
/// samples, their count, and the next word's entropy with its standard error. Empty without
/// samples of that context.
fn system_cells(system: &SystemSamples, key: Option<ContextKey>, normalized: &str) -> [String; 5] {
    let (name, by_context) = system;
    let Some(samples) = key.and_then(|k| by_context.get(&k)) else {
        return Default::default();
    };
    let total: f64 = samples.words.values().sum();
    if total <= 0.0 {
        return Default::default();
    }
    let count = samples.words.get(normalized).copied().unwrap_or(0.0);
    let entropy = EntropyEstimate::from_counts(samples.words.values().copied()).ok();
    [
        name.clone(),
        number_cell(Some(count / total)),
        total.to_string(),
        number_cell(entropy.map(|e| e.bits)),
        number_cell(entropy.map(|e| e.standard_error_bits)),
    ]
}

/// `model`'s cells for the target word at `key`: its name and the two surprisals. Empty where it
/// has none for that context.
fn surprisal_cells(model: &ModelPredictors, key: Option<ContextKey>) -> [String; 3] {
    let (name, by_context) = model;
    let Some(target) = key.and_then(|k| by_context.get(&k)) else {
        return Default::default();
    };
    [
        name.clone(),
        number_cell(Some(target.surprisal_bits)),
        number_cell(target.surprisal_all_segmentations_bits),
    ]
}

impl<'a> ModelColumns<'a> {
    /// `data`'s systems and surprisal models that hold any of its contexts.
    pub fn of(data: &'a Dataset) -> Self {
        let keys: Vec<ContextKey> = data.norms.iter().map(|c| c.key()).collect();
        Self {
            systems: (data.systems.iter())
                .filter(|(_, s)| keys.iter().any(|k| s.contains_key(k)))
                .collect(),
            predictors: (data.predictors.iter())
                .filter(|(_, p)| keys.iter().any(|k| p.contains_key(k)))
                .collect(),
        }
    }

    /// The first system's and the first model's cells, in `TRIAL_COLUMNS`' order (empty where
    /// there is none).
    pub fn first_cells(&self, key: Option<ContextKey>, normalized: &str) -> Vec<String> {
        let system = self
            .systems
            .first()
            .map(|s| system_cells(s, key, normalized))
            .unwrap_or_default();
        let surprisal = self
            .predictors
            .first()
            .map(|m| surprisal_cells(m, key))
            .unwrap_or_default();
        system.into_iter().chain(surprisal).collect()
    }

    /// Every further system's cells, then every further model's, in [`Self::further_columns`]'
    /// order.
    pub fn further_cells(&self, key: Option<ContextKey>, normalized: &str) -> Vec<String> {
        let systems = self.systems.iter().skip(1);
        let models = self.predictors.iter().skip(1);
        systems
            .flat_map(|s| system_cells(s, key, normalized))
            .chain(models.flat_map(|m| surprisal_cells(m, key)))
            .collect()
    }

    /// The further systems' and models' columns: (name, type, description).
    pub fn further_columns(&self) -> Vec<(String, String, String)> {
        let numbered = |count: usize, columns: &'static [(&str, &str)], kind: &'static str| {
            (2..=count).flat_map(move |n| {
                columns.iter().map(move |(name, type_)| {
                    (
                        format!("{name}_{n}"),
                        type_.to_string(),
                        format!(
                            "As {name}, for the analysis' {kind} number {n} ({}_{n} names it).",
                            columns[0].0
                        ),
                    )
                })
            })
        };
        numbered(self.systems.len(), &SYSTEM_COLUMNS, "sampled system")
            .chain(numbered(
                self.predictors.len(),
                &SURPRISAL_COLUMNS,
                "surprisal model",
            ))
            .collect()
    }
}
