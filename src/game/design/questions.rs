//! Questions a study asks besides the cloze items: blocks before the passages (native language,
//! age, a screening question) and after them (did you look anything up, feedback). Each is free
//! text, a number in a range, single or multiple choice, or a Likert scale; required or not. A
//! choice may screen the participant out: the study then ends early, keeping only the answers
//! that screened them out. Answers travel in the export's manifest and become columns of the
//! study's trial table (`q_<id>`).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// Longest free-text answer kept, in characters.
pub const MAX_TEXT_ANSWER_CHARS: usize = 1000;

/// Likert scales have between 2 and this many points.
pub const MAX_LIKERT_POINTS: u8 = 11;

/// What kind of answer a question takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionKind {
    #[default]
    Text,
    /// A number, within `min` and `max` when given.
    Number,
    /// One of `options`.
    SingleChoice,
    /// Any of `options` (answers joined with `; `).
    MultipleChoice,
    /// 1 to `points` (default 5); `options` may name its two ends.
    Likert,
}

/// One question as the study config writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The column its answers go in (`q_<id>`): lower-case letters, digits and `_`.
    pub id: String,
    /// What the participant reads.
    pub text: String,
    #[serde(default)]
    pub kind: QuestionKind,
    /// The choices (single and multiple choice), or a Likert scale's two end labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// A Likert scale's points (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<u8>,
    /// Whether the participant must answer (default yes).
    #[serde(default = "yes")]
    pub required: bool,
    /// Choices that end the study early with the study's `screened_out_url` (only before the
    /// passages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screen_out: Vec<String>,
}

fn yes() -> bool {
    true
}

/// Why a study's questions cannot be asked.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum QuestionError {
    #[error("question {0:?} has no text")]
    NoText(String),
    #[error(
        "question id {0:?} must be lower-case letters, digits and _ (it names a column), 1 to 40 \
         characters"
    )]
    Id(String),
    #[error("question id {0:?} is used twice")]
    Duplicate(String),
    #[error("question {0:?} needs at least two options, each named once, without ';'")]
    Options(String),
    #[error("question {0:?}: min is above max")]
    Range(String),
    #[error(
        "question {id:?}: a Likert scale has 2 to {MAX_LIKERT_POINTS} points and 0 or 2 end labels"
    )]
    Likert { id: String },
    #[error("question {id:?} screens out on {option:?}, which is not one of its options")]
    ScreenOutOption { id: String, option: String },
    #[error("question {0:?} screens out, but only a choice asked before the passages can")]
    ScreenOutKind(String),
    #[error("questions screen participants out, but the study has no screened_out_url")]
    NoScreenedOutUrl,
}

/// Why an answer is not taken (shown to the participant in the study's texts).
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum AnswerError {
    #[error("this question needs an answer")]
    Required,
    #[error("enter a number")]
    NotANumber,
    #[error("enter a number from {min} to {max}")]
    OutOfRange { min: String, max: String },
    #[error("pick one of the choices")]
    NotAnOption,
}

impl AnswerError {
    /// What the participant reads, in the study's texts: the text and its placeholders.
    pub fn say(&self) -> (super::participant_texts::Say, Vec<(&'static str, String)>) {
        use super::participant_texts::Say;
        match self {
            Self::Required => (Say::QuestionRequired, Vec::new()),
            Self::NotANumber => (Say::QuestionNumber, Vec::new()),
            Self::OutOfRange { min, max } => (
                Say::QuestionRange,
                vec![("min", min.clone()), ("max", max.clone())],
            ),
            Self::NotAnOption => (Say::QuestionChoice, Vec::new()),
        }
    }
}

/// Where a block of questions is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// After the consent, before the first passage.
    Before,
    /// After the last passage, before the end.
    After,
}

