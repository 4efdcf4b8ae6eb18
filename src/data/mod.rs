//! Importing and exporting cloze data: the Provo norms as released on OSF (CSV/TSV), the
//! project's long format (one row per response, CSV or JSON), with errors that name file, line
//! and column, and skipped rows counted with their reason — nothing is dropped silently.

pub mod provo;
pub mod rows;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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

/// The columns of the Provo norms as released on OSF (and of the game's Provo-format export).
pub const PROVO_COLUMNS: [&str; 6] = [
    "Text_ID",
    "Text",
    "Word_Number",
    "Word",
    "Response",
    "Response_Count",
];

/// A row that was read but not used, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkippedRow {
    pub line: usize,
    pub reason: String,
}

/// Field separator of a delimited file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Delimiter {
    Comma,
    Tab,
}

impl Delimiter {
    pub fn char(self) -> char {
        match self {
            Delimiter::Comma => ',',
            Delimiter::Tab => '\t',
        }
    }

    /// Tab when the header line holds more tabs than commas; else comma.
    pub fn sniff(text: &str) -> Self {
        let header = text.lines().next().unwrap_or("");
        if header.matches('\t').count() > header.matches(',').count() {
            Delimiter::Tab
        } else {
            Delimiter::Comma
        }
    }
}

/// One parsed record: its 1-based starting line and its fields.
type Record = (usize, Vec<String>);

impl Delimiter {
    fn byte(self) -> u8 {
        self.char() as u8
    }
}

/// Parses RFC 4180 delimited text (quotes, doubled quotes, line breaks inside quotes), LF or
/// CRLF, with or without a UTF-8 BOM, through the `csv` crate. Blank lines are skipped.
///
/// `csv` reads stray and unclosed quotes leniently (as text); [`check_quotes`] first turns
/// them into errors with their line and column, so a broken file is never half-read.
pub fn parse_delimited(
    file: &str,
    text: &str,
    delimiter: Delimiter,
) -> Result<Vec<Record>, DataError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    check_quotes(file, text, delimiter)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter.byte())
        .from_reader(text.as_bytes());
    let mut records = Vec::new();
    for result in reader.records() {
        let record = result.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            DataError::At {
                file: file.into(),
                line,
                column: 1,
                message: e.to_string(),
            }
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let fields: Vec<String> = record.iter().map(str::to_string).collect();
        if !(fields.len() == 1 && fields[0].is_empty()) {
            records.push((line, fields));
        }
    }
    Ok(records)
}

/// Rejects what the `csv` crate would read leniently: a quote inside an unquoted field,
/// anything but a delimiter or line end after a closing quote, and a quote never closed.
pub(crate) fn check_quotes(file: &str, text: &str, delimiter: Delimiter) -> Result<(), DataError> {
    let sep = delimiter.char();
    let at = |line, column, message: String| DataError::At {
        file: file.into(),
        line,
        column,
        message,
    };
    let (mut line, mut column) = (1usize, 0usize);
    let mut quoted: Option<(usize, usize)> = None;
    let mut field_start = true;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        column += 1;
        if quoted.is_some() {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    column += 1;
                }
                '"' => {
                    quoted = None;
                    field_start = false;
                    if let Some(&next) = chars.peek()
                        && next != sep
                        && next != '\n'
                        && next != '\r'
                    {
                        return Err(at(
                            line,
                            column + 1,
                            format!("unexpected {next:?} after a closing quote"),
                        ));
                    }
                }
                '\n' => (line, column) = (line + 1, 0),
                _ => {}
            }
            continue;
        }
        match c {
            '"' if field_start => quoted = Some((line, column)),
            '"' => return Err(at(line, column, "quote inside an unquoted field".into())),
            '\n' => {
                (line, column) = (line + 1, 0);
                field_start = true;
            }
            c if c == sep || c == '\r' => field_start = true,
            _ => field_start = false,
        }
    }
    match quoted {
        Some((line, column)) => Err(at(line, column, "quote never closed".into())),
        None => Ok(()),
    }
}

/// Characters that make a spreadsheet read a cell as a formula (OWASP's CSV-injection list).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A cell a spreadsheet will show as text: one starting with `=`, `+`, `-`, `@`, a tab or a
/// carriage return gets a leading `'`, which Excel, LibreOffice and Google Sheets read as
/// "text follows" (and hide).
///
/// ```
/// use clozelab::data::spreadsheet_safe_cell;
/// assert_eq!(spreadsheet_safe_cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
/// assert_eq!(spreadsheet_safe_cell("cat"), "cat");
/// ```
pub fn spreadsheet_safe_cell(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell.starts_with(FORMULA_STARTS) {
        format!("'{cell}").into()
    } else {
        cell.into()
    }
}

