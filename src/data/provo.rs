//! The Provo cloze norms and published model samples in ../shared/provo (JSON Lines).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::text::words::first_word_normalized;

/// Key of a context: its passage and the 1-based position of the word to predict. Written as
/// `TEXT_ID:WORD_NUM` in text, and as the pair `[text_id, word_num]` in files and messages.
///
/// ```
/// use clozelab::data::provo::ContextKey;
/// let key: ContextKey = "3:7".parse().unwrap();
/// assert_eq!(key, ContextKey::new(3, 7));
/// assert_eq!(key.to_string(), "3:7");
/// assert!("3-7".parse::<ContextKey>().is_err());
/// ```
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, Deserialize,
)]
#[serde(from = "(u32, u32)", into = "(u32, u32)")]
pub struct ContextKey {
    pub text_id: u32,
    pub word_num: u32,
}

impl ContextKey {
    pub fn new(text_id: u32, word_num: u32) -> Self {
        Self { text_id, word_num }
    }
}

impl From<(u32, u32)> for ContextKey {
    fn from((text_id, word_num): (u32, u32)) -> Self {
        Self { text_id, word_num }
    }
}

impl From<ContextKey> for (u32, u32) {
    fn from(key: ContextKey) -> Self {
        (key.text_id, key.word_num)
    }
}

impl std::fmt::Display for ContextKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.text_id, self.word_num)
    }
}

impl std::str::FromStr for ContextKey {
    type Err = String;
    /// `TEXT_ID:WORD_NUM`, as in `3:7`.
    fn from_str(text: &str) -> Result<Self, String> {
        text.split_once(':')
            .and_then(|(t, w)| Some(Self::new(t.trim().parse().ok()?, w.trim().parse().ok()?)))
            .ok_or_else(|| format!("{text:?} is not TEXT_ID:WORD_NUM"))
    }
}

/// One context of the norms: the one Provo context type, read from the JSON Lines here or from
/// the OSF release (`data::import_provo_norms`), and used by the analyses and the games.
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
pub struct ProvoContext {
    pub text_id: u32,
    pub word_num: u32,
    pub context: String,
    pub original: String,
    /// Normalised response → number of participants who gave it.
    pub human: BTreeMap<String, u32>,
    /// Real GPT-2's log-probability of each response, when the file has it (kept on export).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpt2_logprob_human: Option<BTreeMap<String, f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpt2_logprob_original: Option<f64>,
}

impl ProvoContext {
    /// Which context this is.
    pub fn key(&self) -> ContextKey {
        ContextKey::new(self.text_id, self.word_num)
    }
}

/// Parses JSON Lines text, one value per non-blank line; errors name file, line and column.
pub fn parse_jsonl<T: for<'de> Deserialize<'de>>(
    file: &str,
    text: &str,
) -> Result<Vec<T>, ProvoError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| ProvoError::Line {
                path: file.into(),
                line: i + 1,
                column: e.column(),
                message: e.to_string(),
            })
        })
        .collect()
}

