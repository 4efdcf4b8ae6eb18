//! The Provo predictability norms in the column layout released on OSF (CSV/TSV), one row per
//! context and response, as typed.

use std::collections::BTreeMap;

use super::delimited::{cell, number, read_table};
use super::{DataError, SkippedRow};
use crate::data::provo::ContextKey;

/// The columns of the Provo norms as released on OSF (and of the game's Provo-format export).
pub const PROVO_COLUMNS: [&str; 6] = [
    "Text_ID",
    "Text",
    "Word_Number",
    "Word",
    "Response",
    "Response_Count",
];

/// Cloze norms: per context, the word that followed and the responses given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClozeNorms {
    /// Passage text by passage id.
    pub passages: BTreeMap<u32, String>,
    /// (passage id, word number) → context.
    pub contexts: BTreeMap<ContextKey, NormContext>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NormContext {
    /// The word that actually followed, as written.
    pub word: String,
    /// Response as given → count.
    pub responses: BTreeMap<String, u32>,
}

impl ClozeNorms {
    /// The context shown before word `word_num` of a passage: its first `word_num − 1` words.
    pub fn context_text(&self, text_id: u32, word_num: u32) -> Option<String> {
        let text = self.passages.get(&text_id)?;
        Some(
            text.split_whitespace()
                .take(word_num.saturating_sub(1) as usize)
                .collect::<Vec<_>>()
                .join(" "),
        )
    }
}

/// Imports the Provo predictability norms as released on OSF (columns Text_ID, Text,
/// Word_Number, Word, Response, Response_Count, found by name, any order; others ignored).
/// Rows with an empty response or a zero count are skipped and reported.
pub fn import_provo_norms(
    file: &str,
    text: &str,
) -> Result<(ClozeNorms, Vec<SkippedRow>), DataError> {
    let (cols, rows) = read_table(file, text)?;
    let (c_id, c_text, c_num, c_word, c_resp, c_count) = (
        cols.find(file, "Text_ID")?,
        cols.find(file, "Text")?,
        cols.find(file, "Word_Number")?,
        cols.find(file, "Word")?,
        cols.find(file, "Response")?,
        cols.find(file, "Response_Count")?,
    );
    let mut norms = ClozeNorms::default();
    let mut skipped = Vec::new();
    for record in &rows {
        let text_id: u32 = number(file, record, c_id, "Text_ID")?;
        let word_num: u32 = number(file, record, c_num, "Word_Number")?;
        let passage = cell(file, record, c_text)?;
        let word = cell(file, record, c_word)?;
        let response = cell(file, record, c_resp)?;
        let raw_count = cell(file, record, c_count)?;
        let count: u32 = if raw_count.is_empty() || raw_count.eq_ignore_ascii_case("NA") {
            0
        } else {
            number(file, record, c_count, "Response_Count")?
        };
        norms
            .passages
            .entry(text_id)
            .or_insert_with(|| passage.to_string());
        let ctx = norms
            .contexts
            .entry(ContextKey::new(text_id, word_num))
            .or_default();
        if ctx.word.is_empty() {
            ctx.word = word.to_string();
        }
        if response.is_empty() || response.eq_ignore_ascii_case("NA") {
            skipped.push(SkippedRow {
                line: record.0,
                reason: "empty response".into(),
            });
        } else if count == 0 {
            skipped.push(SkippedRow {
                line: record.0,
                reason: format!("response {response:?} has count 0"),
            });
        } else {
            *ctx.responses.entry(response.to_string()).or_insert(0) += count;
        }
    }
    // A context whose every row was skipped has no distribution; its rows are in `skipped`.
    norms.contexts.retain(|_, ctx| !ctx.responses.is_empty());
    Ok((norms, skipped))
}
