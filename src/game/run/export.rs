//! What a study produces: the long format, the Provo-compatible aggregate, a JSON bundle with a
//! manifest, and the merge of several participants' exports into human distributions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::humans::HumanCounts;
use crate::data::{DataError, Delimiter, PROVO_COLUMNS, ResponseRecord, write_delimited};
use crate::game::design::passages::Passage;
use crate::game::design::plan::Plan;
use crate::game::design::study::{GameKind, StudyConfig};

/// Everything needed to interpret an export later.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub app: String,
    pub app_version: String,
    pub model_name: String,
    /// The model's architecture ("GPT-2", "GPT-NeoX", "Llama"); absent in older exports, all
    /// GPT-2.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub architecture: String,
    /// SHA-256 of the weights file, hex.
    pub weight_sha256: String,
    pub tokenizer: String,
    pub backend: String,
    pub adapter: String,
    pub participant: String,
    /// The study's id and the run these answers belong to (see `game::run_scope`); empty in
    /// exports made before runs were kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub study_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run: String,
    pub order_seed: u64,
    pub sampling_seed: u64,
    pub study: StudyConfig,
    pub url_ids: BTreeMap<String, String>,
    pub exported_at: String,
    /// The answers the participant's plan asks for (practice included), so that results read
    /// back can tell a complete run from one cut short; absent in older exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_answers: Option<usize>,
    /// The participant's counterbalanced list and how it was chosen (studies with lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<crate::game::design::lists::AssignedList>,
    /// Answers from the researcher's preview of the study, not a participant's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pilot: bool,
    /// The participant's answers to the study's attention checks so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attention_checks: Vec<crate::game::design::attention::AttentionResult>,
    /// The participant's answers to the study's questions so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<crate::game::design::questions::QuestionAnswer>,
    /// A question screened the participant out: the study ended before the passages.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub screened_out: bool,
    /// When the participant agreed to the consent (RFC 3339), when the study asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent_at: Option<String>,
    /// The participant's browser and device, as the page saw them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceInfo>,
    /// JATOS's worker type of the run (`Jatos` for a test run from JATOS's GUI,
    /// `GeneralSingle`, `PersonalMultiple`, …), inside JATOS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_type: Option<String>,
}

/// The browser and device a participant used (to tell phones from desktops, and to find a
/// browser that behaved oddly).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub user_agent: String,
    /// The screen's CSS pixels.
    pub screen_width: u32,
    pub screen_height: u32,
    /// Whether the device has a touch screen (`navigator.maxTouchPoints > 0`).
    pub touch: bool,
}

/// What the page adds to a run's manifest beyond the plan: the consent's time, the device,
/// and the answers to the study's questions and attention checks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunDetails {
    pub consent_at: Option<String>,
    pub device: Option<DeviceInfo>,
    pub questions: Vec<crate::game::design::questions::QuestionAnswer>,
    pub attention: Vec<crate::game::design::attention::AttentionResult>,
}

/// A JSON export: manifest and responses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportBundle {
    pub manifest: Manifest,
    pub responses: Vec<ResponseRecord>,
}

/// The model and device part of a manifest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelInfo {
    pub model_name: String,
    pub architecture: String,
    pub weight_sha256: String,
    pub tokenizer: String,
    pub backend: String,
    pub adapter: String,
}