/// The spreadsheet-safe variant of a CSV/TSV export: every cell through
/// [`spreadsheet_safe_cell`]. For opening in a spreadsheet only — the default export is the
/// exact one, and the one to import again (a leading `'` here cannot be told from a typed one).
pub fn spreadsheet_safe_csv(file: &str, text: &str) -> Result<String, DataError> {
    let delimiter = Delimiter::sniff(text);
    let mut rows = parse_delimited(file, text, delimiter)?
        .into_iter()
        .map(|(_, cells)| {
            cells
                .iter()
                .map(|c| spreadsheet_safe_cell(c).into_owned())
                .collect::<Vec<_>>()
        });
    let header = rows.next().unwrap_or_default();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    Ok(write_delimited(&header, rows, delimiter))
}

/// Quotes a field for delimited output when it needs it (RFC 4180, as the `csv` crate does).
pub fn quote_field(value: &str, delimiter: Delimiter) -> String {
    if value.is_empty() {
        return String::new();
    }
    // A one-field record: the writer closes a quoted field only when the record ends.
    let line = write_delimited(&[value], std::iter::empty(), delimiter);
    line.strip_suffix('\n').unwrap_or(&line).to_string()
}

/// A header line and one line per row, fields quoted where needed (the `csv` crate's writer).
pub fn write_delimited(
    header: &[&str],
    rows: impl Iterator<Item = Vec<String>>,
    delimiter: Delimiter,
) -> String {
    let mut writer = csv::WriterBuilder::new()
        .delimiter(delimiter.byte())
        .flexible(true)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let rows =
        std::iter::once(header.iter().map(|h| h.to_string()).collect::<Vec<_>>()).chain(rows);
    for row in rows {
        // Rows of any length are allowed (`flexible`); writing to memory does not fail.
        if writer.write_record(&row).is_err() {
            break;
        }
    }
    writer
        .into_inner()
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_default()
}

/// Column positions found by header name (case-insensitive, any order).
struct Columns {
    names: Vec<String>,
}

impl Columns {
    fn find(&self, file: &str, name: &'static str) -> Result<usize, DataError> {
        self.names
            .iter()
            .position(|n| n.trim().eq_ignore_ascii_case(name))
            .ok_or_else(|| DataError::MissingColumn {
                file: file.into(),
                column: name,
                found: self.names.join(", "),
            })
    }
}

fn cell<'a>(file: &str, record: &'a Record, index: usize) -> Result<&'a str, DataError> {
    record
        .1
        .get(index)
        .map(|s| s.trim())
        .ok_or_else(|| DataError::At {
            file: file.into(),
            line: record.0,
            column: index + 1,
            message: format!(
                "row has {} fields, expected at least {}",
                record.1.len(),
                index + 1
            ),
        })
}

fn number<T: std::str::FromStr>(
    file: &str,
    record: &Record,
    index: usize,
    what: &str,
) -> Result<T, DataError> {
    let raw = cell(file, record, index)?;
    raw.parse().map_err(|_| DataError::At {
        file: file.into(),
        line: record.0,
        column: index + 1,
        message: format!("{what} {raw:?} is not a valid number"),
    })
}

/// Cloze norms: per context, the word that followed and the responses given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClozeNorms {
    /// Passage text by passage id.
    pub passages: BTreeMap<u32, String>,
    /// (passage id, word number) → context.
    pub contexts: BTreeMap<(u32, u32), NormContext>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NormContext {
    /// The word that actually followed, as written.
    pub word: String,
    /// Response as given → count.
    pub responses: BTreeMap<String, u32>,
}

impl ClozeNorms {
    /// The context shown before word `word_num` of a passage: its first `word_num − 1` words.
    pub fn context_text(&self, text_id: u32, word_num: u32) -> Option<String> {
        let text = self.passages.get(&text_id)?;
        Some(
            text.split_whitespace()
                .take(word_num.saturating_sub(1) as usize)
                .collect::<Vec<_>>()
                .join(" "),
        )
    }
}

