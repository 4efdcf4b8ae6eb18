//! What a file dropped into "Your data" is, decided once here (not in the page), by content:
//! study results (JATOS's export, a ZIP or text of bundles: see [`crate::game::readback::results`]),
//! passages as plain text, a study config, an export (long CSV or JSON), or Provo-style norms.

use crate::data::{
    ClozeNorms, DataError, ResponseRecord, SkippedRow, import_long_csv, import_provo_norms,
};
use crate::game::design::passages::{Passage, PassageError, parse_plain_text};
use crate::game::design::study::{StudyConfig, StudyError};
use crate::game::readback::results::{ResultsError, StudyResults, is_results_text, is_zip};
use crate::game::run::export::import_bundle;
use crate::game::tokens::records::{TokenRecords, import_token_records};

/// A parsed import.
#[derive(Debug, PartialEq)]
pub enum Imported {
    Passages(Vec<Passage>),
    Study(Box<StudyConfig>),
    Responses(Vec<ResponseRecord>),
    Norms {
        norms: ClozeNorms,
        skipped: Vec<SkippedRow>,
    },
    /// An export of a next-token game.
    TokenRecords(TokenRecords),
    /// Study results: bundles (any number, from JATOS or a study's server), merged.
    Results(Box<StudyResults>),
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ImportError {
    #[error("{0}: not UTF-8 text")]
    NotText(String),
    #[error("{file}: {source}")]
    Passages { file: String, source: PassageError },
    #[error("{file}: {source}")]
    Study { file: String, source: StudyError },
    #[error(transparent)]
    Data(#[from] DataError),
    #[error(transparent)]
    Results(#[from] ResultsError),
}

impl Imported {
    /// One line for the page: what was read.
    pub fn summary(&self) -> String {
        match self {
            Imported::Passages(p) => format!("{} passages", p.len()),
            Imported::Study(_) => "study loaded".into(),
            Imported::Responses(r) => format!("{} responses", r.len()),
            Imported::Norms { norms, skipped } => format!(
                "{} contexts with human norms ({} rows skipped)",
                norms.contexts.len(),
                skipped.len()
            ),
            Imported::TokenRecords(TokenRecords::Top1(r)) => {
                format!("{} top-1 token answers", r.len())
            }
            Imported::TokenRecords(TokenRecords::TwoToken(r)) => {
                format!("{} two-token rounds", r.len())
            }
            Imported::Results(results) => results.summary(),
        }
    }
}

/// Reads one file by its content, then its name: a ZIP or bundles → study results; `.txt` →
/// passages; `.json` → a study config if it is one, else an export; a table with a
/// `Response_Count` column → norms; any other table → the long format.
pub fn import_file(name: &str, bytes: &[u8]) -> Result<Imported, ImportError> {
    if is_zip(bytes) {
        let results = StudyResults::read(vec![(name.to_string(), bytes.to_vec())])?;
        return Ok(Imported::Results(Box::new(results)));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| ImportError::NotText(name.to_string()))?;
    if is_results_text(text) {
        let results = StudyResults::read(vec![(name.to_string(), bytes.to_vec())])?;
        return Ok(Imported::Results(Box::new(results)));
    }
    let lower = name.to_lowercase();
    if lower.ends_with(".txt") {
        return parse_plain_text(text)
            .map(Imported::Passages)
            .map_err(|source| ImportError::Passages {
                file: name.into(),
                source,
            });
    }
    // Next-token exports carry `true_token` (as a key in JSON, a column in tables).
    let head: String = text.chars().take(8000).collect();
    if head.contains("\"true_token\"")
        || head
            .lines()
            .next()
            .is_some_and(|h| h.split([',', '\t']).any(|c| c.trim() == "true_token"))
    {
        return Ok(Imported::TokenRecords(import_token_records(name, text)?));
    }
    if lower.ends_with(".json") {
        let trimmed = text.trim_start_matches('\u{feff}').trim_start();
        // A study config is an object without "responses"; an export is an array or a bundle.
        if trimmed.starts_with('{') && !trimmed.contains("\"responses\"") {
            return StudyConfig::from_json(text)
                .map(|c| Imported::Study(Box::new(c)))
                .map_err(|source| ImportError::Study {
                    file: name.into(),
                    source,
                });
        }
        return Ok(Imported::Responses(import_bundle(name, text)?));
    }
    let header = text.lines().next().unwrap_or_default();
    if header.contains("Response_Count") {
        let (norms, skipped) = import_provo_norms(name, text)?;
        return Ok(Imported::Norms { norms, skipped });
    }
    Ok(Imported::Responses(import_long_csv(name, text)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_recognised() {
        assert!(
            matches!(import_file("p.TXT", b"One two three.\n\nFour five six."), Ok(Imported::Passages(p)) if p.len() == 2)
        );
        assert!(matches!(
            import_file("s.json", br#"{"passages": ["storm"]}"#),
            Ok(Imported::Study(_))
        ));
        assert!(matches!(import_file("e.json", b"[]"), Ok(Imported::Responses(r)) if r.is_empty()));
        let norms =
            "Text_ID,Text,Word_Number,Word,Response,Response_Count\n1,The cat sat,2,cat,cat,3\n";
        assert!(
            matches!(import_file("n.csv", norms.as_bytes()), Ok(Imported::Norms { norms, .. }) if norms.contexts.len() == 1)
        );
        let long = crate::data::export_long_csv(&[], crate::data::Delimiter::Comma);
        assert!(
            matches!(import_file("l.csv", long.as_bytes()), Ok(Imported::Responses(r)) if r.is_empty())
        );
    }

    #[test]
    fn bad_files_say_which_and_why() {
        assert_eq!(
            import_file("x.csv", &[0xff, 0xfe]),
            Err(ImportError::NotText("x.csv".into()))
        );
        let study = import_file("s.json", br#"{"passages": ["nope"]}"#)
            .unwrap_err()
            .to_string();
        assert!(study.starts_with("s.json: "), "{study}");
        let export = import_file("e.json", b"[{").unwrap_err().to_string();
        assert!(export.contains("e.json"), "{export}");
        assert!(
            import_file("e.txt", b"   ")
                .unwrap_err()
                .to_string()
                .starts_with("e.txt: ")
        );
    }
}
