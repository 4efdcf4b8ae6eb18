//! Every string a study's participant reads, in the study's language: complete sets for
//! English, German and Dutch (`participant_texts/{en,de,nl}.json`, checked into the repo), picked
//! by the config's `language`, and any of them replaced by the config's `participant_texts`
//! (e.g. a consent button worded as the ethics board asked). Right-to-left scripts are left
//! for later. A text's `{name}` placeholders are filled in by the page.

use std::collections::{BTreeMap, BTreeSet};

/// The languages with a complete set, and their texts as JSON.
pub const LANGUAGES: [(&str, &str); 3] = [
    ("en", include_str!("participant_texts/en.json")),
    ("de", include_str!("participant_texts/de.json")),
    ("nl", include_str!("participant_texts/nl.json")),
];

#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum TextsError {
    #[error("language must be one of en, de, nl, got {0:?}")]
    Language(String),
    #[error("participant_texts has no text named {0:?} (the names are those of the English set)")]
    UnknownName(String),
    #[error("participant_texts.{name} must keep the placeholders {expected}")]
    Placeholders { name: String, expected: String },
}

macro_rules! texts {
    ($($variant:ident = $name:literal,)*) => {
        /// The texts a participant reads, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        pub enum Say { $($variant,)* }

        impl Say {
            pub const ALL: &'static [Say] = &[$(Say::$variant,)*];

            /// The name in the JSON sets and in `participant_texts`.
            pub fn name(self) -> &'static str {
                match self { $(Say::$variant => $name,)* }
            }
        }
    };
}

texts! {
    ConsentStart = "consent_start",
    ConsentAgree = "consent_agree",
    ConsentDecline = "consent_decline",
    LoadingStudy = "loading_study",
    StudyCannotStart = "study_cannot_start",
    GuessLabel = "guess_label",
    GuessSubmit = "guess_submit",
    Practice = "practice",
    NextContext = "next_context",
    EntryEmpty = "entry_empty",
    EntryCharacters = "entry_characters",
    EntryTooLong = "entry_too_long",
    ProgressWords = "progress_words",
    ProgressPositions = "progress_positions",
    ProgressRounds = "progress_rounds",
    AttentionContinue = "attention_continue",
    AttentionEmpty = "attention_empty",
    QuestionsContinue = "questions_continue",
    QuestionOptional = "question_optional",
    QuestionRequired = "question_required",
    QuestionNumber = "question_number",
    QuestionRange = "question_range",
    QuestionChoice = "question_choice",
    ScreenedOut = "screened_out",
    AnswerNotSaved = "answer_not_saved",
    MemoryOnlyStorage = "memory_only_storage",
    Withdraw = "withdraw",
    WithdrawConfirm = "withdraw_confirm",
    WithdrawYes = "withdraw_yes",
    WithdrawNo = "withdraw_no",
    StudyFull = "study_full",
    Leaving = "leaving",
    LeftDeclined = "left_declined",
    LeftWithdrew = "left_withdrew",
    LeftWithdrewTold = "left_withdrew_told",
    Finished = "finished",
    CompletionCode = "completion_code",
    NotAllSaved = "not_all_saved",
    MemoryOnly = "memory_only",
    CannotConfirm = "cannot_confirm",
    CannotPrepare = "cannot_prepare",
    Sending = "sending",
    SendingAgain = "sending_again",
    Sent = "sent",
    Refused = "refused",
    NotConfirmed = "not_confirmed",
    KeptForLater = "kept_for_later",
    CannotKeep = "cannot_keep",
    TryAgain = "try_again",
    OrContinue = "or_continue",
    MayAskFile = "may_ask_file",
    Redirecting = "redirecting",
    YourData = "your_data",
    DownloadJson = "download_json",
    DownloadCsv = "download_csv",
    WaitingForModel = "waiting_for_model",
    LoadingModel = "loading_model",
    LoadingModelSteps = "loading_model_steps",
    ModelFailed = "model_failed",
    CuttingTokens = "cutting_tokens",
    Saving = "saving",
    TokenGuessLabel = "token_guess_label",
    TokenSpace = "token_space",
    TokenNewline = "token_newline",
    TokenTab = "token_tab",
    TokenClear = "token_clear",
    TokenGuess = "token_guess",
    TokenHint = "token_hint",
    TwoTokenDrawing = "two_token_drawing",
    TwoTokenQuestion = "two_token_question",
    TwoTokenHowLikely = "two_token_how_likely",
    RoundRight = "round_right",
    RoundWrong = "round_wrong",
    LastRound = "last_round",
    Top1Feedback = "top1_feedback",
    Top1Rank = "top1_rank",
    Top1NotAToken = "top1_not_a_token",
    TwoTokenFeedback = "two_token_feedback",
    SideLeft = "side_left",
    SideRight = "side_right",
    TwoTokenReward = "two_token_reward",
    ScoreTwoToken = "score_two_token",
    ScoreTop1 = "score_top1",
    PracticeRound = "practice_round",
    TokenIsOne = "token_is_one",
    TokenIsOneBoth = "token_is_one_both",
    TokenNeedsSpace = "token_needs_space",
    TokenNotOne = "token_not_one",
    StoredCount = "stored_count",
    DownloadProvo = "download_provo",
    SpreadsheetSafe = "spreadsheet_safe",
    KeptHere = "kept_here",
    ExportCsv = "export_csv",
    ExportSpreadsheet = "export_spreadsheet",
    ExportJson = "export_json",
    ExportBundle = "export_bundle",
    CannotExport = "cannot_export",
    TwoTokenSame = "two_token_same",
    TokenOr = "token_or",
    RefusedMidStudy = "refused_mid_study",
    NextParticipant = "next_participant",
    OpenElsewhere = "open_elsewhere",
    MemoryOnlyServer = "memory_only_server",
    KeptCount = "kept_count",
}

