//! A study's results as the Analysis page's and the CLI's dataset: the results among the
//! files a user gives are merged ([`StudyResults::read`]), whoever the analysis leaves out
//! ([`Exclusions`]) is left out, and the rest of the files are read as norms and samples.

use serde::{Deserialize, Serialize};

use super::results::{ResultsError, StudyResults, is_results_text};
use crate::analysis::dataset::{Dataset, DatasetError};
use crate::data::participant_run::RunState;

/// Whose answers the analyses leave out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exclusions {
    /// Participants who did not complete (and pilots).
    pub incomplete: bool,
    /// Participants who failed an attention check.
    pub failed_attention: bool,
}

/// Why the Analysis page's files could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisFilesError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Dataset(#[from] DatasetError),
}

/// The dataset of the Analysis page and the CLI from texts as a user gives them: study results
/// (see [`StudyResults::read`]) are merged first, each participant's answers once, their
/// states kept in [`Dataset::runs`] (`exclude` leaves out the answers of participants who did
/// not complete, or who failed an attention check, and the notes count them); everything else
/// is read by [`Dataset::from_files`].
pub fn dataset_from_files(
    files: &[(String, String)],
    passages: &[(String, String)],
    exclude: Exclusions,
) -> Result<Dataset, AnalysisFilesError> {
    let (results, others): (Vec<_>, Vec<_>) = files
        .iter()
        .cloned()
        .partition(|(_, text)| is_results_text(text));
    if results.is_empty() {
        return Ok(Dataset::from_files(&others, passages, &[])?);
    }
    let mut read = StudyResults::read(
        results
            .into_iter()
            .map(|(name, text)| (name, text.into_bytes()))
            .collect(),
    )?;
    let summary = read.summary();
    let others_left_out = read
        .participants
        .iter()
        .filter(|p| p.state != RunState::Complete || p.pilot || !p.warnings.is_empty())
        .count();
    read.without_flagged();
    let failed_attention = read
        .participants
        .iter()
        .filter(|p| p.attention_failed > 0)
        .count();
    if exclude.incomplete {
        read.only(&[RunState::Complete]);
    }
    if exclude.failed_attention {
        read.without_failed_attention();
    }
    // The studies' own passages make their contexts known too.
    let mut passages = passages.to_vec();
    for own in &read.passages {
        if !passages.iter().any(|(id, _)| *id == own.id) {
            passages.push((own.id.clone(), own.text.clone()));
        }
    }
    let mut data = Dataset::from_files(&others, &passages, &read.responses)?;
    data.notes.push(format!("Study results: {summary}"));
    if exclude.incomplete && others_left_out > 0 {
        data.notes.push(format!(
            "Only complete participants: {others_left_out} others left out"
        ));
    }
    if exclude.failed_attention && failed_attention > 0 {
        let who = if failed_attention == 1 {
            "participant who failed an attention check"
        } else {
            "participants who failed an attention check"
        };
        data.notes
            .push(format!("{failed_attention} {who} left out"));
    }
    data.notes.extend(read.warnings.iter().cloned());
    data.notes.extend(read.skipped.iter().cloned());
    data.runs = read.participants;
    Ok(data)
}
