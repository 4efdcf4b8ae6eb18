//! A study's results read back in, whatever carried them: JATOS's results archive (a ZIP of
//! `study_result_<id>/comp-result_<id>/data.txt` with a `metadata.json`, JATOS 3.8+), JATOS's
//! older text export (one result per line), the bundles a `submit_url` server saved (files, or
//! a ZIP of them) and the app's own bundle downloads. Files are told apart by content, never
//! by name: JATOS calls every result `data.txt`.
//!
//! The app sends a participant's answers more than once (each answer as it is saved, everything
//! again at the end, everything again after a reload, where real JATOS opens a new component
//! result), so the same answer arrives several times. Answers are merged by their idempotency
//! key (participant/passage/position, and /round in the two-token game): each counts once.

use std::collections::BTreeMap;
use std::io::Read;

use serde::Deserialize;
use serde_json::Value;

use crate::data::participant_run::{ParticipantRun, RunState};
use crate::data::{DataError, ResponseRecord};
use crate::game::attention::{AttentionResult, tally};
use crate::game::export::Manifest;
use crate::game::lists::AssignedList;
use crate::game::outbox::response_key;
use crate::game::passages::Passage;
use crate::game::tokens::records::TokenRecords;
use crate::game::tokens::top1::Top1Record;
use crate::game::tokens::two_token::TwoTokenRecord;
use crate::game::withdrawal::WithdrawalNotice;

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
    #[error("{file}: JATOS's metadata.json is not what JATOS writes ({message})")]
    Metadata { file: String, message: String },
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

/// Whether a text is study results (one or more bundles, or JATOS's `metadata.json`), so that
/// importers send it here rather than read it as passages or norms.
pub fn is_results_text(text: &str) -> bool {
    let start = text.trim_start_matches('\u{feff}').trim_start();
    if !start.starts_with('{') {
        return false;
    }
    let head: String = start.chars().take(4000).collect();
    if !(head.contains("\"manifest\"") || head.contains("\"studyResults\"")) {
        return false;
    }
    json_values(text).is_some_and(|values| {
        !values.is_empty()
            && values
                .iter()
                .all(|v| v.get("manifest").is_some() || is_jatos_metadata(v))
    })
}

fn is_jatos_metadata(value: &Value) -> bool {
    value
        .get("data")
        .and_then(Value::as_array)
        .is_some_and(|studies| studies.iter().all(|s| s.get("studyResults").is_some()))
}

/// The state JATOS gives a study run (`StudyResult.StudyState`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum JatosState {
    /// `FINISHED`: the app ended the run after the last answer.
    Finished,
    /// `ABORTED`: the participant withdrew; JATOS deleted the run's result data.
    Aborted,
    /// `FAIL`: ended as failed.
    Failed,
    /// Still running or left open (`PRE`, `STARTED`, `DATA_RETRIEVED`, `RESULTDATA_POSTED`).
    Open(String),
}

impl JatosState {
    fn from_jatos(state: &str) -> Self {
        match state {
            "FINISHED" => Self::Finished,
            "ABORTED" => Self::Aborted,
            "FAIL" => Self::Failed,
            other => Self::Open(other.to_string()),
        }
    }
}

/// One study run as JATOS's `metadata.json` describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct JatosStudyRun {
    pub study_result_id: u64,
    pub state: JatosState,
    /// The study link's URL parameters (`PROLIFIC_PID`, …): how a withdrawn run, whose data
    /// JATOS deleted, is still tied to a participant.
    pub url_parameters: BTreeMap<String, String>,
}

