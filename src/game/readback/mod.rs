//! Results read back, one pipeline: what a dropped file is ([`imports`]); exports and JATOS's
//! archives read ([`results`]), merged into runs ([`results_merge`]) with what JATOS's export says
//! of its runs ([`jatos_export`]); the researcher's exclusions ([`exclusions`]); the Analysis
//! page's and the CLI's dataset ([`results_dataset`]); and the tables for the paper: the trial
//! table ([`trial_table`]) with its codebook ([`codebook`]), the participant flow
//! ([`participant_flow`]) and the study's own norms ([`study_norms`]); adaptive norming's state
//! from the results so far ([`norming_progress`]).

pub mod codebook;
pub mod exclusions;
pub mod imports;
pub mod jatos_export;
pub mod model_columns;
pub mod norming_progress;
pub mod participant_flow;
pub mod results;
pub mod results_dataset;
pub mod results_merge;
pub mod study_norms;
pub mod trial_table;
