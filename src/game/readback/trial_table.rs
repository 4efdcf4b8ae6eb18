//! The study's trial table: every answer of every run in one long, tidy CSV for R or Python —
//! one row per answer with who gave it (participant, run, list and how it was chosen, worker
//! type, pilot), what they saw (passage, item, condition, position, context), what they
//! answered (as typed and normalised, with the response times), each model's probability of it
//! and surprisal of the target ([`super::model_columns`]: estimated from each system's samples
//! of that context, as the analyses do), their run's
//! attention checks, questionnaire answers, consent time and device, and the exclusion reason
//! (empty when kept). Token-game answers get a table of their own with the same run columns.
//! [`codebook_csv`] documents every column; `docs/researchers.md` shows R and Python reading it.

use std::collections::BTreeMap;

use super::codebook::{RUN_COLUMNS, RUNS_COLUMNS, TOKEN_COLUMNS, TRIAL_COLUMNS, codebook_csv};
use super::exclusions::Exclusion;
use super::model_columns::ModelColumns;
use super::participant_flow::ParticipantFlow;
use super::results_merge::StudyResults;
use crate::analysis::dataset::Dataset;
use crate::analysis::passage_texts::{PassageTexts, text_fingerprint};
use crate::data::participant_run::ParticipantRun;
use crate::data::rfc3339::epoch_ms;
use crate::data::{Delimiter, spreadsheet_safe_csv, write_delimited};
use crate::text::words::normalize;

/// The study's tables as CSV text, to download or write beside each other.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StudyTables {
    /// `trials.csv`: the next-word game's answers (header only when there are none).
    pub trials: String,
    /// `token_trials.csv`, when the results hold token-game answers.
    pub tokens: Option<String>,
    /// `runs.csv`: one row per run, whatever its state (a withdrawal's fact, not its answers).
    pub runs: String,
    /// `norms.csv`: the analysed answers as cloze norms in Provo's columns.
    pub norms: String,
    /// The participant flow (`flow.csv`, and its figure).
    pub flow: ParticipantFlow,
    /// `codebook.csv`: table, column, type, description.
    pub codebook: String,
    /// `exclusions.csv`.
    pub exclusions: String,
}

/// The suffix of a table's spreadsheet-safe variant (`trials_spreadsheet.csv`).
pub const SPREADSHEET_SUFFIX: &str = "_spreadsheet.csv";

impl StudyTables {
    /// The files as (name, text), in the order they are offered: the exact tables, to read in
    /// R or Python. Each also has a spreadsheet-safe variant ([`spreadsheet_variant`]), made
    /// when it is asked for rather than with every analysis.
    pub fn files(&self) -> Vec<(String, String)> {
        let mut files = vec![("trials.csv".to_string(), self.trials.clone())];
        if let Some(tokens) = &self.tokens {
            files.push(("token_trials.csv".to_string(), tokens.clone()));
        }
        files.push(("runs.csv".to_string(), self.runs.clone()));
        files.push(("norms.csv".to_string(), self.norms.clone()));
        files.push(("flow.csv".to_string(), self.flow.csv()));
        files.push(("codebook.csv".to_string(), self.codebook.clone()));
        files.push(("exclusions.csv".to_string(), self.exclusions.clone()));
        files
    }
}

/// The spreadsheet-safe variant of the table `name` (`trials.csv` → `trials_spreadsheet.csv`):
/// a byte-order mark (Excel then reads UTF-8), and every cell a spreadsheet would run as a
/// formula made text ([`spreadsheet_safe_csv`]).
///
/// ```
/// use clozelab::game::readback::trial_table::spreadsheet_variant;
/// let (name, text) = spreadsheet_variant("runs.csv", "participant\n=HYPERLINK(1)\n");
/// assert_eq!(name, "runs_spreadsheet.csv");
/// assert_eq!(text, "\u{feff}participant\n'=HYPERLINK(1)\n");
/// ```
pub fn spreadsheet_variant(name: &str, text: &str) -> (String, String) {
    let cells = spreadsheet_safe_csv(name, text).unwrap_or_else(|_| text.to_string());
    (spreadsheet_file_name(name), format!("\u{feff}{cells}"))
}

/// The name of a table's spreadsheet-safe variant.
pub fn spreadsheet_file_name(name: &str) -> String {
    format!("{}{SPREADSHEET_SUFFIX}", name.trim_end_matches(".csv"))
}

