//! A study's results read back in, whatever carried them: JATOS's results archive (a ZIP of
//! `study_result_<id>/comp-result_<id>/data.txt` with a `metadata.json`, JATOS 3.8+), JATOS's
//! older text export (one result per line), the bundles a `submit_url` server saved (files, or
//! a ZIP of them), the app's own bundle downloads and its long-format answers (CSV or JSON). Files are told apart by content, never
//! by name: JATOS calls every result `data.txt`.
//!
//! The app sends a participant's answers more than once (each answer as it is saved, everything
//! again at the end), so the same answer arrives several times; [`super::results_merge`]
//! merges them into runs, each answer once, and [`super::jatos_export`] reads what JATOS's
//! export says of its runs.

use std::io::Read;

use serde_json::Value;

use super::jatos_export::{is_jatos_metadata, parse_jatos_metadata};
pub use super::results_merge::StudyResults;
use super::results_merge::{Merging, RunKey, counted};
use crate::data::DataError;
use crate::data::participant_run::RunState;
use crate::game::run::withdrawal::WithdrawalNotice;
use crate::game::tokens::records::TokenRecords;

/// A ZIP archive is refused past this much uncompressed data (a ZIP bomb would otherwise
/// exhaust the tab's memory): 1 GiB, ~30× a JATOS export of 500 participants × 250 answers.
pub const MAX_UNPACKED_BYTES: u64 = 1 << 30;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ResultsError {
    #[error("{file}: not a readable ZIP archive ({message})")]
    Zip { file: String, message: String },
    #[error("{file}: unpacks to more than {} MB; split the export", MAX_UNPACKED_BYTES >> 20)]
    TooLarge { file: String },
    #[error("{0}: not UTF-8 text")]
    NotText(String),
    #[error(transparent)]
    JatosExport(#[from] super::jatos_export::JatosExportError),
    #[error(transparent)]
    Data(#[from] DataError),
}

/// Whether these bytes are a ZIP archive (its local-file or empty-archive signature).
pub fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06")
}

/// The files of a ZIP archive as `(archive/path, bytes)`, folders and macOS resource forks
/// left out; any other file is returned as it is.
pub fn unpack(name: &str, bytes: Vec<u8>) -> Result<Vec<(String, Vec<u8>)>, ResultsError> {
    if !is_zip(&bytes) {
        return Ok(vec![(name.to_string(), bytes)]);
    }
    let zip_error = |e: zip::result::ZipError| ResultsError::Zip {
        file: name.to_string(),
        message: e.to_string(),
    };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(zip_error)?;
    let mut files = Vec::new();
    let mut unpacked = 0u64;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(zip_error)?;
        let path = entry.name().to_string();
        if entry.is_dir() || path.starts_with("__MACOSX/") {
            continue;
        }
        // The declared size can lie: the read itself stops one byte past what is left.
        let left = MAX_UNPACKED_BYTES.saturating_sub(unpacked);
        let mut content = Vec::new();
        (&mut entry)
            .take(left + 1)
            .read_to_end(&mut content)
            .map_err(|e| ResultsError::Zip {
                file: name.to_string(),
                message: format!("{path}: {e}"),
            })?;
        unpacked += content.len() as u64;
        if unpacked > MAX_UNPACKED_BYTES {
            return Err(ResultsError::TooLarge {
                file: name.to_string(),
            });
        }
        files.push((format!("{name}/{path}"), content));
    }
    Ok(files)
}

/// Every JSON value in a text that holds one or more, one after another (JATOS's
/// one-result-per-line export, a `data.txt` with appended results); `None` when the text is
/// not only JSON.
pub fn json_values(text: &str) -> Option<Vec<Value>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let values: Result<Vec<Value>, _> = serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect();
    values.ok()
}

/// `bytes` read as Latin-1 (each byte the character of that number) when that makes study
/// results (JATOS on a server whose default charset is not UTF-8); `None` otherwise.
fn latin1_results(bytes: &[u8]) -> Option<String> {
    let text: String = bytes.iter().map(|&b| char::from(b)).collect();
    is_results_text(&text).then_some(text)
}

