//! Everything the Analysis page shows for a dataset, computed in one go in the worker and sent
//! to the page as one message.

use super::dataset::Dataset;
use super::figures::{Figure, all};
use super::metrics::EceConvention;
use super::table1::{PerContext, Row, table1_csv};
use crate::data::provo::ContextKey;

/// Everything the Analysis page shows for a dataset, computed in one go (in the worker).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Analysis {
    pub rows: Vec<Row>,
    pub figures: Vec<Figure>,
    pub table1_csv: String,
    /// The systems compared (for the per-context figure).
    pub systems: Vec<String>,
    /// Every context: its key and its text (to search, and for the model to continue).
    pub contexts: Vec<(ContextKey, String)>,
    /// Participants of the app's exports in the data (for the participant panel).
    pub participants: Vec<String>,
    /// Participants of imported study results, each with their state.
    #[serde(default)]
    pub participant_runs: Vec<crate::data::participant_run::ParticipantRun>,
    /// What was left out of the data and why.
    pub notes: Vec<String>,
    /// How many runs of a study's results were left out, by reason (under Table 1 and the
    /// figures).
    #[serde(default)]
    pub left_out: Option<String>,
    /// The study's tables to download: (file name, CSV).
    #[serde(default)]
    pub downloads: Vec<(String, String)>,
    /// The study's participant flow as a figure (with study results only).
    #[serde(default)]
    pub flow: Option<super::figures::Figure>,
    /// Each study with adaptive norming: how far it is from its target.
    #[serde(default)]
    pub norming: Vec<super::norming::progress::NormingProgress>,
}

impl Analysis {
    /// Computes Table 1 and every dataset-wide figure.
    pub fn compute(
        data: &Dataset,
        options: &super::table1::Table1Options,
    ) -> Result<Self, super::table1::Table1Error> {
        let (rows, per_context) = super::table1::compute_on(data, options)?;
        Ok(Self::from_table(data, rows, &per_context, options.ece))
    }

    /// From Table 1 already computed on `data` (its rows and per-context figures).
    pub fn from_table(
        data: &Dataset,
        rows: Vec<Row>,
        per_context: &[PerContext],
        convention: EceConvention,
    ) -> Self {
        let mut figures = all(&rows, per_context, convention);
        figures.extend(super::figures::norming::precision(
            &data.norms,
            &super::figures::norming::default_target(),
        ));
        Self {
            figures,
            table1_csv: table1_csv(&rows),
            rows,
            systems: data.systems.iter().map(|s| s.0.clone()).collect(),
            contexts: data
                .norms
                .iter()
                .map(|c| (c.key(), c.context.clone()))
                .collect(),
            participants: data.participants.keys().cloned().collect(),
            participant_runs: data.runs.clone(),
            notes: data.notes.clone(),
            left_out: None,
            downloads: Vec::new(),
            flow: None,
            norming: Vec::new(),
        }
    }
}