/// The `{name}` placeholders of a text.
///
/// ```
/// use clozelab::game::design::participant_texts::placeholders;
/// assert_eq!(placeholders("{done} of {total} {done}").into_iter().collect::<Vec<_>>(), ["done", "total"]);
/// ```
pub fn placeholders(text: &str) -> BTreeSet<&str> {
    parts(text)
        .into_iter()
        .filter_map(|p| match p {
            TextPart::Slot(name) => Some(name),
            TextPart::Text(_) => None,
        })
        .collect()
}

/// A piece of a text: words, or a placeholder's name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TextPart<'a> {
    Text(&'a str),
    Slot(&'a str),
}

/// `text` cut at its placeholders (a `{` without a closing `}` stays text).
pub fn parts(text: &str) -> Vec<TextPart<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let name = &rest[open + 1..open + close];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push(TextPart::Text(&rest[..open + 1]));
            rest = &rest[open + 1..];
            continue;
        }
        if open > 0 {
            out.push(TextPart::Text(&rest[..open]));
        }
        out.push(TextPart::Slot(name));
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        out.push(TextPart::Text(rest));
    }
    out
}

/// The built-in set of `language`, by name.
pub fn built_in(language: &str) -> Option<BTreeMap<String, String>> {
    let (_, json) = LANGUAGES.iter().find(|(code, _)| *code == language)?;
    serde_json::from_str(json).ok()
}

/// The texts one study shows.
#[derive(Clone, Debug, PartialEq)]
pub struct ParticipantTexts {
    language: String,
    texts: BTreeMap<String, String>,
}

impl Default for ParticipantTexts {
    fn default() -> Self {
        Self::english()
    }
}

impl ParticipantTexts {
    pub fn english() -> Self {
        Self {
            language: "en".into(),
            texts: built_in("en").unwrap_or_default(),
        }
    }

    /// The set of `language` (default English) with `overrides` over it: each must name a
    /// text of the set and keep its placeholders.
    ///
    /// ```
    /// use clozelab::game::design::participant_texts::{ParticipantTexts, Say};
    /// let overrides = [("consent_agree".to_string(), "Ja, ich mache mit".to_string())].into();
    /// let texts = ParticipantTexts::new(Some("de"), &overrides).unwrap();
    /// assert_eq!(texts.get(Say::ConsentAgree), "Ja, ich mache mit");
    /// assert_eq!(texts.fill(Say::ProgressWords, &[("done", "3"), ("total", "9")]),
    ///     "3 von 9 Wörtern beantwortet");
    /// assert!(ParticipantTexts::new(Some("fr"), &Default::default()).is_err());
    /// ```
    pub fn new(
        language: Option<&str>,
        overrides: &BTreeMap<String, String>,
    ) -> Result<Self, TextsError> {
        let language = language.unwrap_or("en").trim();
        let mut texts =
            built_in(language).ok_or_else(|| TextsError::Language(language.to_string()))?;
        for (name, text) in overrides {
            let Some(original) = texts.get(name) else {
                return Err(TextsError::UnknownName(name.clone()));
            };
            let expected = placeholders(original);
            if placeholders(text) != expected {
                return Err(TextsError::Placeholders {
                    name: name.clone(),
                    expected: expected
                        .iter()
                        .map(|p| format!("{{{p}}}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            texts.insert(name.clone(), text.clone());
        }
        Ok(Self {
            language: language.to_string(),
            texts,
        })
    }

    /// The language's code (`en`, `de`, `nl`), for the page's `lang`.
    pub fn language(&self) -> &str {
        &self.language
    }

    pub fn get(&self, say: Say) -> &str {
        self.texts.get(say.name()).map_or("", String::as_str)
    }

    /// The text with its placeholders filled from `values` (unknown ones left as they are).
    pub fn fill(&self, say: Say, values: &[(&str, &str)]) -> String {
        parts(self.get(say))
            .into_iter()
            .map(|part| match part {
                TextPart::Text(t) => t.to_string(),
                TextPart::Slot(name) => values
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or_else(|| format!("{{{name}}}"), |(_, v)| v.to_string()),
            })
            .collect()
    }

    /// The text cut at its placeholders, for a page that puts elements in them.
    pub fn parts(&self, say: Say) -> Vec<TextPart<'_>> {
        parts(self.get(say))
    }
}