/// Whether a text is study results (one or more bundles or withdrawal notices, or JATOS's
/// `metadata.json`), so that importers send it here rather than read it as passages or norms.
pub fn is_results_text(text: &str) -> bool {
    let start = text.trim_start_matches('\u{feff}').trim_start();
    if !start.starts_with('{') {
        return false;
    }
    let head: String = start.chars().take(4000).collect();
    if !["\"manifest\"", "\"studyResults\"", "\"withdrawal\""]
        .iter()
        .any(|key| head.contains(key))
    {
        return false;
    }
    // A study server saves each POST as it comes: a withdrawal notice may be a file alone.
    json_values(text).is_some_and(|values| {
        !values.is_empty()
            && values.iter().all(|v| {
                v.get("manifest").is_some()
                    || is_jatos_metadata(v)
                    || WithdrawalNotice::from_value(v).is_some()
            })
    })
}

/// Whether a text is the app's long format of answers (a CSV or TSV with a `participant`
/// column, as "Your data" downloads it, or a JSON array of answers): a participant's answers
/// without a manifest, read with study results into the trial table.
///
/// ```
/// use clozelab::game::readback::results::is_long_export;
/// assert!(is_long_export("participant,passage,position,response,response_time_ms,timestamp\n"));
/// assert!(is_long_export(r#"[{"participant": "P1", "passage": "storm"}]"#));
/// assert!(!is_long_export("Text_ID,Text,Word_Number,Word,Response,Response_Count\n"));
/// ```
pub fn is_long_export(text: &str) -> bool {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    let first = body.lines().next().unwrap_or_default();
    if body.starts_with('[') {
        let head: String = body.chars().take(4000).collect();
        return head.contains("\"participant\"");
    }
    !first.contains("Response_Count") && first.split([',', '\t']).any(|c| c.trim() == "participant")
}

/// Whether a text holds a study's answers: results ([`is_results_text`]) or the long format
/// ([`is_long_export`]).
pub fn is_study_answers(text: &str) -> bool {
    is_results_text(text) || is_long_export(text)
}

impl StudyResults {
    /// Reads and merges files as `(name, bytes)`: ZIP archives are unpacked, every text holding
    /// bundles is read (however many per file), JATOS's `metadata.json` gives each run's state.
    /// Files that are not results (an empty `data.txt`, a README) are listed in `skipped`.
    pub fn read(files: Vec<(String, Vec<u8>)>) -> Result<Self, ResultsError> {
        let mut merging = Merging::default();
        let mut runs = Vec::new();
        let mut skipped = Vec::new();
        let mut warnings = Vec::new();
        for (name, bytes) in files {
            for (path, content) in unpack(&name, bytes)? {
                let text = match String::from_utf8(content) {
                    Ok(text) => text,
                    Err(e) => match latin1_results(e.as_bytes()) {
                        Some(text) => {
                            warnings.push(format!(
                                "{path}: not UTF-8; read as Latin-1, as JATOS writes data.txt in \
                                 its server's default charset (set -Dfile.encoding=UTF-8 on the \
                                 server): check answers with letters outside Latin-1"
                            ));
                            text
                        }
                        None => {
                            skipped.push(format!("{path}: not text"));
                            continue;
                        }
                    },
                };
                let text = text.as_str();
                if text.trim().is_empty() {
                    skipped.push(format!("{path}: empty (a run that sent nothing)"));
                    continue;
                }
                // Answers in the long format: no manifest says which run or plan they had.
                if is_long_export(text) && !is_results_text(text) {
                    let records = if text.trim_start().starts_with('[') {
                        crate::data::import_long_json(&path, text)?
                    } else {
                        crate::data::import_long_csv(&path, text)?
                    };
                    merging.add_plain(records);
                    continue;
                }
                let Some(values) = json_values(text) else {
                    skipped.push(format!("{path}: not results"));
                    continue;
                };
                for value in values {
                    if value.get("manifest").is_some() {
                        merging.add_bundle(&path, value)?;
                    } else if let Some(notice) = WithdrawalNotice::from_value(&value) {
                        merging
                            .withdrawn
                            .insert((notice.participant, notice.run), notice.study);
                    } else if is_jatos_metadata(&value) {
                        runs.extend(parse_jatos_metadata(&path, text)?);
                    } else {
                        skipped.push(format!("{path}: JSON, but not a clozelab bundle"));
                    }
                }
            }
        }
        Ok(merging.finish(&runs, skipped, warnings))
    }

