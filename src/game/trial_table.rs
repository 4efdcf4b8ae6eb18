//! The study's trial table: every answer of every run in one long, tidy CSV for R or Python —
//! one row per answer with who gave it (participant, run, list and how it was chosen, worker
//! type, pilot), what they saw (passage, item, condition, position, context), what they
//! answered (as typed and normalised, with the response times), the model's probability of it
//! (estimated from the first system's samples of that context, as the analyses do), their run's
//! attention checks, questionnaire answers, consent time and device, and the exclusion reason
//! (empty when kept). Token-game answers get a table of their own with the same run columns.
//! [`codebook_csv`] documents every column; `docs/researchers.md` shows R and Python reading it.

use std::collections::BTreeMap;

use super::exclusions::Exclusion;
use super::results_merge::StudyResults;
use crate::analysis::dataset::Dataset;
use crate::data::participant_run::ParticipantRun;
use crate::data::{Delimiter, write_delimited};
use crate::text::words::normalize;

/// The run columns every table starts with: (name, type, description).
const RUN_COLUMNS: [(&str, &str, &str); 17] = [
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
        "complete, incomplete, withdrawn or screened_out.",
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
const TRIAL_COLUMNS: [(&str, &str, &str); 16] = [
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
const TOKEN_COLUMNS: [(&str, &str, &str); 16] = [
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

/// The study's tables as CSV text, to download or write beside each other.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StudyTables {
    /// `trials.csv`: the next-word game's answers (header only when there are none).
    pub trials: String,
    /// `token_trials.csv`, when the results hold token-game answers.
    pub tokens: Option<String>,
    /// `codebook.csv`: table, column, type, description.
    pub codebook: String,
    /// `exclusions.csv`.
    pub exclusions: String,
}

impl StudyTables {
    /// The files as (name, text), in the order they are offered.
    pub fn files(&self) -> Vec<(String, String)> {
        let mut files = vec![("trials.csv".to_string(), self.trials.clone())];
        if let Some(tokens) = &self.tokens {
            files.push(("token_trials.csv".to_string(), tokens.clone()));
        }
        files.push(("codebook.csv".to_string(), self.codebook.clone()));
        files.push(("exclusions.csv".to_string(), self.exclusions.clone()));
        files
    }
}

/// The questions of the results' studies, in the order their configs ask them: (id, text).
fn questions(results: &StudyResults) -> Vec<(String, String)> {
    let mut seen = Vec::<(String, String)>::new();
    for study in results.studies.values() {
        for q in study.questions_before.iter().chain(&study.questions_after) {
            if !seen.iter().any(|(id, _)| *id == q.id) {
                seen.push((q.id.clone(), q.text.clone()));
            }
        }
    }
    // Answers to questions no config names (a config changed mid-study) still get a column.
    for run in &results.participants {
        for (id, _) in &run.questions {
            if !seen.iter().any(|(known, _)| known == id) {
                seen.push((id.clone(), String::new()));
            }
        }
    }
    seen
}

fn bool_cell(b: bool) -> String {
    if b { "true" } else { "false" }.to_string()
}

fn number_cell(x: Option<f64>) -> String {
    x.map(|x| format!("{x}")).unwrap_or_default()
}

/// The run columns of `run` (`None`: a run no bundle described), then its question answers.
fn run_cells(
    run: Option<&ParticipantRun>,
    key: (&str, &str),
    excluded: Option<&Exclusion>,
    questions: &[(String, String)],
) -> (Vec<String>, Vec<String>) {
    let text = |f: fn(&ParticipantRun) -> Option<String>| run.and_then(f).unwrap_or_default();
    let cells = vec![
        text(|r| Some(r.study_id.clone())),
        key.0.to_string(),
        key.1.to_string(),
        text(|r| Some(r.state.to_string())),
        text(|r| r.worker_type.clone()),
        bool_cell(run.is_some_and(|r| r.pilot)),
        text(|r| r.list.clone()),
        text(|r| r.list_chosen_by.clone()),
        text(|r| Some(r.attention_passed.to_string())),
        text(|r| Some(r.attention_failed.to_string())),
        number_cell(run.and_then(|r| r.median_response_ms)),
        text(|r| r.consent_at.clone()),
        text(|r| r.user_agent.clone()),
        text(|r| r.screen.clone()),
        text(|r| r.touch.map(bool_cell)),
        bool_cell(excluded.is_some()),
        excluded.map(Exclusion::reason).unwrap_or_default(),
    ];
    let answers = questions
        .iter()
        .map(|(id, _)| {
            run.and_then(|r| r.questions.iter().find(|(q, _)| q == id))
                .map(|(_, a)| a.clone())
                .unwrap_or_default()
        })
        .collect();
    (cells, answers)
}

/// The tables of `results` (every run, excluded or not), `exclusions` naming who is left out,
/// and `data` (the analysed dataset, with the model's samples) giving contexts and the model's
/// probabilities; `passages` are the (id, text) the dataset placed non-Provo answers by.
pub fn study_tables(
    results: &StudyResults,
    exclusions: &[Exclusion],
    data: &Dataset,
    passages: &[(String, String)],
) -> StudyTables {
    let questions = questions(results);
    let runs: BTreeMap<(&str, &str), &ParticipantRun> = results
        .participants
        .iter()
        .map(|r| ((r.participant.as_str(), r.run.as_str()), r))
        .collect();
    let excluded: BTreeMap<(&str, &str), &Exclusion> = exclusions
        .iter()
        .map(|e| ((e.participant.as_str(), e.run.as_str()), e))
        .collect();
    let header = |answer_columns: &[(&str, &str, &str)]| -> Vec<String> {
        RUN_COLUMNS
            .iter()
            .chain(answer_columns)
            .map(|(name, _, _)| name.to_string())
            .chain(questions.iter().map(|(id, _)| format!("q_{id}")))
            .collect()
    };
    let row_start = |participant: &str, run: &str| {
        let key = (participant, run);
        run_cells(
            runs.get(&key).copied(),
            key,
            excluded.get(&key).copied(),
            &questions,
        )
    };
    let squares: Vec<&super::latin_square::LatinSquare> = results
        .studies
        .values()
        .filter_map(|s| s.latin_square.as_ref())
        .collect();
    let mut responses = results.responses.clone();
    responses.sort_by(|a, b| {
        (&a.participant, &a.run, &a.timestamp).cmp(&(&b.participant, &b.run, &b.timestamp))
    });
    let trial_rows = responses.iter().map(|r| {
        let (mut cells, answers) = row_start(&r.participant, &r.run);
        let place = squares.iter().find_map(|s| s.place_of(&r.passage));
        let context = data.context_of(&r.passage, r.position, passages);
        let normalized = if r.normalized.is_empty() {
            normalize(&r.response)
        } else {
            r.normalized.clone()
        };
        let (context_text, target) = match context {
            Some(c) => (c.context.clone(), c.original.clone()),
            None => passage_words(passages, &r.passage, r.position),
        };
        let model = context.and_then(|c| {
            data.systems.iter().find_map(|(name, samples)| {
                let s = samples.get(&c.key())?;
                let total: f64 = s.words.values().sum();
                (total > 0.0).then(|| {
                    let count = s.words.get(&normalized).copied().unwrap_or(0.0);
                    (name.clone(), count / total, total)
                })
            })
        });
        cells.extend([
            r.passage.clone(),
            place.map(|(item, _)| item.to_string()).unwrap_or_default(),
            place.map(|(_, c)| c.to_string()).unwrap_or_default(),
            r.position.to_string(),
            bool_cell(r.practice),
            context_text,
            target.clone(),
            r.response.clone(),
            normalized.clone(),
            bool_cell(!normalized.is_empty() && normalized == normalize(&target)),
            number_cell(r.first_keystroke_ms),
            number_cell(r.response_time_ms),
            r.timestamp.clone(),
            model.as_ref().map(|m| m.0.clone()).unwrap_or_default(),
            number_cell(model.as_ref().map(|m| m.1)),
            model.as_ref().map(|m| m.2.to_string()).unwrap_or_default(),
        ]);
        cells.extend(answers);
        cells
    });
    let header_trials = header(&TRIAL_COLUMNS);
    let refs: Vec<&str> = header_trials.iter().map(String::as_str).collect();
    let trials = write_delimited(&refs, trial_rows, Delimiter::Comma);
    let tokens = (!results.top1.is_empty() || !results.two_token.is_empty()).then(|| {
        let top1 = results.top1.iter().map(|r| {
            let (mut cells, answers) = row_start(&r.participant, &r.run);
            cells.extend([
                "top1".to_string(),
                r.passage.clone(),
                r.position.to_string(),
                String::new(),
                bool_cell(r.practice),
                r.context.clone(),
                r.true_token_text.clone(),
                r.guess.clone(),
                bool_cell(r.correct),
                String::new(),
                String::new(),
                String::new(),
                number_cell(r.g_true),
                number_cell(r.g_guess),
                number_cell(r.ms_to_answer),
                r.timestamp.clone(),
            ]);
            cells.extend(answers);
            cells
        });
        let two = results.two_token.iter().map(|r| {
            let (mut cells, answers) = row_start(&r.participant, &r.run);
            cells.extend([
                "two_token".to_string(),
                r.passage.clone(),
                r.position.to_string(),
                r.round.to_string(),
                bool_cell(r.practice),
                r.context.clone(),
                r.true_token_text.clone(),
                r.other_token_text.clone(),
                bool_cell(r.p_true > 0.5),
                r.button.to_string(),
                format!("{}", r.p_true),
                format!("{}", r.reward),
                format!("{}", r.g_true),
                format!("{}", r.g_other),
                number_cell(r.ms_to_answer),
                r.timestamp.clone(),
            ]);
            cells.extend(answers);
            cells
        });
        let header_tokens = header(&TOKEN_COLUMNS);
        let refs: Vec<&str> = header_tokens.iter().map(String::as_str).collect();
        write_delimited(&refs, top1.chain(two), Delimiter::Comma)
    });
    StudyTables {
        trials,
        tokens,
        codebook: codebook_csv(&questions),
        exclusions: super::exclusions::exclusions_csv(exclusions),
    }
}

/// The context and target word of a passage position from the passages' texts (an answer
/// whose context the dataset does not hold).
fn passage_words(passages: &[(String, String)], passage: &str, position: u32) -> (String, String) {
    let Some((_, text)) = passages.iter().find(|(id, _)| id == passage) else {
        return Default::default();
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let at = position as usize;
    if at < 1 || at > words.len() {
        return Default::default();
    }
    (words[..at - 1].join(" "), words[at - 1].to_string())
}

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