impl Question {
    /// What the question is and what its answers can be, for the codebook.
    ///
    /// ```
    /// use clozelab::game::design::questions::Question;
    /// let age: Question = serde_json::from_str(
    ///     r#"{"id": "age", "text": "Your age?", "kind": "number", "min": 16, "max": 120}"#,
    /// ).unwrap();
    /// assert_eq!(age.describe(), "\"Your age?\" A number from 16 to 120. Required.");
    /// ```
    pub fn describe(&self) -> String {
        let options = self
            .options
            .iter()
            .map(|o| format!("{o:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let answers = match self.kind {
            QuestionKind::Text => "Free text.".to_string(),
            QuestionKind::Number => match (self.min, self.max) {
                (Some(lo), Some(hi)) => format!("A number from {lo} to {hi}."),
                (Some(lo), None) => format!("A number of at least {lo}."),
                (None, Some(hi)) => format!("A number of at most {hi}."),
                (None, None) => "A number.".to_string(),
            },
            QuestionKind::SingleChoice => format!("One of {options}."),
            QuestionKind::MultipleChoice => {
                format!("Any of {options}, joined with \"; \".")
            }
            QuestionKind::Likert => format!(
                "1 to {} on a Likert scale{}.",
                self.points.unwrap_or(5),
                if options.is_empty() {
                    String::new()
                } else {
                    format!(" ({options} at its ends)")
                }
            ),
        };
        let required = if self.required {
            "Required."
        } else {
            "Optional (empty when not answered)."
        };
        let mut out = format!("{:?} {answers} {required}", self.text);
        if !self.screen_out.is_empty() {
            let screened: Vec<String> = self.screen_out.iter().map(|o| format!("{o:?}")).collect();
            out.push_str(&format!(
                " {} screened the participant out.",
                screened.join(", ")
            ));
        }
        out
    }

    /// The column of the trial table its answers go in.
    pub fn column(&self) -> String {
        format!("q_{}", self.id)
    }

    fn points(&self) -> u8 {
        self.points.unwrap_or(5)
    }

    fn is_choice(&self) -> bool {
        matches!(
            self.kind,
            QuestionKind::SingleChoice | QuestionKind::MultipleChoice
        )
    }

    fn check(&self, before_passages: bool) -> Result<(), QuestionError> {
        let id = self.id.clone();
        let id_fine = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
        if self.id.is_empty() || self.id.len() > 40 || !self.id.chars().all(id_fine) {
            return Err(QuestionError::Id(id));
        }
        if self.text.trim().is_empty() {
            return Err(QuestionError::NoText(id));
        }
        if self.is_choice() {
            let names: BTreeSet<&str> = self.options.iter().map(|o| o.trim()).collect();
            if self.options.len() < 2
                || names.len() != self.options.len()
                || names.iter().any(|o| o.is_empty() || o.contains(';'))
            {
                return Err(QuestionError::Options(id));
            }
        }
        if let (Some(min), Some(max)) = (self.min, self.max)
            && min > max
        {
            return Err(QuestionError::Range(id));
        }
        if self.kind == QuestionKind::Likert
            && (!(2..=MAX_LIKERT_POINTS).contains(&self.points())
                || !matches!(self.options.len(), 0 | 2))
        {
            return Err(QuestionError::Likert { id });
        }
        if !self.screen_out.is_empty() && (!self.is_choice() || !before_passages) {
            return Err(QuestionError::ScreenOutKind(id));
        }
        if let Some(option) = self.screen_out.iter().find(|s| !self.options.contains(s)) {
            return Err(QuestionError::ScreenOutOption {
                id,
                option: option.clone(),
            });
        }
        Ok(())
    }

    /// The answer as it is kept, from what the participant entered (`values`: the text field,
    /// or the choices ticked); `Ok("")` for an optional question left empty.
    ///
    /// ```
    /// use clozelab::game::design::questions::{AnswerError, Question, QuestionKind};
    /// let age = Question { id: "age".into(), text: "Your age?".into(), kind: QuestionKind::Number,
    ///     options: vec![], min: Some(18.0), max: Some(99.0), points: None, required: true,
    ///     screen_out: vec![] };
    /// assert_eq!(age.answer(&[" 34 ".into()]), Ok("34".into()));
    /// assert!(matches!(age.answer(&["7".into()]), Err(AnswerError::OutOfRange { .. })));
    /// assert_eq!(age.answer(&[]), Err(AnswerError::Required));
    /// ```
    pub fn answer(&self, values: &[String]) -> Result<String, AnswerError> {
        let values: Vec<&str> = values
            .iter()
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .collect();
        if values.is_empty() {
            return if self.required {
                Err(AnswerError::Required)
            } else {
                Ok(String::new())
            };
        }
        match self.kind {
            QuestionKind::Text => Ok(values
                .join(" ")
                .chars()
                .filter(|c| !c.is_control())
                .take(MAX_TEXT_ANSWER_CHARS)
                .collect()),
            QuestionKind::Number => {
                let number: f64 = values[0]
                    .replace(',', ".")
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite())
                    .ok_or(AnswerError::NotANumber)?;
                let (min, max) = (
                    self.min.unwrap_or(f64::NEG_INFINITY),
                    self.max.unwrap_or(f64::INFINITY),
                );
                if number < min || number > max {
                    return Err(AnswerError::OutOfRange {
                        min: self.min.map_or("any".into(), |m| m.to_string()),
                        max: self.max.map_or("any".into(), |m| m.to_string()),
                    });
                }
                Ok(number.to_string())
            }
            QuestionKind::SingleChoice => match values.as_slice() {
                [one] if self.options.iter().any(|o| o == one) => Ok(one.to_string()),
                _ => Err(AnswerError::NotAnOption),
            },
            QuestionKind::MultipleChoice => {
                if values.iter().any(|v| !self.options.iter().any(|o| o == v)) {
                    return Err(AnswerError::NotAnOption);
                }
                // In the options' order, each once.
                Ok(self
                    .options
                    .iter()
                    .filter(|o| values.contains(&o.as_str()))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; "))
            }
            QuestionKind::Likert => match values.as_slice() {
                [one] => match one.parse::<u8>() {
                    Ok(n) if (1..=self.points()).contains(&n) => Ok(n.to_string()),
                    _ => Err(AnswerError::NotAnOption),
                },
                _ => Err(AnswerError::NotAnOption),
            },
        }
    }

    /// Whether `answer` (as [`Self::answer`] keeps it) ends the study early.
    ///
    /// ```
    /// use clozelab::game::design::questions::built_in;
    /// let native = built_in("native_speaker", "en").unwrap();
    /// assert!(native.screens_out("No") && !native.screens_out("Yes"));
    /// ```
    pub fn screens_out(&self, answer: &str) -> bool {
        answer
            .split("; ")
            .any(|a| self.screen_out.iter().any(|s| s == a))
    }

    /// The points of a Likert scale, 1 to n.
    pub fn likert_points(&self) -> Vec<u8> {
        (1..=self.points()).collect()
    }
}

/// Checks a study's two blocks: each question well formed, every id once, screening only by
/// choices before the passages, and a `screened_out_url` when any question screens out.
pub fn check_blocks(
    before: &[Question],
    after: &[Question],
    has_screened_out_url: bool,
) -> Result<(), QuestionError> {
    let mut ids = BTreeSet::new();
    for (question, is_before) in before
        .iter()
        .map(|q| (q, true))
        .chain(after.iter().map(|q| (q, false)))
    {
        question.check(is_before)?;
        if !ids.insert(question.id.as_str()) {
            return Err(QuestionError::Duplicate(question.id.clone()));
        }
    }
    if before.iter().any(|q| !q.screen_out.is_empty()) && !has_screened_out_url {
        return Err(QuestionError::NoScreenedOutUrl);
    }
    Ok(())
}

/// A participant's answer to one question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionAnswer {
    pub question: String,
    /// As [`Question::answer`] keeps it; empty for an optional question skipped.
    pub answer: String,
    /// Milliseconds from the block being shown to the answer.
    #[serde(default)]
    pub response_time_ms: Option<f64>,
    pub timestamp: String,
    /// This answer ended the study early.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub screened_out: bool,
}