/// The runs in JATOS's `metadata.json` (`{"data": [{"studyResults": [{"id", "studyState",
/// "urlQueryParameters", …}]}]}`).
pub fn parse_jatos_metadata(file: &str, text: &str) -> Result<Vec<JatosStudyRun>, ResultsError> {
    #[derive(Deserialize)]
    struct Metadata {
        data: Vec<Study>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Study {
        study_results: Vec<Run>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Run {
        id: u64,
        study_state: String,
        #[serde(default)]
        url_query_parameters: BTreeMap<String, String>,
    }
    let metadata: Metadata =
        serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| {
            ResultsError::Metadata {
                file: file.to_string(),
                message: e.to_string(),
            }
        })?;
    Ok(metadata
        .data
        .into_iter()
        .flat_map(|s| s.study_results)
        .map(|r| JatosStudyRun {
            study_result_id: r.id,
            state: JatosState::from_jatos(&r.study_state),
            url_parameters: r.url_query_parameters,
        })
        .collect())
}

/// The JATOS study result a file belongs to, from its path in the archive
/// (`…/study_result_<id>/comp-result_<id>/data.txt`).
///
/// ```
/// use clozelab::game::results::study_result_id;
/// assert_eq!(study_result_id("r.zip/study_result_12/comp-result_40/data.txt"), Some(12));
/// assert_eq!(study_result_id("bundle.json"), None);
/// ```
pub fn study_result_id(path: &str) -> Option<u64> {
    path.split('/')
        .find_map(|part| part.strip_prefix("study_result_")?.parse().ok())
}

/// Results merged from any number of files.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StudyResults {
    /// The next-word game's answers, each idempotency key once.
    pub responses: Vec<ResponseRecord>,
    pub top1: Vec<Top1Record>,
    pub two_token: Vec<TwoTokenRecord>,
    /// One row per participant (and per JATOS run withdrawn without data), by id.
    pub participants: Vec<ParticipantRun>,
    /// Bundles read, repeats included.
    pub bundles: usize,
    /// Answers that arrived again and were counted once.
    pub repeats: usize,
    /// Files that were not results, with why (shown; the others are kept).
    pub skipped: Vec<String>,
    /// The studies' own passages (`texts` of the manifests' study configs), by id.
    pub passages: Vec<Passage>,
}

#[derive(Default)]
struct Merging {
    responses: BTreeMap<String, ResponseRecord>,
    top1: BTreeMap<String, Top1Record>,
    two_token: BTreeMap<String, TwoTokenRecord>,
    people: BTreeMap<String, Person>,
    bundles: usize,
    repeats: usize,
    /// Participants who withdrew (a study server's withdrawal notices).
    withdrawn: BTreeMap<String, String>,
    passages: BTreeMap<String, Passage>,
    /// Attention-check answers by (participant, check): the latest bundle's hold them all.
    attention: BTreeMap<(String, String), AttentionResult>,
}

/// What the bundles say of one participant.
#[derive(Default)]
struct Person {
    study: String,
    planned: Option<usize>,
    /// Bundles that carried their answers.
    bundles: usize,
    /// JATOS study results their bundles came from.
    run_ids: Vec<u64>,
    list: Option<AssignedList>,
    pilot: bool,
}

impl Merging {
    fn add_bundle(&mut self, path: &str, value: Value) -> Result<(), ResultsError> {
        let manifest: Manifest =
            serde_json::from_value(value.get("manifest").cloned().unwrap_or(Value::Null))
                .map_err(|e| invalid(path, &format!("its manifest: {e}")))?;
        let mut participants = Vec::new();
        if value.get("responses").is_some() {
            let records: Vec<ResponseRecord> =
                serde_json::from_value(value["responses"].clone())
                    .map_err(|e| invalid(path, &format!("its responses: {e}")))?;
            for mut r in records {
                if r.normalized.is_empty() {
                    r.normalized = crate::text::words::normalize(&r.response);
                }
                participants.push(r.participant.clone());
                let key = response_key(&r.participant, &r.passage, r.position);
                self.repeats += usize::from(self.responses.insert(key, r).is_some());
            }
        } else {
            let records: TokenRecords = serde_json::from_value(value)
                .map_err(|e| invalid(path, &format!("its records: {e}")))?;
            match records {
                TokenRecords::Top1(rows) => {
                    for r in rows {
                        participants.push(r.participant.clone());
                        let key = response_key(&r.participant, &r.passage, r.position);
                        self.repeats += usize::from(self.top1.insert(key, r).is_some());
                    }
                }
                TokenRecords::TwoToken(rows) => {
                    for r in rows {
                        participants.push(r.participant.clone());
                        let key = format!(
                            "{}/{}",
                            response_key(&r.participant, &r.passage, r.position),
                            r.round
                        );
                        self.repeats += usize::from(self.two_token.insert(key, r).is_some());
                    }
                }
            }
        }
        for result in &manifest.attention_checks {
            self.attention.insert(
                (result.participant.clone(), result.check.clone()),
                result.clone(),
            );
        }
        for passage in &manifest.study.texts {
            self.passages
                .entry(passage.id.clone())
                .or_insert_with(|| passage.clone());
        }
        participants.push(manifest.participant.clone());
        participants.sort();
        participants.dedup();
        for participant in participants {
            let person = self.people.entry(participant).or_default();
            person.study = manifest.study.title.clone();
            person.planned = manifest.planned_answers.or(person.planned);
            person.bundles += 1;
            person.run_ids.extend(study_result_id(path));
            if let Some(list) = &manifest.list {
                person.list = Some(list.clone());
            }
            person.pilot |= manifest.pilot;
        }
        self.bundles += 1;
        Ok(())
    }