/// Imports the Provo predictability norms as released on OSF (columns Text_ID, Text,
/// Word_Number, Word, Response, Response_Count, found by name, any order; others ignored).
/// Rows with an empty response or a zero count are skipped and reported.
pub fn import_provo_norms(
    file: &str,
    text: &str,
) -> Result<(ClozeNorms, Vec<SkippedRow>), DataError> {
    let records = parse_delimited(file, text, Delimiter::sniff(text))?;
    let Some((header, rows)) = records.split_first() else {
        return Err(DataError::Invalid {
            file: file.into(),
            message: "the file is empty".into(),
        });
    };
    let cols = Columns {
        names: header.1.clone(),
    };
    let (c_id, c_text, c_num, c_word, c_resp, c_count) = (
        cols.find(file, "Text_ID")?,
        cols.find(file, "Text")?,
        cols.find(file, "Word_Number")?,
        cols.find(file, "Word")?,
        cols.find(file, "Response")?,
        cols.find(file, "Response_Count")?,
    );
    let mut norms = ClozeNorms::default();
    let mut skipped = Vec::new();
    for record in rows {
        let text_id: u32 = number(file, record, c_id, "Text_ID")?;
        let word_num: u32 = number(file, record, c_num, "Word_Number")?;
        let passage = cell(file, record, c_text)?;
        let word = cell(file, record, c_word)?;
        let response = cell(file, record, c_resp)?;
        let raw_count = cell(file, record, c_count)?;
        let count: u32 = if raw_count.is_empty() || raw_count.eq_ignore_ascii_case("NA") {
            0
        } else {
            number(file, record, c_count, "Response_Count")?
        };
        norms
            .passages
            .entry(text_id)
            .or_insert_with(|| passage.to_string());
        let ctx = norms.contexts.entry((text_id, word_num)).or_default();
        if ctx.word.is_empty() {
            ctx.word = word.to_string();
        }
        if response.is_empty() || response.eq_ignore_ascii_case("NA") {
            skipped.push(SkippedRow {
                line: record.0,
                reason: "empty response".into(),
            });
        } else if count == 0 {
            skipped.push(SkippedRow {
                line: record.0,
                reason: format!("response {response:?} has count 0"),
            });
        } else {
            *ctx.responses.entry(response.to_string()).or_insert(0) += count;
        }
    }
    // A context whose every row was skipped has no distribution; its rows are in `skipped`.
    norms.contexts.retain(|_, ctx| !ctx.responses.is_empty());
    Ok((norms, skipped))
}

/// Exports norms in the OSF column layout (one row per context and response).
pub fn export_provo_norms(norms: &ClozeNorms, delimiter: Delimiter) -> String {
    let rows = norms.contexts.iter().flat_map(|((id, num), ctx)| {
        let passage = norms.passages.get(id).cloned().unwrap_or_default();
        ctx.responses.iter().map(move |(resp, count)| {
            vec![
                id.to_string(),
                passage.clone(),
                num.to_string(),
                ctx.word.clone(),
                resp.clone(),
                count.to_string(),
            ]
        })
    });
    write_delimited(&PROVO_COLUMNS, rows, delimiter)
}

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
const LONG_OPTIONAL_COLUMNS: [&str; 3] = ["normalized", "first_keystroke_ms", "practice"];

/// Imports the long format from CSV or TSV.
pub fn import_long_csv(file: &str, text: &str) -> Result<Vec<ResponseRecord>, DataError> {
    let records = parse_delimited(file, text, Delimiter::sniff(text))?;
    let Some((header, rows)) = records.split_first() else {
        return Err(DataError::Invalid {
            file: file.into(),
            message: "the file is empty".into(),
        });
    };
    let cols = Columns {
        names: header.1.clone(),
    };
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
mod csv_tests {
    use super::*;

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

    #[test]
    fn quoting_round_trips_through_the_reader() {
        for value in [
            "plain",
            "a,b",
            "say \"hi\"",
            "two\nlines",
            " padded ",
            "",
            "\"",
            "tab\there",
        ] {
            for delimiter in [Delimiter::Comma, Delimiter::Tab] {
                let line = format!("{}{}x\n", quote_field(value, delimiter), delimiter.char());
                let parsed = parse_delimited("t", &line, delimiter).unwrap();
                assert_eq!(
                    parsed[0].1,
                    vec![value.to_string(), "x".to_string()],
                    "{line:?}"
                );
            }
        }
        let written = write_delimited(
            &["a", "b"],
            vec![
                vec!["1,5".to_string(), "x\"y".to_string()],
                vec!["short".to_string()],
            ]
            .into_iter(),
            Delimiter::Comma,
        );
        assert_eq!(written, "a,b\n\"1,5\",\"x\"\"y\"\nshort\n");
    }
}
