//! Typed rows from CSV, TSV, JSON Lines or a JSON array, one serde struct per row; every error
//! names the file and line. Extra columns or fields are ignored, so exports with more columns
//! than a reader needs can be read directly.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::DataError;
use super::delimited::{Delimiter, check_quotes};

fn at(file: &str, line: usize, column: usize, message: impl ToString) -> DataError {
    DataError::At {
        file: file.into(),
        line,
        column,
        message: message.to_string(),
    }
}

/// Reads rows of `T` with their line numbers: a JSON array (`[`), JSON Lines (`{` first), or
/// CSV/TSV with a header (the delimiter sniffed from the first line).
///
/// ```
/// #[derive(Debug, serde::Deserialize)]
/// struct Row { context: String, p_true: f64 }
/// let csv = "context,p_true,extra\nThe cat,0.9,x\n";
/// let rows = clozelab::data::rows::read_rows::<Row>("a.csv", csv).unwrap();
/// assert_eq!((rows[0].0, rows[0].1.p_true), (2, 0.9));
/// let bad = "{\"context\": \"x\"}\n";
/// let err = clozelab::data::rows::read_rows::<Row>("a.jsonl", bad).unwrap_err();
/// assert!(err.to_string().starts_with("a.jsonl: line 1"));
/// ```
pub fn read_rows<T: DeserializeOwned>(
    file: &str,
    text: &str,
) -> Result<Vec<(usize, T)>, DataError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let start = text.trim_start();
    if start.starts_with('[') {
        let rows: Vec<T> =
            serde_json::from_str(text).map_err(|e| at(file, e.line(), e.column(), &e))?;
        // A JSON array has no line per row: rows are numbered from 1.
        return Ok(rows
            .into_iter()
            .enumerate()
            .map(|(i, r)| (i + 1, r))
            .collect());
    }
    if start.starts_with('{') {
        let mut rows = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let row = serde_json::from_str(line).map_err(|e| at(file, i + 1, e.column(), &e))?;
            rows.push((i + 1, row));
        }
        return Ok(rows);
    }
    let delimiter = Delimiter::sniff(text);
    check_quotes(file, text, delimiter)?;
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter.byte())
        .from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| at(file, 1, 1, e))?.clone();
    if headers.iter().all(str::is_empty) {
        return Err(DataError::Invalid {
            file: file.into(),
            message: "the file is empty".into(),
        });
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            at(file, line, 1, e)
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        if record.iter().all(str::is_empty) {
            continue;
        }
        let row = record
            .deserialize(Some(&headers))
            .map_err(|e| match e.kind() {
                // Named by column, without csv's own position prefix (ours names file and line).
                csv::ErrorKind::Deserialize { err, .. } => {
                    let column = err.field().map_or(1, |f| f as usize + 1);
                    let name = err
                        .field()
                        .and_then(|f| headers.get(f as usize))
                        .unwrap_or("?");
                    let message = match err.kind() {
                        csv::DeserializeErrorKind::Message(m) => m.clone(),
                        other => other.to_string(),
                    };
                    at(file, line, column, format!("column {name:?}: {message}"))
                }
                _ => at(file, line, 1, e),
            })?;
        rows.push((line, row));
    }
    Ok(rows)
}

/// Writes rows as CSV with a header from the struct's field names.
pub fn write_csv<T: Serialize>(file: &str, rows: &[T]) -> Result<String, DataError> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row).map_err(|e| DataError::Invalid {
            file: file.into(),
            message: e.to_string(),
        })?;
    }
    let bytes = writer.into_inner().map_err(|e| DataError::Invalid {
        file: file.into(),
        message: e.to_string(),
    })?;
    String::from_utf8(bytes).map_err(|e| DataError::Invalid {
        file: file.into(),
        message: e.to_string(),
    })
}