    fn finish(mut self, runs: &[JatosStudyRun], skipped: Vec<String>) -> StudyResults {
        // A withdrawal asks for the participant's answers to be deleted: none are kept.
        let gone = |p: &str| self.withdrawn.contains_key(p);
        self.responses.retain(|_, r| !gone(&r.participant));
        self.top1.retain(|_, r| !gone(&r.participant));
        self.two_token.retain(|_, r| !gone(&r.participant));
        self.attention.retain(|(p, _), _| !gone(p));
        for (participant, study) in &self.withdrawn {
            let person = self.people.entry(participant.clone()).or_default();
            if person.study.is_empty() {
                person.study = study.clone();
            }
        }
        let mut answered: BTreeMap<&str, usize> = BTreeMap::new();
        for p in self.responses.values().map(|r| r.participant.as_str()) {
            *answered.entry(p).or_default() += 1;
        }
        for p in self.top1.values().map(|r| r.participant.as_str()) {
            *answered.entry(p).or_default() += 1;
        }
        for p in self.two_token.values().map(|r| r.participant.as_str()) {
            *answered.entry(p).or_default() += 1;
        }
        let state_of = |id: &u64| runs.iter().find(|r| r.study_result_id == *id);
        let mut participants: Vec<ParticipantRun> = self
            .people
            .iter()
            .map(|(participant, person)| {
                let count = answered.get(participant.as_str()).copied().unwrap_or(0);
                let finished = person
                    .run_ids
                    .iter()
                    .filter_map(state_of)
                    .any(|r| r.state == JatosState::Finished);
                let all_there = person.planned.is_some_and(|n| count >= n);
                let checks: Vec<AttentionResult> = self
                    .attention
                    .values()
                    .filter(|r| r.participant == *participant)
                    .cloned()
                    .collect();
                let (attention_passed, attention_failed) = tally(&checks);
                ParticipantRun {
                    participant: participant.clone(),
                    study: person.study.clone(),
                    list: person.list.as_ref().map(|list| list.name.clone()),
                    list_chosen_by: person.list.as_ref().map(|list| list.how.label().into()),
                    pilot: person.pilot,
                    answered: count,
                    planned: person.planned,
                    state: if self.withdrawn.contains_key(participant) {
                        RunState::Withdrawn
                    } else if finished || all_there {
                        RunState::Complete
                    } else {
                        RunState::Incomplete
                    },
                    bundles: person.bundles,
                    attention_passed,
                    attention_failed,
                }
            })
            .collect();
        // A withdrawn JATOS run left no data: JATOS deleted it. Its URL parameters still name
        // the participant (Prolific's id, when the study link carried it).
        for run in runs.iter().filter(|r| r.state == JatosState::Aborted) {
            let participant = ["PROLIFIC_PID", "participant", "workerId"]
                .iter()
                .find_map(|k| run.url_parameters.get(*k).cloned())
                .unwrap_or_else(|| format!("JATOS study result {}", run.study_result_id));
            if let Some(known) = participants
                .iter_mut()
                .find(|p| p.participant == participant)
            {
                known.state = RunState::Withdrawn;
            } else {
                participants.push(ParticipantRun {
                    participant,
                    study: String::new(),
                    list: None,
                    list_chosen_by: None,
                    pilot: false,
                    answered: 0,
                    planned: None,
                    state: RunState::Withdrawn,
                    bundles: 0,
                    attention_passed: 0,
                    attention_failed: 0,
                });
            }
        }
        participants.sort_by(|a, b| a.participant.cmp(&b.participant));
        StudyResults {
            responses: self.responses.into_values().collect(),
            top1: self.top1.into_values().collect(),
            two_token: self.two_token.into_values().collect(),
            participants,
            bundles: self.bundles,
            repeats: self.repeats,
            skipped,
            passages: self.passages.into_values().collect(),
        }
    }
}