/// Hex SHA-256 of some bytes (the weights' fingerprint in the manifest).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Manifest {
    pub fn new(
        model: &ModelInfo,
        study: &StudyConfig,
        plan: &Plan,
        sampling_seed: u64,
        exported_at: &str,
    ) -> Self {
        Self {
            app: "clozelab".into(),
            app_version: env!("CARGO_PKG_VERSION").into(),
            model_name: model.model_name.clone(),
            architecture: model.architecture.clone(),
            weight_sha256: model.weight_sha256.clone(),
            tokenizer: model.tokenizer.clone(),
            backend: model.backend.clone(),
            adapter: model.adapter.clone(),
            participant: plan.participant.clone(),
            study_id: plan.study_id.clone(),
            run: plan.run.clone(),
            order_seed: plan.order_seed,
            sampling_seed,
            study: study.clone(),
            url_ids: plan.url_ids.clone(),
            exported_at: exported_at.into(),
            planned_answers: (study.game == GameKind::NextWord).then(|| {
                plan.items
                    .iter()
                    .map(|(p, _)| p.words().len().saturating_sub(1))
                    .sum()
            }),
            list: plan.list.clone(),
            pilot: study.preview,
            attention_checks: Vec::new(),
            questions: Vec::new(),
            screened_out: false,
            consent_at: None,
            device: None,
            worker_type: study
                .jatos
                .as_ref()
                .and_then(|run| run.ids.get("workerType").cloned()),
        }
    }

    /// The same manifest with what the page knows of the run (see [`RunDetails`]); screened
    /// out when an answer screened the participant out.
    pub fn with_details(mut self, details: RunDetails) -> Self {
        self.screened_out = details.questions.iter().any(|a| a.screened_out);
        self.consent_at = details.consent_at;
        self.device = details.device;
        self.questions = details.questions;
        self.attention_checks = details.attention;
        self
    }

    /// The same manifest with the participant's attention-check answers.
    pub fn with_attention(
        mut self,
        results: Vec<crate::game::design::attention::AttentionResult>,
    ) -> Self {
        self.attention_checks = results;
        self
    }

    /// The same manifest with the number of answers planned (the next-token games' schedule).
    pub fn with_planned_answers(mut self, planned: usize) -> Self {
        self.planned_answers = Some(planned);
        self
    }
}

/// The Provo-compatible aggregate (Text_ID, Text, Word_Number, Word, Response, Response_Count),
/// one row per context and distinct normalised response.
pub fn provo_aggregate_csv(
    records: &[ResponseRecord],
    passages: &[Passage],
    delimiter: Delimiter,
) -> String {
    let by_id: BTreeMap<&str, &Passage> = passages.iter().map(|p| (p.id.as_str(), p)).collect();
    let mut humans = HumanCounts::default();
    humans.add_responses(records);
    let rows = humans
        .contexts()
        .flat_map(|((passage, position), responses)| {
            let p = by_id.get(passage.as_str());
            let text = p.map(|p| p.text.clone()).unwrap_or_default();
            let word = p
                .and_then(|p| {
                    p.words()
                        .get((*position as usize).wrapping_sub(1))
                        .map(|w| w.to_string())
                })
                .unwrap_or_default();
            responses.iter().map(move |(resp, n)| {
                vec![
                    passage.clone(),
                    text.clone(),
                    position.to_string(),
                    word.clone(),
                    resp.clone(),
                    n.to_string(),
                ]
            })
        })
        .collect::<Vec<_>>();
    write_delimited(&PROVO_COLUMNS, rows.into_iter(), delimiter)
}

/// An id cut to characters safe in a file name (ASCII letters, digits, `-`, `_`; 40 at most).
pub fn file_safe(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(40)
        .collect()
}

/// What "Your data" offers to download.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportKind {
    /// One row per response (CSV).
    LongCsv,
    /// Provo-format counts per context (CSV).
    ProvoCsv,
    /// Everything: the manifest and every response (JSON).
    Bundle,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ExportError {
    #[error("nothing to export yet")]
    NothingYet,
    #[error("the export could not be written: {0}")]
    Serialize(String),
}

impl ExportKind {
    /// `clozelab-<participant>-long.csv` and so on; the id is cut to safe characters.
    pub fn file_name(self, participant: &str) -> String {
        let safe = file_safe(participant);
        match self {
            ExportKind::LongCsv => format!("clozelab-{safe}-long.csv"),
            ExportKind::ProvoCsv => format!("clozelab-{safe}-provo.csv"),
            ExportKind::Bundle => format!("clozelab-{safe}.json"),
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            ExportKind::Bundle => "application/json",
            _ => "text/csv",
        }
    }

