//! Importing and exporting cloze data, one file per format: delimited text ([`delimited`]),
//! the Provo norms as released on OSF ([`osf_norms`]), the project's long format, one row per
//! response ([`long_format`]), the Provo files of ../shared/provo ([`provo`]), participants'
//! states in a study's results ([`participant_run`]), what a web host's answer for a file is
//! ([`served_file`]), the browser's timestamps ([`rfc3339`]), typed rows of any of them through
//! serde ([`rows`]); a corpus of texts ([`corpus`]), the predictors table ([`predictor_table`]),
//! a batch job's parts ([`shard`]) and the manifest each part carries and the merge checks
//! ([`job_manifest`]). Errors name file,
//! line and column, and skipped rows are counted with their reason — nothing is dropped
//! silently.

pub mod corpus;
pub mod delimited;
pub mod job_manifest;
pub mod long_format;
pub mod osf_norms;
pub mod participant_run;
pub mod predictor_table;
pub mod provo;
pub mod rfc3339;
pub mod rows;
pub mod served_file;
pub mod shard;

pub use delimited::{
    Delimiter, parse_delimited, quote_field, spreadsheet_safe_cell, spreadsheet_safe_csv,
    write_delimited,
};
pub use long_format::{
    ResponseRecord, export_long_csv, export_long_json, import_long_csv, import_long_json,
};
pub use osf_norms::{ClozeNorms, PROVO_COLUMNS, import_provo_norms};

use serde::Serialize;

/// Where and why an import failed.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DataError {
    #[error("{file}: line {line}, column {column}: {message}")]
    At {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{file}: missing column {column:?} (found: {found})")]
    MissingColumn {
        file: String,
        column: &'static str,
        found: String,
    },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

/// A row that was read but not used, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkippedRow {
    pub line: usize,
    pub reason: String,
}