    /// One line for the page: participants by state, answers, repeats merged.
    pub fn summary(&self) -> String {
        let count = |s: RunState| self.participants.iter().filter(|p| p.state == s).count();
        let answers = self.responses.len() + self.top1.len() + self.two_token.len();
        let flagged = self
            .participants
            .iter()
            .filter(|p| !p.warnings.is_empty())
            .count();
        let flagged = if flagged == 0 {
            String::new()
        } else {
            format!(
                "; {} flagged (the data does not add up: left out, see the table)",
                counted(flagged, "run")
            )
        };
        let screened = match count(RunState::ScreenedOut) {
            0 => String::new(),
            n => format!(", {n} screened out"),
        };
        format!(
            "{} ({} complete, {} incomplete, {} withdrawn{screened}): {answers} answers from \
             {} bundles, {} repeats counted once{flagged}",
            counted(self.participants.len(), "run"),
            count(RunState::Complete),
            count(RunState::Incomplete),
            count(RunState::Withdrawn),
            self.bundles,
            self.repeats
        )
    }

    /// The next-token answers of one game, if any (the two-token game's first).
    pub fn token_records(&self) -> Option<TokenRecords> {
        if !self.two_token.is_empty() {
            Some(TokenRecords::TwoToken(self.two_token.clone()))
        } else if !self.top1.is_empty() {
            Some(TokenRecords::Top1(self.top1.clone()))
        } else {
            None
        }
    }

    /// Keeps the answers of runs whose state is in `keep` (e.g. only complete runs); a
    /// preview's (pilot) answers are never kept, nor a run whose data does not add up (its
    /// `warnings` say why).
    pub fn only(&mut self, keep: &[RunState]) {
        let kept: std::collections::BTreeSet<RunKey> = self
            .participants
            .iter()
            .filter(|p| keep.contains(&p.state) && !p.pilot && p.warnings.is_empty())
            .map(|p| (p.participant.clone(), p.run.clone()))
            .collect();
        self.retain_answers(|p, run| kept.contains(&(p.to_string(), run.to_string())));
    }

    /// Drops the answers of the runs `exclusions` name.
    pub fn without(&mut self, exclusions: &[super::exclusions::Exclusion]) {
        let left_out: std::collections::BTreeSet<RunKey> = exclusions
            .iter()
            .map(|e| (e.participant.clone(), e.run.clone()))
            .collect();
        self.retain_answers(|p, run| !left_out.contains(&(p.to_string(), run.to_string())));
    }

    /// Keeps the answers, in every game, of the runs `keep(participant, run)` picks.
    fn retain_answers(&mut self, keep: impl Fn(&str, &str) -> bool) {
        self.responses.retain(|r| keep(&r.participant, &r.run));
        self.top1.retain(|r| keep(&r.participant, &r.run));
        self.two_token.retain(|r| keep(&r.participant, &r.run));
    }
}

/// What a file holds as text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileTexts {
    /// `(path, text)`: the file itself, or each text file of a ZIP archive.
    pub texts: Vec<(String, String)>,
    /// Entries of an archive that are not text (e.g. files JATOS's participants uploaded).
    pub not_text: Vec<String>,
    /// Entries that were not UTF-8 but are results read as Latin-1 (JATOS's `data.txt` on a
    /// server whose default charset is not UTF-8).
    pub latin1: Vec<String>,
}

/// The texts of a file: a ZIP archive's text files (its other entries listed apart), or the
/// file itself, which must then be UTF-8.
pub fn texts_of(name: &str, bytes: Vec<u8>) -> Result<FileTexts, ResultsError> {
    let mut texts = Vec::new();
    let mut not_text = Vec::new();
    let mut latin1 = Vec::new();
    let archive = is_zip(&bytes);
    for (path, content) in unpack(name, bytes)? {
        match String::from_utf8(content) {
            Ok(text) => texts.push((path, text)),
            Err(e) => match latin1_results(e.as_bytes()) {
                Some(text) => {
                    latin1.push(path.clone());
                    texts.push((path, text));
                }
                None if archive => not_text.push(path),
                None => return Err(ResultsError::NotText(path)),
            },
        }
    }
    Ok(FileTexts {
        texts,
        not_text,
        latin1,
    })
}
