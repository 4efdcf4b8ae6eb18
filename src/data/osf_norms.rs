//! The Provo predictability norms in the column layout released on OSF (CSV/TSV), one row per
//! context and response, read into the Provo contexts the rest of clozelab uses.

use std::collections::BTreeMap;

use super::delimited::{cell, number, read_table};
use super::{DataError, SkippedRow};
use crate::data::provo::{ContextKey, ProvoContext};
use crate::text::words::normalize;

/// The columns of the Provo norms as released on OSF (and of the game's Provo-format export).
pub const PROVO_COLUMNS: [&str; 6] = [
    "Text_ID",
    "Text",
    "Word_Number",
    "Word",
    "Response",
    "Response_Count",
];

/// Cloze norms as the OSF release holds them: each passage's text, and per context the one
/// Provo context type the analyses and the games share ([`ProvoContext`]: the context, the word
/// that followed, people's responses normalised as words with their counts).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClozeNorms {
    /// Passage text by passage id.
    pub passages: BTreeMap<u32, String>,
    pub contexts: BTreeMap<ContextKey, ProvoContext>,
}

/// Imports the Provo predictability norms as released on OSF (columns Text_ID, Text,
/// Word_Number, Word, Response, Response_Count, found by name, any order; others ignored).
/// Responses are normalised as words ([`normalize`]: responses that normalise alike add up), and
/// each context is the passage's words before the target. Rows with an empty response, a zero
/// count or a response that leaves no word are skipped and reported.
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
            .or_insert_with(|| ProvoContext {
                text_id,
                word_num,
                context: String::new(),
                original: word.to_string(),
                human: BTreeMap::new(),
                gpt2_logprob_human: None,
                gpt2_logprob_original: None,
            });
        let normalised = normalize(response);
        let skip = if response.is_empty() || response.eq_ignore_ascii_case("NA") {
            Some("empty response".to_string())
        } else if count == 0 {
            Some(format!("response {response:?} has count 0"))
        } else if normalised.is_empty() {
            Some(format!("response {response:?} has no letter or digit"))
        } else {
            None
        };
        match skip {
            Some(reason) => skipped.push(SkippedRow {
                line: record.0,
                reason,
            }),
            None => *ctx.human.entry(normalised).or_insert(0) += count,
        }
    }
    // A context whose every row was skipped has no distribution; its rows are in `skipped`.
    norms.contexts.retain(|_, ctx| !ctx.human.is_empty());
    for (key, ctx) in &mut norms.contexts {
        let passage = norms.passages.get(&key.text_id).map_or("", String::as_str);
        ctx.context = passage
            .split_whitespace()
            .take(key.word_num.saturating_sub(1) as usize)
            .collect::<Vec<_>>()
            .join(" ");
    }
    Ok((norms, skipped))
}