    /// The file's text. The bundle needs the manifest (there is none before a session starts);
    /// a serialisation failure is an error, never an empty file.
    pub fn render(
        self,
        records: &[ResponseRecord],
        passages: &[Passage],
        manifest: Option<&Manifest>,
    ) -> Result<String, ExportError> {
        match self {
            ExportKind::LongCsv => Ok(crate::data::export_long_csv(records, Delimiter::Comma)),
            ExportKind::ProvoCsv => Ok(provo_aggregate_csv(records, passages, Delimiter::Comma)),
            ExportKind::Bundle => {
                let manifest = manifest.ok_or(ExportError::NothingYet)?.clone();
                serde_json::to_string_pretty(&ExportBundle {
                    manifest,
                    responses: records.to_vec(),
                })
                .map_err(|e| ExportError::Serialize(e.to_string()))
            }
        }
    }
}

/// Reads a JSON export (bundle with manifest, or a bare array of responses).
pub fn import_bundle(file: &str, text: &str) -> Result<Vec<ResponseRecord>, DataError> {
    crate::data::import_long_json(file, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(p: &str, passage: &str, pos: u32, resp: &str, practice: bool) -> ResponseRecord {
        ResponseRecord {
            participant: p.into(),
            passage: passage.into(),
            position: pos,
            response: resp.into(),
            response_time_ms: Some(1.0),
            timestamp: "t".into(),
            normalized: crate::text::words::normalize(resp),
            first_keystroke_ms: None,
            practice,
            run: String::new(),
        }
    }

    #[test]
    fn aggregate_counts_each_trial_once_and_skips_practice() {
        let a = vec![
            rec("p1", "x", 2, "Cat", false),
            rec("p1", "x", 3, "sat", false),
            rec("p1", "g", 2, "a", true),
        ];
        let b = vec![
            rec("p2", "x", 2, "cat", false),
            rec("p1", "x", 2, "Cat", false),
        ];
        let mut m = HumanCounts::default();
        m.add_responses(a.iter().chain(&b));
        assert_eq!(m.counts("x", 2).unwrap()["cat"], 2);
        assert!(m.counts("g", 2).is_none());
        let passages = vec![Passage {
            id: "x".into(),
            title: "X".into(),
            text: "The cat sat".into(),
            genre: String::new(),
        }];
        let csv = provo_aggregate_csv(&a, &passages, Delimiter::Comma);
        assert_eq!(csv.lines().nth(1), Some("x,The cat sat,2,cat,cat,1"));
        let (norms_like, _) = crate::data::parse_delimited("agg.csv", &csv, Delimiter::Comma)
            .map(|r| (r, ()))
            .unwrap();
        assert_eq!(norms_like.len(), 3, "header + 2 rows");
    }

    #[test]
    fn export_kinds_name_and_render_their_files() {
        assert_eq!(
            ExportKind::LongCsv.file_name("a/b<c>"),
            "clozelab-abc-long.csv"
        );
        assert_eq!(ExportKind::Bundle.mime(), "application/json");
        let records = vec![rec("p1", "x", 2, "Cat", false)];
        assert_eq!(
            ExportKind::Bundle.render(&records, &[], None),
            Err(ExportError::NothingYet)
        );
        let study = StudyConfig::default_play();
        let plan = study.plan("p1", &BTreeMap::new()).unwrap();
        let manifest = Manifest::new(&ModelInfo::default(), &study, &plan, 0, "now");
        let json = ExportKind::Bundle
            .render(&records, &[], Some(&manifest))
            .unwrap();
        assert_eq!(import_bundle("b.json", &json).unwrap(), records);
        let csv = ExportKind::LongCsv.render(&records, &[], None).unwrap();
        assert_eq!(
            crate::data::import_long_csv("l.csv", &csv).unwrap(),
            records
        );
    }

    #[test]
    fn bundle_round_trip_and_hash() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let study = StudyConfig::default_play();
        let plan = study.plan("p1", &BTreeMap::new()).unwrap();
        let bundle = ExportBundle {
            manifest: Manifest::new(&ModelInfo::default(), &study, &plan, 3, "now"),
            responses: vec![rec("p1", "x", 2, "<img src=x onerror=alert(1)>", false)],
        };
        let text = serde_json::to_string(&bundle).unwrap();
        assert_eq!(import_bundle("b.json", &text).unwrap(), bundle.responses);
        assert!(import_bundle("b.json", "{nope").is_err());
    }
}
