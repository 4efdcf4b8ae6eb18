//! Delimited text (CSV/TSV): reading with errors that name line and column, writing with the
//! quoting RFC 4180 needs, and the spreadsheet-safe variant of an export.

use super::DataError;

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
pub(super) type Record = (usize, Vec<String>);

impl Delimiter {
    pub(super) fn byte(self) -> u8 {
        self.char() as u8
    }
}

/// Parses RFC 4180 delimited text (quotes, doubled quotes, line breaks inside quotes), LF or
/// CRLF, with or without a UTF-8 BOM, through the `csv` crate. Blank lines are skipped.
///
/// `csv` reads stray and unclosed quotes leniently (as text); `check_quotes` first turns
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
pub(super) const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

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

/// A delimited file (comma or tab, sniffed) as its header's columns and its records; `Err`
/// when it cannot be read or holds no header.
pub(super) fn read_table(file: &str, text: &str) -> Result<(Columns, Vec<Record>), DataError> {
    let mut records = parse_delimited(file, text, Delimiter::sniff(text))?;
    if records.is_empty() {
        return Err(DataError::Invalid {
            file: file.into(),
            message: "the file is empty".into(),
        });
    }
    let header = records.remove(0);
    Ok((Columns { names: header.1 }, records))
}

/// Column positions found by header name (case-insensitive, any order).
pub(super) struct Columns {
    pub(super) names: Vec<String>,
}

impl Columns {
    pub(super) fn find(&self, file: &str, name: &'static str) -> Result<usize, DataError> {
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

pub(super) fn cell<'a>(file: &str, record: &'a Record, index: usize) -> Result<&'a str, DataError> {
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

pub(super) fn number<T: std::str::FromStr>(
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

#[cfg(test)]
mod tests {
    use super::*;

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