fn invalid(file: &str, message: &str) -> ResultsError {
    ResultsError::Data(DataError::Invalid {
        file: file.to_string(),
        message: message.to_string(),
    })
}

impl StudyResults {
    /// Reads and merges files as `(name, bytes)`: ZIP archives are unpacked, every text holding
    /// bundles is read (however many per file), JATOS's `metadata.json` gives each run's state.
    /// Files that are not results (an empty `data.txt`, a README) are listed in `skipped`.
    pub fn read(files: Vec<(String, Vec<u8>)>) -> Result<Self, ResultsError> {
        let mut merging = Merging::default();
        let mut runs = Vec::new();
        let mut skipped = Vec::new();
        for (name, bytes) in files {
            for (path, content) in unpack(&name, bytes)? {
                let Ok(text) = std::str::from_utf8(&content) else {
                    skipped.push(format!("{path}: not text"));
                    continue;
                };
                if text.trim().is_empty() {
                    skipped.push(format!("{path}: empty (a run that sent nothing)"));
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
                        merging.withdrawn.insert(notice.participant, notice.study);
                    } else if is_jatos_metadata(&value) {
                        runs.extend(parse_jatos_metadata(&path, text)?);
                    } else {
                        skipped.push(format!("{path}: JSON, but not a clozelab bundle"));
                    }
                }
            }
        }
        Ok(merging.finish(&runs, skipped))
    }

    /// One line for the page: participants by state, answers, repeats merged.
    pub fn summary(&self) -> String {
        let count = |s: RunState| self.participants.iter().filter(|p| p.state == s).count();
        let answers = self.responses.len() + self.top1.len() + self.two_token.len();
        format!(
            "{} participants ({} complete, {} incomplete, {} withdrawn): {answers} answers from \
             {} bundles, {} repeats counted once",
            self.participants.len(),
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

    /// Keeps the answers of participants whose state is in `keep` (e.g. only complete runs);
    /// a preview's (pilot) answers are never kept.
    pub fn only(&mut self, keep: &[RunState]) {
        let kept: std::collections::BTreeSet<String> = self
            .participants
            .iter()
            .filter(|p| keep.contains(&p.state) && !p.pilot)
            .map(|p| p.participant.clone())
            .collect();
        self.retain_answers(|p| kept.contains(p));
    }

    /// Drops the answers of participants who failed any attention check.
    pub fn without_failed_attention(&mut self) {
        let failed: std::collections::BTreeSet<String> = self
            .participants
            .iter()
            .filter(|p| p.attention_failed > 0)
            .map(|p| p.participant.clone())
            .collect();
        self.retain_answers(|p| !failed.contains(p));
    }

    /// Keeps the answers, in every game, of the participants `keep` picks.
    fn retain_answers(&mut self, keep: impl Fn(&str) -> bool) {
        self.responses.retain(|r| keep(&r.participant));
        self.top1.retain(|r| keep(&r.participant));
        self.two_token.retain(|r| keep(&r.participant));
    }
}

/// What a file holds as text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileTexts {
    /// `(path, text)`: the file itself, or each text file of a ZIP archive.
    pub texts: Vec<(String, String)>,
    /// Entries of an archive that are not text (e.g. files JATOS's participants uploaded).
    pub not_text: Vec<String>,
}

/// The texts of a file: a ZIP archive's text files (its other entries listed apart), or the
/// file itself, which must then be UTF-8.
pub fn texts_of(name: &str, bytes: Vec<u8>) -> Result<FileTexts, ResultsError> {
    let mut texts = Vec::new();
    let mut not_text = Vec::new();
    let archive = is_zip(&bytes);
    for (path, content) in unpack(name, bytes)? {
        match String::from_utf8(content) {
            Ok(text) => texts.push((path, text)),
            Err(_) if archive => not_text.push(path),
            Err(_) => return Err(ResultsError::NotText(path)),
        }
    }
    Ok(FileTexts { texts, not_text })
}
