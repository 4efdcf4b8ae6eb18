//! The trial table's column dictionary: every column of `trials.csv` and `token_trials.csv`
//! (name, type, what it holds), written as `codebook.csv` beside them and listed in
//! `docs/trial-table.md` (a test checks the docs name every column).

use crate::data::{Delimiter, write_delimited};

/// The run columns every table starts with: (name, type, description).
pub const RUN_COLUMNS: [(&str, &str, &str); 17] = [
    (
        "study_id",
        "string",
        "The study's id (its config's study_id).",
    ),
    (
        "participant",
        "string",
        "The participant's id (Prolific's PROLIFIC_PID, JATOS's worker, or the browser's own).",
    ),
    (
        "run",
        "string",
        "The run: jatos-<study result id>, prolific-<SESSION_ID>, local-<hex> (made by the page) or preview.",
    ),
    (
        "run_state",
        "string",
        "complete, incomplete, withdrawn or screened_out (answers from a long-format download say nothing of their plan: incomplete).",
    ),
    (
        "worker_type",
        "string",
        "JATOS's worker type (Jatos = a test run from JATOS's GUI); empty outside JATOS.",
    ),
    ("pilot", "bool", "true for the Study page's preview."),
    (
        "list",
        "string",
        "The counterbalanced list played (empty without lists).",
    ),
    (
        "list_chosen_by",
        "string",
        "How the list was chosen: link, JATOS batch or id hash.",
    ),
    (
        "attention_passed",
        "integer",
        "Attention checks the run answered right.",
    ),
    (
        "attention_failed",
        "integer",
        "Attention checks the run answered wrong.",
    ),
    (
        "median_response_ms",
        "number",
        "The run's median response time in the next-word game (practice aside), ms.",
    ),
    (
        "consent_at",
        "datetime",
        "When the participant agreed to the consent (RFC 3339).",
    ),
    (
        "user_agent",
        "string",
        "The participant's browser (navigator.userAgent).",
    ),
    ("screen", "string", "The screen's size, WxH CSS pixels."),
    ("touch", "bool", "Whether the device has a touch screen."),
    (
        "excluded",
        "bool",
        "true when the analyses leave this run out (see exclusion_reason).",
    ),
    (
        "exclusion_reason",
        "string",
        "Why the run is left out, codes joined with ';' (flagged, jatos_test_run, preview, incomplete, failed_attention, screened_out, too_fast); empty when kept. exclusions.csv gives the details.",
    ),
];

/// The next-word game's answer columns, after the run columns.
pub const TRIAL_COLUMNS: [(&str, &str, &str); 16] = [
    (
        "passage",
        "string",
        "The passage's id (a Provo text id, a built-in passage or the study's own).",
    ),
    (
        "item",
        "integer",
        "The Latin square's item (1-based); empty without a Latin square.",
    ),
    (
        "condition",
        "string",
        "The Latin square's condition of this passage; empty without one.",
    ),
    (
        "position",
        "integer",
        "The 1-based position of the word to predict in the passage.",
    ),
    (
        "practice",
        "bool",
        "A practice trial (left out of every analysis).",
    ),
    (
        "context",
        "string",
        "The passage up to the word to predict, as shown.",
    ),
    (
        "target_word",
        "string",
        "The passage's word at this position.",
    ),
    ("response", "string", "The response as typed (trimmed)."),
    (
        "response_normalized",
        "string",
        "The response normalised as the analyses compare words (lower case, punctuation at the edges removed).",
    ),
    (
        "correct",
        "bool",
        "The normalised response is the normalised target word.",
    ),
    (
        "first_keystroke_ms",
        "number",
        "From the context being shown to the first keystroke, ms.",
    ),
    (
        "response_time_ms",
        "number",
        "From the context being shown to submitting, ms.",
    ),
    (
        "timestamp",
        "datetime",
        "When the answer was given (RFC 3339).",
    ),
    (
        "model",
        "string",
        "The system whose samples give model_probability (the first of the analysis); empty without samples of this context.",
    ),
    (
        "model_probability",
        "number",
        "That system's probability of the normalised response: its count among the model's sampled next words over all of them (0 when never sampled).",
    ),
    (
        "model_samples",
        "integer",
        "How many sampled words that estimate rests on.",
    ),
];

/// The token games' answer columns, after the run columns.
pub const TOKEN_COLUMNS: [(&str, &str, &str); 16] = [
    ("game", "string", "top1 or two_token."),
    ("passage", "string", "The passage's id."),
    (
        "position",
        "integer",
        "The token's position in the passage (0-based, in GPT-2 tokens).",
    ),
    (
        "round",
        "integer",
        "The two-token game's round at this position (empty in top1).",
    ),
    (
        "practice",
        "bool",
        "A practice trial (left out of every analysis).",
    ),
    ("context", "string", "The text before the token, as shown."),
    (
        "true_token",
        "string",
        "The token that came next in the text.",
    ),
    (
        "guess",
        "string",
        "top1: the token typed; two_token: the other token, drawn from GPT-2.",
    ),
    (
        "correct",
        "bool",
        "top1: the guess is the true token; two_token: the button leaned to the true token.",
    ),
    (
        "button",
        "integer",
        "two_token: the button pressed (0-10, left to right).",
    ),
    (
        "p_true",
        "number",
        "two_token: the probability the button gave the true token.",
    ),
    (
        "reward",
        "number",
        "two_token: the round's weighted log reward.",
    ),
    ("g_true", "number", "GPT-2's probability of the true token."),
    (
        "g_other",
        "number",
        "top1: GPT-2's probability of the guess; two_token: of the other token.",
    ),
    (
        "ms_to_answer",
        "number",
        "From the round being shown to the answer, ms.",
    ),
    (
        "timestamp",
        "datetime",
        "When the answer was given (RFC 3339).",
    ),
];

/// `codebook.csv`: every column of `trials.csv` and `token_trials.csv` with its type and what
/// it holds; `questions` (id, text) give the `q_<id>` columns.
pub fn codebook_csv(questions: &[(String, String)]) -> String {
    let run = RUN_COLUMNS
        .iter()
        .map(|c| ("trials.csv and token_trials.csv", *c));
    let trials = TRIAL_COLUMNS.iter().map(|c| ("trials.csv", *c));
    let tokens = TOKEN_COLUMNS.iter().map(|c| ("token_trials.csv", *c));
    let mut rows: Vec<Vec<String>> = run
        .chain(trials)
        .chain(tokens)
        .map(|(table, (name, kind, about))| {
            vec![table.into(), name.into(), kind.into(), about.into()]
        })
        .collect();
    rows.extend(questions.iter().map(|(id, text)| {
        vec![
            "trials.csv and token_trials.csv".into(),
            format!("q_{id}"),
            "string".into(),
            format!("The answer to the study's question {id:?}: {text}"),
        ]
    }));
    write_delimited(
        &["table", "column", "type", "description"],
        rows.into_iter(),
        Delimiter::Comma,
    )
}
