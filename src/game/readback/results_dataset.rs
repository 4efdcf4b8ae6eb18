//! A study's results as the Analysis page's and the CLI's dataset: the results among the
//! files a user gives are merged ([`StudyResults::read`]), the runs the researcher's rules
//! leave out ([`ExclusionRules`]) are left out and listed, and the rest of the files are read
//! as norms and samples. [`StudyData::tables`] then makes the study's trial table.

use super::exclusions::{Exclusion, ExclusionRules, decide, left_out_sentence};
use super::results::{ResultsError, StudyResults, is_study_answers};
use super::trial_table::{StudyTables, study_tables};
use crate::analysis::dataset::{Dataset, DatasetError};
use crate::analysis::passage_texts::PassageTexts;

/// Why the Analysis page's files could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisFilesError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Dataset(#[from] DatasetError),
}

/// The dataset, and the study's results it came from (every run, before exclusions).
#[derive(Debug)]
pub struct StudyData {
    pub data: Dataset,
    /// The results read, every run kept, and the runs left out; `None` when the files held
    /// no study results.
    pub results: Option<(StudyResults, Vec<Exclusion>)>,
    /// The texts answers were placed by: each study's own, and the shared ones.
    pub texts: PassageTexts,
}

impl StudyData {
    /// The trial table, codebook and exclusions of the results (with the model's
    /// probabilities from the dataset's systems as they are now); `None` without results.
    pub fn tables(&self) -> Option<StudyTables> {
        let (results, exclusions) = self.results.as_ref()?;
        Some(study_tables(results, exclusions, &self.data, &self.texts))
    }

    /// One sentence on who was left out (for Table 1 and the figures), if anyone was.
    pub fn left_out(&self) -> Option<String> {
        self.results
            .as_ref()
            .and_then(|(_, exclusions)| left_out_sentence(exclusions))
    }
}

/// The dataset of the Analysis page and the CLI from texts as a user gives them: study results
/// (see [`StudyResults::read`]) are merged first, each participant's answers once, their
/// states kept in [`Dataset::runs`]; the runs `rules` leave out (and flagged runs, always) are
/// left out of the analyses, and the notes count them; everything else is read by
/// [`Dataset::from_files`]. Each run's answers are placed on the texts its own study gave
/// (the config in its bundles), else on `shared` passages (the app's built-ins: (id, text)).
pub fn dataset_from_files(
    files: &[(String, String)],
    shared: &[(String, String)],
    rules: ExclusionRules,
) -> Result<StudyData, AnalysisFilesError> {
    let (results, mut others): (Vec<_>, Vec<_>) = files
        .iter()
        .cloned()
        .partition(|(_, text)| is_study_answers(text));
    // Other files of an archive that holds results (a README, uploads) are not norms.
    let archives: Vec<&str> = results
        .iter()
        .filter_map(|(name, _)| archive_of(name))
        .collect();
    let mut foreign = Vec::new();
    others.retain(|(name, _)| {
        let inside = archive_of(name).is_some_and(|a| archives.contains(&a));
        if inside {
            foreign.push(format!(
                "{name}: in the results archive, but not study results: left out"
            ));
        }
        !inside
    });
    let mut texts = PassageTexts::shared(shared);
    if results.is_empty() {
        return Ok(StudyData {
            data: Dataset::from_files(&others, &texts, &[])?,
            results: None,
            texts,
        });
    }
    let read = StudyResults::read(
        results
            .into_iter()
            .map(|(name, text)| (name, text.into_bytes()))
            .collect(),
    )?;
    let exclusions = decide(&read.participants, &rules);
    let mut kept = read.clone();
    kept.without(&exclusions);
    // Each study's own passages, and which study each run belongs to.
    for (study_id, config) in &read.studies {
        texts.add_study(
            study_id,
            config.texts.iter().map(|p| (p.id.clone(), p.text.clone())),
        );
    }
    for run in &read.participants {
        texts.add_run(&run.participant, &run.run, &run.study_id);
    }
    // Results whose every answer is left out still make their tables.
    let mut data = match Dataset::from_files(&others, &texts, &kept.responses) {
        Err(DatasetError::NoNorms) => Dataset::default(),
        other => other?,
    };
    data.notes
        .push(format!("Study results: {}", read.summary()));
    data.notes.extend(left_out_sentence(&exclusions));
    data.notes.extend(read.warnings.iter().cloned());
    data.notes.extend(read.skipped.iter().cloned());
    data.notes.extend(foreign);
    data.notes.extend(texts.clashes());
    data.runs = read.participants.clone();
    Ok(StudyData {
        data,
        results: Some((read, exclusions)),
        texts,
    })
}

/// The archive a file came out of (`results.zip` of `results.zip/study_result_1/data.txt`).
fn archive_of(name: &str) -> Option<&str> {
    [".zip/", ".jrzip/"]
        .iter()
        .filter_map(|ext| name.find(ext).map(|i| &name[..i + ext.len() - 1]))
        .min_by_key(|a| a.len())
}