#[derive(Debug, thiserror::Error)]
pub enum ProvoError {
    #[error("cannot read {path}: {message}")]
    Io { path: String, message: String },
    #[error("{path} line {line}, column {column}: {message}")]
    Line {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
}

/// Word samples of one system for one context, already reduced to words (failures counted).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, Deserialize)]
pub struct Samples {
    /// Normalised word → count.
    pub words: BTreeMap<String, f64>,
    /// Samples that yielded no word (rejected, as in the paper).
    pub failed: u64,
}

/// The special value the paper's GPT-2 sample files use for a sample without a word.
pub const FAILED_SAMPLE: &str = "Failed to generate word";

/// The file's name as shown in errors, and its text.
fn read_text(path: &Path) -> Result<(String, String), ProvoError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ProvoError::Io {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    Ok((shown, text))
}

/// Reads `provo_cloze.jsonl`.
pub fn read_norms(dir: &Path) -> Result<Vec<ProvoContext>, ProvoError> {
    let (file, text) = read_text(&dir.join("provo_cloze.jsonl"))?;
    parse_jsonl(&file, &text)
}

/// One system's word samples, per context.
pub type SystemSamples = (String, BTreeMap<ContextKey, Samples>);

/// The systems in one published sample file, told apart by its fields and named as in the
/// paper where the file is one of its releases: `samples` (word → count: GPT-2),
/// `continuations` (raw text: BLOOM), or ChatGPT's word lists (one system per prompt).
pub fn parse_sample_file(file: &str, text: &str) -> Result<Vec<SystemSamples>, ProvoError> {
    let first: serde_json::Value = parse_jsonl::<serde_json::Value>(file, text)?
        .into_iter()
        .next()
        .ok_or_else(|| ProvoError::Line {
            path: file.into(),
            line: 1,
            column: 1,
            message: "the file has no lines".into(),
        })?;
    let stem = file
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(file)
        .trim_end_matches(".jsonl")
        .to_string();
    let has = |key: &str| first.get(key).is_some();
    if has("samples") {
        let name = match stem.as_str() {
            "samples_gpt2_ancestral_n1000" => "GPT-2".to_string(),
            "samples_gpt2_temp0.5_n40" => "GPT-2 (T=0.5)".to_string(),
            _ => stem,
        };
        Ok(vec![(name, parse_counted_samples(file, text)?)])
    } else if has("continuations") {
        let name = if stem.starts_with("samples_bloom") {
            "BLOOM".to_string()
        } else {
            stem
        };
        Ok(vec![(name, parse_continuations(file, text)?)])
    } else if has("single_prompt_temp1") || has("list_prompt") {
        [
            ("single_prompt_temp1", "ChatGPT"),
            ("list_prompt", "ChatGPT (list)"),
        ]
        .iter()
        .filter(|(field, _)| has(field))
        .map(|(field, name)| Ok((name.to_string(), parse_word_lists(file, text, field)?)))
        .collect()
    } else {
        Err(ProvoError::Line {
            path: file.into(),
            line: 1,
            column: 1,
            message: "not a sample file: no `samples`, `continuations` or word-list field".into(),
        })
    }
}

fn add_word(samples: &mut Samples, raw: &str, count: f64) {
    match first_word_normalized(raw) {
        Some(w) if raw != FAILED_SAMPLE => *samples.words.entry(w).or_insert(0.0) += count,
        _ => samples.failed += count as u64,
    }
}

#[derive(Deserialize)]
struct CountedLine {
    text_id: u32,
    word_num: u32,
    samples: BTreeMap<String, f64>,
}

/// A GPT-2 sample file (`samples`: first word → count, punctuation already stripped).
pub fn read_counted_samples(path: &Path) -> Result<BTreeMap<ContextKey, Samples>, ProvoError> {
    let (file, text) = read_text(path)?;
    parse_counted_samples(&file, &text)
}

/// [`read_counted_samples`] from the file's text.
pub fn parse_counted_samples(
    file: &str,
    text: &str,
) -> Result<BTreeMap<ContextKey, Samples>, ProvoError> {
    let lines: Vec<CountedLine> = parse_jsonl(file, text)?;
    Ok(lines
        .into_iter()
        .map(|l| {
            let mut s = Samples::default();
            for (word, count) in &l.samples {
                add_word(&mut s, word, *count);
            }
            (ContextKey::new(l.text_id, l.word_num), s)
        })
        .collect())
}

#[derive(Deserialize)]
struct ContinuationLine {
    text_id: u32,
    word_num: u32,
    continuations: Vec<String>,
}

/// BLOOM's raw continuations: the first complete word is cut from each.
pub fn read_continuations(path: &Path) -> Result<BTreeMap<ContextKey, Samples>, ProvoError> {
    let (file, text) = read_text(path)?;
    parse_continuations(&file, &text)
}

/// [`read_continuations`] from the file's text.
pub fn parse_continuations(
    file: &str,
    text: &str,
) -> Result<BTreeMap<ContextKey, Samples>, ProvoError> {
    let lines: Vec<ContinuationLine> = parse_jsonl(file, text)?;
    Ok(lines
        .into_iter()
        .map(|l| {
            let mut s = Samples::default();
            for c in &l.continuations {
                add_word(&mut s, c, 1.0);
            }
            (ContextKey::new(l.text_id, l.word_num), s)
        })
        .collect())
}

#[derive(Deserialize)]
struct WordListLine {
    text_id: u32,
    word_num: u32,
    #[serde(flatten)]
    lists: BTreeMap<String, serde_json::Value>,
}

/// ChatGPT's word lists; `field` picks `single_prompt_temp1`, `list_prompt`, …
pub fn read_word_lists(
    path: &Path,
    field: &str,
) -> Result<BTreeMap<ContextKey, Samples>, ProvoError> {
    let (file, text) = read_text(path)?;
    parse_word_lists(&file, &text, field)
}

/// [`read_word_lists`] from the file's text.
pub fn parse_word_lists(
    file: &str,
    text: &str,
    field: &str,
) -> Result<BTreeMap<ContextKey, Samples>, ProvoError> {
    let lines: Vec<WordListLine> = parse_jsonl(file, text)?;
    Ok(lines
        .into_iter()
        .filter_map(|l| {
            let mut s = Samples::default();
            match l.lists.get(field)? {
                serde_json::Value::Array(words) => {
                    for w in words.iter().filter_map(|w| w.as_str()) {
                        add_word(&mut s, w, 1.0);
                    }
                }
                serde_json::Value::String(text) => {
                    for item in list_items(text) {
                        add_word(&mut s, item, 1.0);
                    }
                }
                _ => return None,
            }
            Some((ContextKey::new(l.text_id, l.word_num), s))
        })
        .collect())
}

/// The items of a list prompt's answer, one text: a numbered list ("1. later\n2. ago\n…"), a
/// comma- or semicolon-separated line ("physically, emotionally, …"), or one line of words
/// separated by spaces only ("explosion fire flashover …"), which is split into its words.
///
/// ```
/// use clozelab::data::provo::list_items;
/// assert_eq!(list_items("1. later \n2. ago"), vec![" later ", " ago"]);
/// assert_eq!(list_items("ocean, seas; sea"), vec!["ocean", " seas", " sea"]);
/// assert_eq!(list_items("explosion fire  flare-up"), vec!["explosion", "fire", "flare-up"]);
/// assert_eq!(list_items("1. went 2. reached"), vec!["went", "reached"]);
/// ```
pub fn list_items(text: &str) -> Vec<&str> {
    let trimmed = text.trim();
    let one_line_of_words = !trimmed.contains(['\n', ',', ';']);
    if one_line_of_words {
        return trimmed
            .split_whitespace()
            // "1." alone is a list number, not a word.
            .filter(|w| !strip_list_number(w).is_empty())
            .collect();
    }
    text.lines()
        .flat_map(|l| l.split([',', ';']))
        .filter(|i| !i.trim().is_empty())
        .map(strip_list_number)
        .collect()
}

/// Drops a leading list number ("12. ", "3) ") from a line of a numbered list.
pub fn strip_list_number(line: &str) -> &str {
    let trimmed = line.trim_start();
    let digits = trimmed.len()
        - trimmed
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    if digits > 0
        && let Some(rest) = trimmed[digits..].strip_prefix(['.', ')'])
    {
        return rest;
    }
    line
}
