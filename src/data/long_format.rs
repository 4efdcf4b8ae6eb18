//! The project's long format: one row per response (CSV/TSV or JSON), the export every game
//! writes and the Analysis page reads.

use serde::{Deserialize, Serialize};

use super::DataError;
use super::delimited::{Delimiter, Record, cell, number, read_table, write_delimited};

/// One response in the long format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseRecord {
    pub participant: String,
    pub passage: String,
    pub position: u32,
    /// The response as typed (trimmed).
    pub response: String,
    /// Milliseconds from the context being shown to submitting; `None` when unknown.
    pub response_time_ms: Option<f64>,
    /// RFC 3339 time of the response.
    pub timestamp: String,
    /// The response normalised as in [`crate::text::words::normalize`] (filled in on import when absent).
    #[serde(default)]
    pub normalized: String,
    /// Milliseconds from the context being shown to the first keystroke.
    #[serde(default)]
    pub first_keystroke_ms: Option<f64>,
    /// A practice trial (kept in the long format, left out of aggregates).
    #[serde(default)]
    pub practice: bool,
    /// The run the answer was given in (see `game::run_scope`); empty in exports made before
    /// runs were kept.
    #[serde(default)]
    pub run: String,
}

const LONG_COLUMNS: [&str; 6] = [
    "participant",
    "passage",
    "position",
    "response",
    "response_time_ms",
    "timestamp",
];
/// Columns clozelab writes after the six required ones; optional on import.
const LONG_OPTIONAL_COLUMNS: [&str; 4] = ["normalized", "first_keystroke_ms", "practice", "run"];

/// Imports the long format from CSV or TSV.
pub fn import_long_csv(file: &str, text: &str) -> Result<Vec<ResponseRecord>, DataError> {
    let (cols, rows) = read_table(file, text)?;
    let idx: Vec<usize> = LONG_COLUMNS
        .iter()
        .map(|c| cols.find(file, c))
        .collect::<Result<_, _>>()?;
    let optional: Vec<Option<usize>> = LONG_OPTIONAL_COLUMNS
        .iter()
        .map(|c| cols.find(file, c).ok())
        .collect();
    let optional_ms =
        |r: &Record, i: Option<usize>, what: &str| -> Result<Option<f64>, DataError> {
            match i {
                Some(i) if !cell(file, r, i)?.is_empty() => Ok(Some(number(file, r, i, what)?)),
                _ => Ok(None),
            }
        };
    rows.iter()
        .map(|r| {
            let response = r.1.get(idx[3]).cloned().unwrap_or_default();
            let normalized = match optional[0] {
                Some(i) if !cell(file, r, i)?.is_empty() => cell(file, r, i)?.to_string(),
                _ => crate::text::words::normalize(&response),
            };
            Ok(ResponseRecord {
                participant: cell(file, r, idx[0])?.to_string(),
                passage: cell(file, r, idx[1])?.to_string(),
                position: number(file, r, idx[2], "position")?,
                response,
                response_time_ms: optional_ms(r, Some(idx[4]), "response_time_ms")?,
                timestamp: cell(file, r, idx[5])?.to_string(),
                normalized,
                first_keystroke_ms: optional_ms(r, optional[1], "first_keystroke_ms")?,
                practice: match optional[2] {
                    Some(i) => matches!(cell(file, r, i)?, "true" | "1" | "TRUE"),
                    None => false,
                },
                run: match optional[3] {
                    Some(i) => cell(file, r, i)?.to_string(),
                    None => String::new(),
                },
            })
        })
        .collect()
}

/// Exports the long format as CSV (or TSV).
pub fn export_long_csv(records: &[ResponseRecord], delimiter: Delimiter) -> String {
    let rows = records.iter().map(|r| {
        vec![
            r.participant.clone(),
            r.passage.clone(),
            r.position.to_string(),
            r.response.clone(),
            r.response_time_ms
                .map(|t| t.to_string())
                .unwrap_or_default(),
            r.timestamp.clone(),
            r.normalized.clone(),
            r.first_keystroke_ms
                .map(|t| t.to_string())
                .unwrap_or_default(),
            r.practice.to_string(),
            r.run.clone(),
        ]
    });
    let header: Vec<&str> = LONG_COLUMNS
        .iter()
        .chain(&LONG_OPTIONAL_COLUMNS)
        .copied()
        .collect();
    write_delimited(&header, rows, delimiter)
}

/// Imports the long format from JSON: an array of records, or any object holding them under
/// `responses` (an export bundle: its manifest is not needed to read the answers). A missing
/// `normalized` is filled in as the CSV import does.
pub fn import_long_json(file: &str, text: &str) -> Result<Vec<ResponseRecord>, DataError> {
    #[derive(Deserialize)]
    struct Bundle {
        responses: Vec<ResponseRecord>,
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let at = |e: serde_json::Error| DataError::At {
        file: file.into(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    };
    let mut records = if text.trim_start().starts_with('{') {
        serde_json::from_str::<Bundle>(text).map_err(at)?.responses
    } else {
        serde_json::from_str::<Vec<ResponseRecord>>(text).map_err(at)?
    };
    for r in &mut records {
        if r.normalized.is_empty() {
            r.normalized = crate::text::words::normalize(&r.response);
        }
    }
    Ok(records)
}

/// Exports the long format as pretty JSON.
pub fn export_long_json(records: &[ResponseRecord]) -> String {
    serde_json::to_string_pretty(records).unwrap_or_else(|_| "[]".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::delimited::{FORMULA_STARTS, parse_delimited, spreadsheet_safe_csv};

    #[test]
    fn formulas_stay_exact_by_default_and_inert_in_the_spreadsheet_variant() {
        let hostile = [
            "=HYPERLINK(\"http://evil\",\"x\")",
            "+1",
            "-2+3",
            "@SUM(A1)",
            "\tx",
            "\r=1",
            "plain",
            "a=b",
        ];
        let records: Vec<ResponseRecord> = hostile
            .iter()
            .enumerate()
            .map(|(i, r)| ResponseRecord {
                participant: "=cmd|' /C calc'!A0".into(),
                passage: "1".into(),
                position: i as u32 + 2,
                response: r.to_string(),
                response_time_ms: None,
                timestamp: "t".into(),
                normalized: crate::text::words::normalize(r),
                first_keystroke_ms: None,
                practice: false,
                run: "local-1".into(),
            })
            .collect();
        for delimiter in [Delimiter::Comma, Delimiter::Tab] {
            let exact = export_long_csv(&records, delimiter);
            assert_eq!(
                import_long_csv("e.csv", &exact).unwrap(),
                records,
                "exact round trip"
            );
            let safe = spreadsheet_safe_csv("e.csv", &exact).unwrap();
            let rows = parse_delimited("s.csv", &safe, delimiter).unwrap();
            assert_eq!(
                rows[0].1,
                parse_delimited("e.csv", &exact, delimiter).unwrap()[0].1
            );
            for ((_, cells), original) in rows[1..].iter().zip(&records) {
                assert_eq!(cells[0], "'=cmd|' /C calc'!A0");
                let expected = if original.response.starts_with(FORMULA_STARTS) {
                    format!("'{}", original.response)
                } else {
                    original.response.clone()
                };
                assert_eq!(cells[3], expected);
                assert!(
                    cells.iter().all(|c| !c.starts_with(FORMULA_STARTS)),
                    "{cells:?}"
                );
            }
        }
        assert!(
            spreadsheet_safe_csv("bad.csv", "a,\"b\n")
                .unwrap_err()
                .to_string()
                .contains("bad.csv")
        );
    }
}