/// The questions of the results' studies, in the order their configs ask them: (id, what the
/// codebook says of it).
fn questions(results: &StudyResults) -> Vec<(String, String)> {
    let mut seen = Vec::<(String, String)>::new();
    for study in results.studies.values() {
        for q in study.questions_before.iter().chain(&study.questions_after) {
            if !seen.iter().any(|(id, _)| *id == q.id) {
                seen.push((q.id.clone(), q.describe()));
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

/// A time in milliseconds to the microsecond (`performance.now` carries float noise below it).
fn ms_cell(x: Option<f64>) -> String {
    number_cell(x.map(|ms| (ms * 1000.0).round() / 1000.0))
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
        text(|r| r.prolific_study_id.clone()),
        text(|r| r.prolific_session_id.clone()),
        text(|r| r.worker_type.clone()),
        bool_cell(run.is_some_and(|r| r.pilot)),
        text(|r| r.list.clone()),
        text(|r| r.list_chosen_by.clone()),
        text(|r| Some(r.attention_passed.to_string())),
        text(|r| Some(r.attention_failed.to_string())),
        ms_cell(run.and_then(|r| r.median_response_ms)),
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
/// probabilities; `texts` are those the dataset placed answers by.
pub fn study_tables(
    results: &StudyResults,
    exclusions: &[Exclusion],
    data: &Dataset,
    texts: &PassageTexts,
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
    let models = ModelColumns::of(data);
    let further = models.further_columns();
    let header = |answer_columns: &[(&str, &str, &str)], more: &[(String, String, String)]| {
        RUN_COLUMNS
            .iter()
            .chain(answer_columns)
            .map(|(name, _, _)| name.to_string())
            .chain(more.iter().map(|(name, _, _)| name.clone()))
            .chain(questions.iter().map(|(id, _)| format!("q_{id}")))
            .collect::<Vec<String>>()
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
    // A passage's item and condition are those of its own study's Latin square.
    let square_of = |participant: &str, run: &str| {
        texts
            .study_of(participant, run)
            .and_then(|study| results.studies.get(study))
            .and_then(|config| config.latin_square.as_ref())
    };
    let mut responses = results.responses.clone();
    responses.sort_by(|a, b| {
        (&a.participant, &a.run, &a.timestamp).cmp(&(&b.participant, &b.run, &b.timestamp))
    });
    // Each answer's place in its run (1-based, in the order given) and its time since the
    // run's first answer.
    let mut order: BTreeMap<(&str, &str), (usize, Option<f64>)> = BTreeMap::new();
    let placed: Vec<(usize, Option<f64>)> = responses
        .iter()
        .map(|r| {
            let at = epoch_ms(&r.timestamp);
            let (count, first) = order
                .entry((r.participant.as_str(), r.run.as_str()))
                .or_insert((0, at));
            *count += 1;
            (*count, at.zip(*first).map(|(at, first)| at - first))
        })
        .collect();
    let trial_rows = responses
        .iter()
        .zip(placed)
        .map(|(r, (trial_index, elapsed))| {
            let (mut cells, answers) = row_start(&r.participant, &r.run);
            let place = square_of(&r.participant, &r.run).and_then(|s| s.place_of(&r.passage));
            // Placed once: the text id column and the context's words and samples.
            let key = data.key_of(r, texts);
            let context = key.and_then(|k| data.context(k));
            let normalized = if r.normalized.is_empty() {
                normalize(&r.response)
            } else {
                r.normalized.clone()
            };
            let (context_text, target) = match context {
                Some(c) => (c.context.clone(), c.original.clone()),
                None => passage_words(
                    texts.text_of(&r.participant, &r.run, &r.passage),
                    r.position,
                ),
            };
            let key_of_context = context.map(|c| c.key());
            cells.extend([
                r.passage.clone(),
                key.map(|k| k.text_id.to_string()).unwrap_or_default(),
                texts
                    .text_of(&r.participant, &r.run, &r.passage)
                    .map(text_fingerprint)
                    .unwrap_or_default(),
                place.map(|(item, _)| item.to_string()).unwrap_or_default(),
                place.map(|(_, c)| c.to_string()).unwrap_or_default(),
                r.position.to_string(),
                bool_cell(r.practice),
                context_text,
                target.clone(),
                r.response.clone(),
                normalized.clone(),
                bool_cell(!normalized.is_empty() && normalized == normalize(&target)),
                ms_cell(r.first_keystroke_ms),
                ms_cell(r.response_time_ms),
                r.timestamp.clone(),
                trial_index.to_string(),
                ms_cell(elapsed),
            ]);
            cells.extend(models.first_cells(key_of_context, &normalized));
            cells.extend(models.further_cells(key_of_context, &normalized));
            cells.extend(answers);
            cells
        });
    let header_trials = header(&TRIAL_COLUMNS, &further);
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
                ms_cell(r.ms_to_answer),
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
                ms_cell(r.ms_to_answer),
                r.timestamp.clone(),
            ]);
            cells.extend(answers);
            cells
        });
        let header_tokens = header(&TOKEN_COLUMNS, &[]);
        let refs: Vec<&str> = header_tokens.iter().map(String::as_str).collect();
        write_delimited(&refs, top1.chain(two), Delimiter::Comma)
    });
    let run_rows = results.participants.iter().map(|run| {
        let (mut cells, answers) = row_start(&run.participant, &run.run);
        cells.extend([
            run.answered.to_string(),
            run.planned.map(|n| n.to_string()).unwrap_or_default(),
            run.bundles.to_string(),
            run.warnings.join("; "),
        ]);
        cells.extend(answers);
        cells
    });
    let header_runs = header(&RUNS_COLUMNS, &[]);
    let refs: Vec<&str> = header_runs.iter().map(String::as_str).collect();
    let runs_csv = write_delimited(&refs, run_rows, Delimiter::Comma);
    let kept: Vec<&crate::data::ResponseRecord> = results
        .responses
        .iter()
        .filter(|r| !excluded.contains_key(&(r.participant.as_str(), r.run.as_str())))
        .collect();
    StudyTables {
        trials,
        tokens,
        runs: runs_csv,
        norms: super::study_norms::norms_csv(&kept, data, texts),
        flow: ParticipantFlow::of(&results.participants, exclusions),
        codebook: codebook_csv(&questions, &further),
        exclusions: super::exclusions::exclusions_csv(exclusions),
    }
}

/// The context and target word of a passage position from the passages' texts (an answer
/// whose context the dataset does not hold).
fn passage_words(text: Option<&str>, position: u32) -> (String, String) {
    let Some(text) = text else {
        return Default::default();
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let at = position as usize;
    if at < 1 || at > words.len() {
        return Default::default();
    }
    (words[..at - 1].join(" "), words[at - 1].to_string())
}
