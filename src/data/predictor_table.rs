//! The predictors table (`predictors.csv`: one row per word, item and model, item by item in
//! the corpus's order) and its manifest (`manifest.json`: what went in — the corpus's and each
//! model's weights' SHA-256, the options and seeds, clozelab's version — and which part of the
//! job it is), and the merge of a sharded job's parts into what one process writes, byte for
//! byte: one process is the job's part 1/1, and a merge checks that the parts are one job's,
//! each part once and whole, before it joins their tables in order.

use std::fmt::Write as _;
use std::ops::Range;

use sha2::{Digest, Sha256};

use super::delimited::{Delimiter, write_delimited};
use super::shard::Shard;

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

/// What the corpus was.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CorpusSource {
    /// The file's or folder's name, as given.
    pub name: String,
    /// SHA-256 of the file, or of a folder's `.txt` files (name, NUL, contents, NUL, by name).
    pub sha256: String,
    pub items: usize,
}

/// What one model was.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelSource {
    /// Its name in the table's `model` column.
    pub name: String,
    pub revision: String,
    /// SHA-256 of its weights file (model.safetensors or the GGUF).
    pub weights_sha256: String,
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

/// A part's (or a whole job's) manifest.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PredictorManifest {
    pub clozelab_version: String,
    pub corpus: CorpusSource,
    pub models: Vec<ModelSource>,
    pub options: PredictorOptions,
    /// Which part: 1/1 for one process's run and for a merge.
    pub shard: Shard,
    /// The corpus items (indices, in its order) this part holds.
    pub items: Range<usize>,
    /// The table's rows, header not counted, and its SHA-256.
    pub rows: usize,
    pub table_sha256: String,
}

impl PredictorManifest {
    /// The manifest of `table`, the part `shard` holding `items` of the job described.
    pub fn describe(job: JobDescription, shard: Shard, items: Range<usize>, table: &str) -> Self {
        PredictorManifest {
            clozelab_version: job.clozelab_version,
            corpus: job.corpus,
            models: job.models,
            options: job.options,
            shard,
            items,
            rows: table.lines().count().saturating_sub(1),
            table_sha256: sha256_hex(table.as_bytes()),
        }
    }

    /// Pretty JSON with a final newline: the file's bytes.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self).expect("plain fields");
        json.push('\n');
        json
    }

    fn job(&self) -> JobDescription {
        JobDescription {
            clozelab_version: self.clozelab_version.clone(),
            corpus: self.corpus.clone(),
            models: self.models.clone(),
            options: self.options.clone(),
        }
    }
}

/// What makes parts one job's: the same inputs, models, options and version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobDescription {
    pub clozelab_version: String,
    pub corpus: CorpusSource,
    pub models: Vec<ModelSource>,
    pub options: PredictorOptions,
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
}

/// Why parts cannot be merged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("no parts to merge")]
    NoParts,
    #[error("{part}: its manifest cannot be read: {reason}")]
    Manifest { part: String, reason: String },
    #[error(
        "{part}: its table is not the one its manifest describes ({rows} rows, SHA-256 {found}; the manifest says {expected_rows} rows, {expected}): truncated or changed since; run that shard again"
    )]
    Table {
        part: String,
        rows: usize,
        found: String,
        expected_rows: usize,
        expected: String,
    },
    #[error(
        "{part} is not of the same job as {first}: its {what} differ; merge parts of one run only"
    )]
    OtherJob {
        part: String,
        first: String,
        what: &'static str,
    },
    #[error("shard {shard} is given twice: {first} and {second}")]
    Doubled {
        shard: Shard,
        first: String,
        second: String,
    },
    #[error("shard {index}/{count} is missing; run it (--shard {index}/{count}) and merge again")]
    Missing { index: usize, count: usize },
    #[error("{part} holds items {found:?}, not the items {expected:?} its shard takes")]
    Items {
        part: String,
        found: Range<usize>,
        expected: Range<usize>,
    },
}

/// One part as read from its folder: its name (for messages), its manifest's text and its
/// table's text.
pub struct PartFiles {
    pub name: String,
    pub manifest: String,
    pub table: String,
}

/// The merged table and manifest (what one process would have written), or why not.
pub fn merge_parts(parts: &[PartFiles]) -> Result<(String, PredictorManifest), MergeError> {
    let mut read = Vec::with_capacity(parts.len());
    for part in parts {
        let manifest: PredictorManifest =
            serde_json::from_str(&part.manifest).map_err(|e| MergeError::Manifest {
                part: part.name.clone(),
                reason: e.to_string(),
            })?;
        let rows = part.table.lines().count().saturating_sub(1);
        let found = sha256_hex(part.table.as_bytes());
        if found != manifest.table_sha256 || rows != manifest.rows {
            return Err(MergeError::Table {
                part: part.name.clone(),
                rows,
                found,
                expected_rows: manifest.rows,
                expected: manifest.table_sha256,
            });
        }
        read.push((part, manifest));
    }
    let Some((first, first_manifest)) = read.first() else {
        return Err(MergeError::NoParts);
    };
    let job = first_manifest.job();
    let count = first_manifest.shard.count;
    for (part, manifest) in &read[1..] {
        let other = manifest.job();
        let what = if other.corpus != job.corpus {
            Some("corpus")
        } else if other.models != job.models {
            Some("models")
        } else if other.options != job.options {
            Some("options (samples, seed, segmentations, backend, precision)")
        } else if other.clozelab_version != job.clozelab_version {
            Some("clozelab versions")
        } else if manifest.shard.count != count {
            Some("shard counts")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(MergeError::OtherJob {
                part: part.name.clone(),
                first: first.name.clone(),
                what,
            });
        }
    }
    let mut by_index: Vec<Option<usize>> = vec![None; count];
    for (i, (part, manifest)) in read.iter().enumerate() {
        let slot = &mut by_index[manifest.shard.index - 1];
        if let Some(j) = *slot {
            return Err(MergeError::Doubled {
                shard: manifest.shard,
                first: read[j].0.name.clone(),
                second: part.name.clone(),
            });
        }
        *slot = Some(i);
    }
    let mut table = String::new();
    let mut next = 0;
    for (index, slot) in by_index.iter().enumerate() {
        let Some(i) = *slot else {
            return Err(MergeError::Missing {
                index: index + 1,
                count,
            });
        };
        let (part, manifest) = &read[i];
        let expected_end = if index + 1 == count {
            job.corpus.items
        } else {
            manifest.items.end
        };
        if manifest.items.start != next || manifest.items.end != expected_end {
            return Err(MergeError::Items {
                part: part.name.clone(),
                found: manifest.items.clone(),
                expected: next..expected_end,
            });
        }
        next = manifest.items.end;
        let mut lines = part.table.split_inclusive('\n');
        let header = lines.next().unwrap_or_default();
        if table.is_empty() {
            table.push_str(header);
        }
        lines.for_each(|line| table.push_str(line));
    }
    let items = job.corpus.items;
    let merged = PredictorManifest::describe(job, Shard::WHOLE, 0..items, &table);
    Ok((table, merged))
}
