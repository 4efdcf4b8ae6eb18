//! The trial table's column dictionary: every column of `trials.csv` and `token_trials.csv`
//! (name, type, what it holds), written as `codebook.csv` beside them and listed in
//! `docs/trial-table.md` (a test checks the docs name every column).

use crate::data::{Delimiter, write_delimited};

/// The run columns every table starts with: (name, type, description).
pub const RUN_COLUMNS: [(&str, &str, &str); 19] = [
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
        "prolific_study_id",
        "string",
        "Prolific's STUDY_ID from the study link; empty when it carried none.",
    ),
    (
        "prolific_session_id",
        "string",
        "Prolific's SESSION_ID from the study link; empty when it carried none.",
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
pub const TRIAL_COLUMNS: [(&str, &str, &str); 25] = [
    (
        "passage",
        "string",
        "The passage's id (a Provo text id, a built-in passage or the study's own).",
    ),
    (
        "text_id",
        "integer",
        "The text the context belongs to: Provo's number for a Provo text, else the passage's own text id (from its id and text: the same id and text are the same passage in every study; model samples name contexts by it). Empty when the passage's text is unknown.",
    ),
    (
        "text_fingerprint",
        "string",
        "The first 8 hex digits of SHA-256 of the passage's text as this run saw it (two studies' passages of one id differ here when their texts do); empty for a Provo text given by number.",
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
        "The response normalised as the analyses compare words: Unicode NFC, lower case, and every character that is not a letter, digit or combining mark removed, inside the word too (don't → dont, U.S. → us, 10,000 → 10000, Café! → café).",
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
        "trial_index",
        "integer",
        "The answer's place in its run, 1-based, in the order given (practice included; as jsPsych's trial_index).",
    ),
    (
        "time_elapsed_ms",
        "number",
        "From the run's first answer to this one, ms (as jsPsych's time_elapsed, counted from the first answer).",
    ),
    (
        "model",
        "string",
        "The system whose samples give model_probability (the first of the analysis; further ones in model_2, model_3, …); empty without its samples of this context.",
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
    (
        "model_entropy_bits",
        "number",
        "Entropy of that system's next word in this context, bits, from its samples (Miller–Madow corrected; low when the samples miss the distribution's tail).",
    ),
    (
        "model_entropy_se_bits",
        "number",
        "Standard error of model_entropy_bits (delta method over the samples).",
    ),
    (
        "surprisal_model",
        "string",
        "The model whose surprisal of the target word follows (the first given: `clozelab results --model`, or the Analysis page's first model; further ones in surprisal_model_2, …); empty without one.",
    ),
    (
        "surprisal_bits",
        "number",
        "Surprisal of target_word after the context, bits: the canonical tokenisation with the beginning-of-word correction (Pimentel & Meister 2024; equal to minicons' bow_correction=True), the text read after the tokenizer's begin-of-text token (GPT-2's and Pythia's <|endoftext|>, SmolLM2-Instruct's <|im_start|>).",
    ),
    (
        "surprisal_all_segmentations_bits",
        "number",
        "−log2 of the model's probability that the next word is the target word (clozelab's word rule: punctuation ends a word), summed over every tokenisation; empty for a target starting with punctuation.",
    ),
];

/// `runs.csv`'s columns after the run columns: one row per run, whatever its state.
pub const RUNS_COLUMNS: [(&str, &str, &str); 4] = [
    (
        "answered",
        "integer",
        "Answers the run holds (0 for a withdrawal, whose answers were deleted, and for a run screened out or left before its first word).",
    ),
    (
        "planned",
        "integer",
        "Answers its plan has; empty when unknown (answers from a long-format download).",
    ),
    (
        "bundles",
        "integer",
        "Bundles its answers arrived in (each answer is sent again at the end).",
    ),
    (
        "flagged",
        "string",
        "Why its data does not add up (more answers than planned, an answer arriving again with another response); empty when it does.",
    ),
];

/// `norms.csv`'s columns: the study's own norms in Provo's format.
pub const NORMS_CODEBOOK: [(&str, &str, &str); 9] = [
    ("Text_ID", "integer", "As trials.csv's text_id."),
    ("Text", "string", "The passage's text."),
    (
        "Word_Number",
        "integer",
        "The position of the word to predict (as position).",
    ),
    (
        "Word",
        "string",
        "The passage's word there (as target_word).",
    ),
    (
        "Response",
        "string",
        "A response, normalised (as response_normalized).",
    ),
    (
        "Response_Count",
        "integer",
        "How many analysed participants gave it (each participant's first answer to a context once).",
    ),
    (
        "Total_Response_Count",
        "integer",
        "How many analysed participants answered this context.",
    ),
    (
        "Response_Proportion",
        "number",
        "Response_Count / Total_Response_Count: the response's cloze probability.",
    ),
    ("Passage", "string", "The study's passage id (as passage)."),
];

/// `flow.csv`'s columns.
pub const FLOW_CODEBOOK: [(&str, &str, &str); 3] = [
    (
        "stage",
        "string",
        "started (every run), withdrew, left_out (one row per reason, each run under the first of its reasons) or analysed (one row per state): started = withdrew + left_out + analysed.",
    ),
    (
        "detail",
        "string",
        "The exclusion reason's code (left_out) or the run's state (analysed).",
    ),
    ("runs", "integer", "How many runs."),
];

/// The tables whose rows begin with the run columns.
pub const RUN_TABLES: &str = "trials.csv; token_trials.csv; runs.csv";

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
/// it holds; `questions` (id, text) give the `q_<id>` columns, `further_models` the trial
/// table's columns of the second and later models (name, type, description).
pub fn codebook_csv(
    questions: &[(String, String)],
    further_models: &[(String, String, String)],
) -> String {
    let run = RUN_COLUMNS.iter().map(|c| (RUN_TABLES, *c));
    let trials = TRIAL_COLUMNS.iter().map(|c| ("trials.csv", *c));
    let tokens = TOKEN_COLUMNS.iter().map(|c| ("token_trials.csv", *c));
    let runs = RUNS_COLUMNS.iter().map(|c| ("runs.csv", *c));
    let row = |(table, (name, kind, about)): (&str, (&str, &str, &str))| {
        vec![table.into(), name.into(), kind.into(), about.into()]
    };
    let mut rows: Vec<Vec<String>> = run.chain(trials).map(row).collect();
    rows.extend(further_models.iter().map(|(name, kind, about)| {
        vec![
            "trials.csv".into(),
            name.clone(),
            kind.clone(),
            about.clone(),
        ]
    }));
    rows.extend(tokens.chain(runs).map(row));
    rows.extend(questions.iter().map(|(id, about)| {
        vec![
            RUN_TABLES.into(),
            format!("q_{id}"),
            "string".into(),
            format!("The answer to the study's question {id:?}: {about}"),
        ]
    }));
    rows.extend(
        NORMS_CODEBOOK
            .iter()
            .map(|c| ("norms.csv", *c))
            .chain(FLOW_CODEBOOK.iter().map(|c| ("flow.csv", *c)))
            .map(|(table, (name, kind, about))| {
                vec![table.into(), name.into(), kind.into(), about.into()]
            }),
    );
    write_delimited(
        &["table", "column", "type", "description"],
        rows.into_iter(),
        Delimiter::Comma,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scoring rule the codebook gives is the one the code applies: each of its examples
    /// (`typed → normalised`) is what `normalize` makes of it.
    #[test]
    fn the_scoring_rule_is_the_codes() {
        let (_, _, description) = TRIAL_COLUMNS
            .iter()
            .find(|(name, _, _)| *name == "response_normalized")
            .expect("the column");
        let examples = description
            .split_once('(')
            .and_then(|(_, rest)| rest.rsplit_once(')'))
            .map(|(inside, _)| inside)
            .expect("examples in parentheses");
        let mut checked = 0;
        for example in examples.split(", ") {
            let (typed, normalised) = example.split_once(" → ").expect("typed → normalised");
            assert_eq!(
                crate::text::words::normalize(typed),
                normalised,
                "{example}"
            );
            checked += 1;
        }
        assert!(checked >= 3, "{examples}");
    }
}
