//! The study's own cloze norms in the Provo norms' column format (`norms.csv`), so that any
//! pipeline that reads Provo reads a study's norms: one row per context and distinct response,
//! from the answers of the runs the analyses keep (each participant's first answer to a
//! context once, practice left out), responses normalised as the analyses compare them.
//! `Text_ID` is Provo's number for a Provo text and the passage's own text id otherwise
//! ([`crate::analysis::passage_texts::own_text_id`]); `Passage` names the study's passage.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::dataset::Dataset;
use crate::analysis::passage_texts::PassageTexts;
use crate::data::provo::ContextKey;
use crate::data::{Delimiter, PROVO_COLUMNS, ResponseRecord, write_delimited};
use crate::text::words::normalize;

/// `norms.csv`'s columns after Provo's six ([`PROVO_COLUMNS`], which every reader needs): its
/// two derived ones, and the study's passage id.
pub const NORMS_EXTRA_COLUMNS: [&str; 3] =
    ["Total_Response_Count", "Response_Proportion", "Passage"];

/// `norms.csv`'s header.
pub fn norms_columns() -> Vec<&'static str> {
    PROVO_COLUMNS
        .iter()
        .chain(&NORMS_EXTRA_COLUMNS)
        .copied()
        .collect()
}

/// A context's people's answers, with what the table says of its passage.
#[derive(Default)]
struct Counted {
    text: String,
    passage: String,
    word: String,
    responses: BTreeMap<String, u32>,
}

/// `norms.csv` of `responses` (those the analyses keep), placed as `data` placed them.
pub fn norms_csv(responses: &[&ResponseRecord], data: &Dataset, texts: &PassageTexts) -> String {
    let mut contexts: BTreeMap<ContextKey, Counted> = BTreeMap::new();
    let mut answered: BTreeSet<(&str, ContextKey)> = BTreeSet::new();
    for r in responses.iter().filter(|r| !r.practice) {
        let Some(context) = data.context_of(r, texts) else {
            continue;
        };
        let word = if r.normalized.is_empty() {
            normalize(&r.response)
        } else {
            r.normalized.clone()
        };
        let key = context.key();
        if word.is_empty() || !answered.insert((r.participant.as_str(), key)) {
            continue;
        }
        let counted = contexts.entry(key).or_insert_with(|| Counted {
            text: texts
                .text_of(&r.participant, &r.run, &r.passage)
                .map_or_else(|| provo_text(data, key.text_id), str::to_string),
            passage: r.passage.clone(),
            word: context.original.clone(),
            responses: BTreeMap::new(),
        });
        *counted.responses.entry(word).or_default() += 1;
    }
    let rows = contexts.iter().flat_map(|(key, counted)| {
        let total: u32 = counted.responses.values().sum();
        let mut by_count: Vec<(&String, &u32)> = counted.responses.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        by_count.into_iter().map(move |(response, n)| {
            vec![
                key.text_id.to_string(),
                counted
                    .text
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
                key.word_num.to_string(),
                counted.word.clone(),
                response.clone(),
                n.to_string(),
                total.to_string(),
                format!("{}", f64::from(*n) / f64::from(total)),
                counted.passage.clone(),
            ]
        })
    });
    write_delimited(&norms_columns(), rows, Delimiter::Comma)
}

/// A Provo text as the norms hold it: its longest context and the word after it.
fn provo_text(data: &Dataset, text_id: u32) -> String {
    data.norms
        .iter()
        .filter(|c| c.text_id == text_id)
        .max_by_key(|c| c.word_num)
        .map(|c| format!("{} {}", c.context, c.original).trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    /// The codebook documents `norms.csv`'s columns, in order.
    #[test]
    fn the_codebook_names_every_column() {
        let documented: Vec<&str> = super::super::codebook::NORMS_CODEBOOK
            .iter()
            .map(|(name, _, _)| *name)
            .collect();
        assert_eq!(documented, super::norms_columns());
    }
}
