//! Exports of the next-token games: long format as CSV or JSON, and a bundle with the manifest;
//! all three read back ([`import_token_records`]), so exports can be merged and analysed later.

use serde::{Deserialize, Serialize};

use super::top1::Top1Record;
use super::two_token::TwoTokenRecord;
use crate::data::DataError;
use crate::data::rows::{read_rows, write_csv};
use crate::game::run::export::{ExportError, Manifest};

/// Records of one next-token game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "game", content = "records", rename_all = "snake_case")]
pub enum TokenRecords {
    Top1(Vec<Top1Record>),
    TwoToken(Vec<TwoTokenRecord>),
}

impl TokenRecords {
    pub fn len(&self) -> usize {
        match self {
            TokenRecords::Top1(r) => r.len(),
            TokenRecords::TwoToken(r) => r.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// (passage, position, round) of every record: what a schedule resumes from.
    pub fn slots(&self) -> Vec<(&str, u32, u32)> {
        match self {
            TokenRecords::Top1(r) => r
                .iter()
                .map(|r| (r.passage.as_str(), r.position, 0))
                .collect(),
            TokenRecords::TwoToken(r) => r
                .iter()
                .map(|r| (r.passage.as_str(), r.position, r.round))
                .collect(),
        }
    }

    /// Long format, one row per answer, with a header.
    pub fn to_csv(&self) -> Result<String, ExportError> {
        let text = match self {
            TokenRecords::Top1(r) => write_csv("export", r),
            TokenRecords::TwoToken(r) => write_csv("export", r),
        };
        text.map_err(|e| ExportError::Serialize(e.to_string()))
    }

    /// Long format as a JSON array.
    pub fn to_json(&self) -> Result<String, ExportError> {
        let text = match self {
            TokenRecords::Top1(r) => serde_json::to_string_pretty(r),
            TokenRecords::TwoToken(r) => serde_json::to_string_pretty(r),
        };
        text.map_err(|e| ExportError::Serialize(e.to_string()))
    }

    /// The bundle: manifest and records.
    pub fn to_bundle(&self, manifest: &Manifest) -> Result<String, ExportError> {
        serde_json::to_string_pretty(&TokenBundle {
            manifest: manifest.clone(),
            records: self.clone(),
        })
        .map_err(|e| ExportError::Serialize(e.to_string()))
    }
}

impl From<Top1Record> for TokenRecords {
    fn from(record: Top1Record) -> Self {
        TokenRecords::Top1(vec![record])
    }
}

impl From<TwoTokenRecord> for TokenRecords {
    fn from(record: TwoTokenRecord) -> Self {
        TokenRecords::TwoToken(vec![record])
    }
}

/// A JSON export of a next-token game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenBundle {
    pub manifest: Manifest,
    #[serde(flatten)]
    pub records: TokenRecords,
}

/// Reads a next-token export: a bundle, or the long format (CSV/TSV, JSON array, JSON Lines) of
/// either game, told apart by its columns (`button` only in the two-token game).
pub fn import_token_records(file: &str, text: &str) -> Result<TokenRecords, DataError> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Ok(bundle) = serde_json::from_str::<TokenBundle>(body) {
        return Ok(bundle.records);
    }
    let has_column = |name: &str| {
        let start = body.trim_start();
        if start.starts_with('[') || start.starts_with('{') {
            // The first record's keys (a text field could hold the word itself, not the key).
            let head: String = start.chars().take(8000).collect();
            head.contains(&format!("\"{name}\":"))
        } else {
            let header = start.lines().next().unwrap_or_default();
            let delimiter = crate::data::Delimiter::sniff(body).char();
            header
                .split(delimiter)
                .any(|c| c.trim().trim_matches('"') == name)
        }
    };
    if has_column("button") {
        read_rows::<TwoTokenRecord>(file, body)
            .map(|rows| TokenRecords::TwoToken(rows.into_iter().map(|(_, r)| r).collect()))
    } else if has_column("guess") {
        read_rows::<Top1Record>(file, body)
            .map(|rows| TokenRecords::Top1(rows.into_iter().map(|(_, r)| r).collect()))
    } else {
        Err(DataError::Invalid {
            file: file.into(),
            message: "not a next-token game export (no `guess` or `button` column)".into(),
        })
    }
}
