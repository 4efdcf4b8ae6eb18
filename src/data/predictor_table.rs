//! The predictors table (`predictors.csv`: one row per word, item and model, item by item in
//! the corpus's order) and the options a predictors job's parts share; the manifest beside it
//! and the merge of a job's parts are [`super::job_manifest`]'s.

use super::delimited::{Delimiter, write_delimited};

/// The table's columns, in order.
pub const PREDICTOR_COLUMNS: [&str; 13] = [
    "item",
    "word_index",
    "word",
    "model",
    "revision",
    "surprisal_bits",
    "surprisal_all_segmentations_bits",
    "entropy_bits",
    "entropy_standard_error_bits",
    "n_tokens",
    "token_ids",
    "context_words",
    "seed",
];

/// One word's predictors under one model.
#[derive(Clone, Debug, PartialEq)]
pub struct PredictorRow {
    pub item: String,
    /// From 0, in the item's whitespace-delimited words.
    pub word_index: usize,
    pub word: String,
    pub model: String,
    pub revision: String,
    pub surprisal_bits: f64,
    pub surprisal_all_segmentations_bits: Option<f64>,
    pub entropy_bits: Option<f64>,
    pub entropy_standard_error_bits: Option<f64>,
    /// The word's own tokens (canonical encoding).
    pub token_ids: Vec<u32>,
    /// How many words before it the model read (fewer than `word_index` only in a long text).
    pub context_words: usize,
    /// The sampler's seed for the item's first word (word j used seed + j); empty without
    /// entropy.
    pub seed: Option<u64>,
}

impl PredictorRow {
    fn cells(&self) -> Vec<String> {
        // Rust's shortest representation that reads back to the same f64; an empty cell is R's NA.
        let number = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
        let ids = self
            .token_ids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        vec![
            self.item.clone(),
            self.word_index.to_string(),
            self.word.clone(),
            self.model.clone(),
            self.revision.clone(),
            number(Some(self.surprisal_bits)),
            number(self.surprisal_all_segmentations_bits),
            number(self.entropy_bits),
            number(self.entropy_standard_error_bits),
            self.token_ids.len().to_string(),
            ids,
            self.context_words.to_string(),
            self.seed.map_or(String::new(), |s| s.to_string()),
        ]
    }
}

/// The table as CSV: the header, then the rows as given.
pub fn predictor_table_csv(rows: &[PredictorRow]) -> String {
    write_delimited(
        &PREDICTOR_COLUMNS,
        rows.iter().map(PredictorRow::cells),
        Delimiter::Comma,
    )
}

/// The options every part of a job must share.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PredictorOptions {
    /// Continuations sampled per word for its entropy (0: none).
    pub samples: usize,
    /// The job's seed; an item's is derived from it and the item's id.
    pub seed: u64,
    /// Whether each word's every-segmentation surprisal was computed.
    pub all_segmentations: bool,
    pub backend: String,
    pub precision: String,
}