/// The names of the built-in questions, in the order the Study page offers them.
pub const BUILT_IN: [&str; 4] = ["native_speaker", "native_language", "age", "looked_up"];

/// A built-in question every cloze study asks, in the study's language (`en`, `de`, `nl`):
/// `native_speaker` (screens out "no"), `native_language`, `age` (16–120) and `looked_up`
/// (asked after the passages).
///
/// ```
/// use clozelab::game::design::questions::{built_in, BUILT_IN};
/// assert!(BUILT_IN.iter().all(|name| built_in(name, "de").is_some()));
/// assert_eq!(built_in("age", "nl").unwrap().text, "Wat is uw leeftijd?");
/// ```
pub fn built_in(name: &str, language: &str) -> Option<Question> {
    let pick = |en: &str, de: &str, nl: &str| {
        match language {
            "de" => de,
            "nl" => nl,
            _ => en,
        }
        .to_string()
    };
    let (yes, no) = (pick("Yes", "Ja", "Ja"), pick("No", "Nein", "Nee"));
    let base = |id: &str, text: String, kind| Question {
        id: id.into(),
        text,
        kind,
        options: Vec::new(),
        min: None,
        max: None,
        points: None,
        required: true,
        screen_out: Vec::new(),
    };
    Some(match name {
        "native_speaker" => Question {
            options: vec![yes, no.clone()],
            screen_out: vec![no],
            ..base(
                name,
                pick(
                    "Is English your native language?",
                    "Ist Deutsch Ihre Muttersprache?",
                    "Is Nederlands uw moedertaal?",
                ),
                QuestionKind::SingleChoice,
            )
        },
        "native_language" => base(
            name,
            pick(
                "What is your native language? (More than one: separate them with commas.)",
                "Was ist Ihre Muttersprache? (Mehrere: mit Kommas trennen.)",
                "Wat is uw moedertaal? (Meer dan één: scheid ze met komma's.)",
            ),
            QuestionKind::Text,
        ),
        "age" => Question {
            min: Some(16.0),
            max: Some(120.0),
            ..base(
                name,
                pick(
                    "What is your age?",
                    "Wie alt sind Sie?",
                    "Wat is uw leeftijd?",
                ),
                QuestionKind::Number,
            )
        },
        "looked_up" => Question {
            options: vec![yes, no],
            ..base(
                name,
                pick(
                    "Did you look anything up (a dictionary, the internet, another person) while \
                     answering?",
                    "Haben Sie beim Antworten etwas nachgeschlagen (Wörterbuch, Internet, eine \
                     andere Person)?",
                    "Heeft u tijdens het antwoorden iets opgezocht (woordenboek, internet, iemand \
                     anders)?",
                ),
                QuestionKind::SingleChoice,
            )
        },
        _ => return None,
    })
}
