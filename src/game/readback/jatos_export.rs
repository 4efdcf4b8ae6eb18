//! What JATOS's results export says of its runs: `metadata.json` (each study result's state
//! and the study link's URL parameters) and the archive's folder names
//! (`study_result_<id>/comp-result_<id>/data.txt`), read by the results reader
//! ([`super::results`]).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum JatosExportError {
    #[error("{file}: JATOS's metadata.json is not what JATOS writes ({message})")]
    Metadata { file: String, message: String },
}

/// Whether a JSON value is JATOS's `metadata.json`.
pub fn is_jatos_metadata(value: &Value) -> bool {
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
    /// JATOS's worker type (`Jatos` for a test run from its GUI), where the export says.
    pub worker_type: Option<String>,
}

/// The runs in JATOS's `metadata.json` (`{"data": [{"studyResults": [{"id", "studyState",
/// "urlQueryParameters", …}]}]}`).
pub fn parse_jatos_metadata(
    file: &str,
    text: &str,
) -> Result<Vec<JatosStudyRun>, JatosExportError> {
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
        #[serde(default)]
        worker_type: Option<String>,
    }
    let metadata: Metadata =
        serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| {
            JatosExportError::Metadata {
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
            worker_type: r.worker_type,
        })
        .collect())
}

/// The JATOS study result a file belongs to, from its path in the archive
/// (`…/study_result_<id>/comp-result_<id>/data.txt`).
///
/// ```
/// use clozelab::game::readback::jatos_export::study_result_id;
/// assert_eq!(study_result_id("r.zip/study_result_12/comp-result_40/data.txt"), Some(12));
/// assert_eq!(study_result_id("bundle.json"), None);
/// ```
pub fn study_result_id(path: &str) -> Option<u64> {
    path.split('/')
        .find_map(|part| part.strip_prefix("study_result_")?.parse().ok())
}
