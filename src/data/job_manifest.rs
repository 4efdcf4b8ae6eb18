//! A batch job's manifest (`manifest.json`: which command, what went in — the inputs' and each
//! model's weights' SHA-256, the options and seeds, clozelab's version — which part of the job
//! it is, and the SHA-256 of the table beside it) and the merge of a sharded job's parts into
//! what one process writes, byte for byte: one process is the job's part 1/1, and a merge
//! checks that the parts are one job's, each part once and whole, before it joins their tables
//! in order. The tables are line-based (CSV with a header, or JSON Lines), one item's lines
//! together, items in the inputs' order, so joining them is concatenation.

use std::fmt::Write as _;
use std::ops::Range;

use sha2::{Digest, Sha256};

use super::shard::Shard;

/// What the inputs were.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CorpusSource {
    /// The file's or folder's name, as given.
    pub name: String,
    /// SHA-256 of the file, or of a folder's `.txt` files (name, NUL, contents, NUL, by name).
    pub sha256: String,
    /// How many items the job is cut into parts of (texts, contexts, seeds).
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

/// What makes parts one job's: the same command, inputs, models, options and version.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobDescription {
    /// The command that wrote the table (`predictors`, `samples`, `norming-sim`).
    pub command: String,
    /// The table's file name beside the manifest.
    pub table: String,
    /// Lines of the table before its rows: 1 for CSV's header, 0 for JSON Lines.
    pub header_lines: usize,
    pub clozelab_version: String,
    pub corpus: CorpusSource,
    pub models: Vec<ModelSource>,
    /// The command's options, as it states them.
    pub options: serde_json::Value,
}

/// A part's (or a whole job's) manifest.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobManifest {
    /// The job this is (a part) of.
    #[serde(flatten)]
    pub job: JobDescription,
    /// Which part: 1/1 for one process's run and for a merge.
    pub shard: Shard,
    /// The items (indices, in the inputs' order) this part holds.
    pub items: Range<usize>,
    /// The table's rows, header not counted, and its SHA-256.
    pub rows: usize,
    pub table_sha256: String,
}

impl JobManifest {
    /// The manifest of `table`, the part `shard` holding `items` of the job described.
    pub fn describe(job: JobDescription, shard: Shard, items: Range<usize>, table: &str) -> Self {
        JobManifest {
            rows: table.lines().count().saturating_sub(job.header_lines),
            table_sha256: sha256_hex(table.as_bytes()),
            job,
            shard,
            items,
        }
    }

    /// Pretty JSON with a final newline: the file's bytes.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self).expect("plain fields");
        json.push('\n');
        json
    }

    /// Reads a manifest's text; `part` names it in the error.
    pub fn from_json(part: &str, text: &str) -> Result<Self, MergeError> {
        let manifest: JobManifest =
            serde_json::from_str(text).map_err(|e| MergeError::Manifest {
                part: part.to_string(),
                reason: e.to_string(),
            })?;
        let Shard { index, count } = manifest.shard;
        if index == 0 || index > count {
            return Err(MergeError::Manifest {
                part: part.to_string(),
                reason: format!("its shard {index}/{count} is no part K/N with 1 ≤ K ≤ N"),
            });
        }
        if manifest.items.start > manifest.items.end
            || manifest.items.end > manifest.job.corpus.items
        {
            return Err(MergeError::Manifest {
                part: part.to_string(),
                reason: format!(
                    "its items {:?} are not within the inputs' {}",
                    manifest.items, manifest.job.corpus.items
                ),
            });
        }
        if manifest.job.table.is_empty()
            || manifest.job.table.contains(['/', '\\'])
            || manifest.job.table.starts_with('.')
        {
            return Err(MergeError::Manifest {
                part: part.to_string(),
                reason: format!(
                    "its table {:?} is not a file name beside it",
                    manifest.job.table
                ),
            });
        }
        Ok(manifest)
    }

    /// Whether `table` is the one this manifest vouches for (its rows and SHA-256); `part`
    /// names it in the error.
    pub fn check_table(&self, part: &str, table: &str) -> Result<(), MergeError> {
        let rows = table.lines().count().saturating_sub(self.job.header_lines);
        let found = sha256_hex(table.as_bytes());
        if found != self.table_sha256 || rows != self.rows {
            return Err(MergeError::Table {
                part: part.to_string(),
                rows,
                found,
                expected_rows: self.rows,
                expected: self.table_sha256.clone(),
            });
        }
        Ok(())
    }
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
pub fn merge_parts(parts: &[PartFiles]) -> Result<(String, JobManifest), MergeError> {
    let mut read = Vec::with_capacity(parts.len());
    for part in parts {
        let manifest = JobManifest::from_json(&part.name, &part.manifest)?;
        manifest.check_table(&part.name, &part.table)?;
        read.push((part, manifest));
    }
    let Some((first, first_manifest)) = read.first() else {
        return Err(MergeError::NoParts);
    };
    let job = first_manifest.job.clone();
    let count = first_manifest.shard.count;
    for (part, manifest) in &read[1..] {
        let other = &manifest.job;
        let what = if other.command != job.command || other.table != job.table {
            Some("commands")
        } else if other.corpus != job.corpus {
            Some("inputs")
        } else if other.models != job.models {
            Some("models")
        } else if other.options != job.options {
            Some("options (samples, seeds, backend, precision, …)")
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
        let header: String = lines.by_ref().take(job.header_lines).collect();
        if index == 0 {
            table.push_str(&header);
        }
        lines.for_each(|line| table.push_str(line));
    }
    let items = job.corpus.items;
    let merged = JobManifest::describe(job, Shard::WHOLE, 0..items, &table);
    Ok((table, merged))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(table: &str) -> JobManifest {
        let job = JobDescription {
            command: "predictors".into(),
            table: "predictors.csv".into(),
            header_lines: 1,
            clozelab_version: "0".into(),
            corpus: CorpusSource {
                name: "c.tsv".into(),
                sha256: sha256_hex(b"c"),
                items: 4,
            },
            models: Vec::new(),
            options: serde_json::json!({"seed": 1}),
        };
        JobManifest::describe(job, Shard { index: 2, count: 2 }, 2..4, table)
    }

    #[test]
    fn a_manifest_that_cannot_be_a_part_is_refused_before_any_file_is_read() {
        let good = manifest("h\nrow\n");
        let read = JobManifest::from_json("p", &good.to_json()).unwrap();
        assert_eq!(read, good);
        assert!(read.check_table("p", "h\nrow\n").is_ok());
        assert!(matches!(
            read.check_table("p", "h\nrow\nmore\n"),
            Err(MergeError::Table { rows: 2, .. })
        ));
        let refused = |edit: &dyn Fn(&mut serde_json::Value), says: &str| {
            let mut json: serde_json::Value = serde_json::from_str(&good.to_json()).unwrap();
            edit(&mut json);
            let err = JobManifest::from_json("p", &json.to_string()).unwrap_err();
            assert!(err.to_string().contains(says), "{says}: {err}");
        };
        refused(&|j| j["shard"]["index"] = 0.into(), "no part K/N");
        refused(&|j| j["shard"]["index"] = 3.into(), "no part K/N");
        refused(&|j| j["items"]["end"] = 5.into(), "not within");
        refused(
            &|j| j["table"] = "../../etc/passwd".into(),
            "not a file name",
        );
        refused(&|j| j["table"] = ".hidden".into(), "not a file name");
        refused(&|j| j["rows"] = "many".into(), "cannot be read");
    }
}
