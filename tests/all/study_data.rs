//! A study's data for the paper: questions, a Latin square, the trial table with its codebook
//! and exclusions, and the docs' snippets reproducing Table 1's TVD from it.

use std::collections::BTreeMap;

use clozelab::analysis::passage_texts::own_text_id;
use clozelab::analysis::table1::{Table1Options, compute_on};
use clozelab::data::ResponseRecord;
use clozelab::data::participant_run::RunState;
use clozelab::game::design::questions::QuestionAnswer;
use clozelab::game::design::study::{StudyConfig, StudyError};
use clozelab::game::readback::exclusions::ExclusionRules;
use clozelab::game::readback::results::StudyResults;
use clozelab::game::readback::results_dataset::dataset_from_files;
use clozelab::game::run::export::{DeviceInfo, ExportKind, Manifest, ModelInfo, RunDetails};

const PASSAGES: [(&str, &str); 4] = [
    ("a_high", "The baker sold fresh bread today"),
    ("a_low", "The person saw some bread today"),
    ("b_high", "She poured milk into the cup"),
    ("b_low", "She put something into the box"),
];

fn config_json() -> String {
    let texts: Vec<_> = PASSAGES
        .iter()
        .map(|(id, text)| serde_json::json!({"id": id, "title": id, "text": text}))
        .collect();
    serde_json::json!({
        "title": "Constraint study",
        "study_id": "constraint-1",
        "texts": texts,
        "latin_square": {"conditions": ["high", "low"],
                         "items": [["a_high", "a_low"], ["b_high", "b_low"]]},
        "questions_before": [
            {"id": "native_speaker", "text": "Is English your native language?",
             "kind": "single_choice", "options": ["Yes", "No"], "screen_out": ["No"]},
            {"id": "age", "text": "Your age?", "kind": "number", "min": 16, "max": 120}
        ],
        "questions_after": [
            {"id": "looked_up", "text": "Did you look anything up?", "kind": "single_choice",
             "options": ["Yes", "No"]}
        ],
        "screened_out_url": "https://app.prolific.com/submissions/complete?cc=SCREENED",
        "attention_checks": [{"id": "purple", "passage": "a_high", "after": 1,
                              "instruction": "Type purple.", "answer": "purple"}]
    })
    .to_string()
}

fn config() -> StudyConfig {
    StudyConfig::from_json(&config_json()).unwrap()
}

/// One run's bundle: `answers` to the plan's positions in order, each taking `ms`.
struct Run<'a> {
    participant: &'a str,
    list: &'a str,
    worker_type: &'a str,
    answers: &'a [&'a str],
    ms: f64,
    native: &'a str,
    attention: &'a str,
}

fn bundle(run: &Run) -> String {
    let study = config();
    let params = BTreeMap::from([("list".to_string(), run.list.to_string())]);
    let mut plan = study.plan(run.participant, &params).unwrap();
    plan.run = format!("jatos-{}", run.participant);
    let mut manifest = Manifest::new(&ModelInfo::default(), &study, &plan, 0, "now");
    manifest.worker_type = Some(run.worker_type.to_string());
    let screened = run.native == "No";
    let mut questions = vec![QuestionAnswer {
        question: "native_speaker".into(),
        answer: run.native.into(),
        response_time_ms: Some(900.0),
        timestamp: "2026-11-27T10:00:05Z".into(),
        screened_out: screened,
    }];
    if !screened {
        questions.push(QuestionAnswer {
            question: "age".into(),
            answer: "30".into(),
            response_time_ms: Some(1200.0),
            timestamp: "2026-11-27T10:00:06Z".into(),
            screened_out: false,
        });
        questions.push(QuestionAnswer {
            question: "looked_up".into(),
            answer: "No".into(),
            response_time_ms: None,
            timestamp: "2026-11-27T10:05:00Z".into(),
            screened_out: false,
        });
    }
    let attention = if plan.items.iter().any(|(p, _)| p.id == "a_high") && !screened {
        let check = &study.attention_checks[0];
        vec![clozelab::game::design::attention::AttentionResult::new(
            run.participant,
            check,
            run.attention,
            Some(1000.0),
            "now",
        )]
    } else {
        Vec::new()
    };
    let manifest = manifest.with_details(RunDetails {
        consent_at: Some("2026-11-27T10:00:00Z".into()),
        device: Some(DeviceInfo {
            user_agent: "Mozilla/5.0 (iPhone)".into(),
            screen_width: 390,
            screen_height: 844,
            touch: true,
        }),
        questions,
        attention,
    });
    let positions = plan
        .items
        .iter()
        .flat_map(|(p, _)| (2..=p.words().len() as u32).map(move |k| (p.id.clone(), k)));
    let records: Vec<ResponseRecord> = positions
        .zip(run.answers.iter().cycle())
        .take(if screened { 0 } else { usize::MAX })
        .map(|((passage, position), word)| ResponseRecord {
            participant: run.participant.into(),
            passage,
            position,
            response: word.to_string(),
            response_time_ms: Some(run.ms),
            timestamp: format!("2026-11-27T10:01:{position:02}Z"),
            normalized: String::new(),
            first_keystroke_ms: Some(run.ms / 2.0),
            practice: false,
            run: plan.run.clone(),
        })
        .collect();
    ExportKind::Bundle
        .render(&records, &[], Some(&manifest))
        .unwrap()
}

fn runs() -> Vec<Run<'static>> {
    let words: &[&str] = &["bread", "milk", "the", "cup", "today"];
    let other: &[&str] = &["Water", "sold", "cat", "box", "bread"];
    let run = |participant, list, worker_type, answers, ms, native, attention| Run {
        participant,
        list,
        worker_type,
        answers,
        ms,
        native,
        attention,
    };
    vec![
        run("P1", "A", "GeneralMultiple", words, 1500.0, "Yes", "purple"),
        run("P2", "B", "GeneralMultiple", other, 1400.0, "Yes", "purple"),
        run("P3", "A", "GeneralMultiple", other, 1300.0, "Yes", "green"),
        run("P4", "A", "GeneralMultiple", words, 1300.0, "No", ""),
        run("P5", "B", "Jatos", words, 1300.0, "Yes", "purple"),
        run("P6", "A", "GeneralMultiple", words, 200.0, "Yes", "purple"),
        run("P7", "B", "GeneralMultiple", words, 1800.0, "Yes", "purple"),
    ]
}

/// GPT-2-like samples of every context of the study's passages, each named by its passage's
/// own text id (from the passage's id and text).
fn samples() -> String {
    let mut lines = Vec::new();
    for (id, text) in PASSAGES {
        for word_num in 2..=text.split_whitespace().count() as u32 {
            lines.push(
                serde_json::json!({"text_id": own_text_id(id, text), "passage": id, "word_num": word_num,
                    "samples": {"bread": 5 + word_num, "milk": 3, "the": 2 * word_num, "water": 1}})
                .to_string(),
            );
        }
    }
    lines.join("\n")
}

fn files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = runs()
        .iter()
        .map(|r| (format!("{}.json", r.participant), bundle(r)))
        .collect();
    files.push(("samples_gpt2_study.jsonl".into(), samples()));
    files
}

fn rules() -> ExclusionRules {
    ExclusionRules {
        test_runs: true,
        incomplete: false,
        failed_attention: true,
        screened_out: true,
        min_median_response_ms: Some(500.0),
    }
}

fn parse_csv(text: &str) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .cloned()
                .zip(r.iter().map(String::from))
                .collect()
        })
        .collect();
    (header, rows)
}

#[test]
fn a_latin_square_makes_balanced_lists_and_bad_squares_are_refused() {
    let study = config();
    let lists: Vec<(&str, Vec<&str>)> = study
        .lists
        .iter()
        .map(|l| {
            (
                l.name.as_str(),
                l.passages.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        lists,
        [
            ("A", vec!["a_high", "b_low"]),
            ("B", vec!["a_low", "b_high"])
        ]
    );
    let with = |change: &dyn Fn(&mut serde_json::Value)| {
        let mut value: serde_json::Value = serde_json::from_str(&config_json()).unwrap();
        change(&mut value);
        StudyConfig::from_json(&value.to_string())
    };
    let err = with(&|v| v["latin_square"]["items"] = serde_json::json!([["a_high", "a_low"]]))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("1 items do not divide into 2 conditions"),
        "{err}"
    );
    let short = with(&|v| v["latin_square"]["items"][1] = serde_json::json!(["b_high"]));
    assert!(matches!(short, Err(StudyError::LatinSquare(_))));
    // Lists written by hand beside the square must still show each item once.
    let err = with(&|v| {
        v["lists"] = serde_json::json!([{"name": "A", "passages": ["a_high", "a_low"]},
                                         {"name": "B", "passages": ["b_high", "b_low"]}])
    })
    .unwrap_err();
    assert!(
        err.to_string().contains("list \"A\" shows item 1 2 times"),
        "{err}"
    );
    // The design as a whole: two identical lists (condition confounded with item), a single
    // list, a filler in one list only are refused; fillers in every list, and the lists in
    // another order, are not.
    let lists =
        |lists: serde_json::Value| move |v: &mut serde_json::Value| v["lists"] = lists.clone();
    let refused = |change: serde_json::Value, why: &str| {
        let err = with(&lists(change)).unwrap_err().to_string();
        assert!(err.contains(why), "{why}: {err}");
    };
    refused(
        serde_json::json!([{"name": "A", "passages": ["a_high", "b_low"]},
                           {"name": "B", "passages": ["a_high", "b_low"]}]),
        "item 1 is in condition \"high\" in 2 lists",
    );
    refused(
        serde_json::json!([{"name": "A", "passages": ["a_high", "b_low"]}]),
        "1 lists for 2 conditions",
    );
    refused(
        serde_json::json!([{"name": "A", "passages": ["a_high", "b_low", "kitchen"]},
                           {"name": "B", "passages": ["a_low", "b_high"]}]),
        "other passages outside the square",
    );
    let fillers = with(&lists(serde_json::json!([
        {"name": "A", "passages": ["kitchen", "a_high", "b_low"]},
        {"name": "B", "passages": ["b_high", "kitchen", "a_low"]}])))
    .unwrap();
    assert_eq!(fillers.lists[1].passages, ["b_high", "kitchen", "a_low"]);
    // A practice passage inside the square, and a participant shown part of a list.
    let err = with(&|v| v["practice"] = "a_low".into()).unwrap_err();
    assert!(matches!(
        err,
        StudyError::LatinSquare(
            clozelab::game::design::latin_square::LatinSquareError::PracticeInSquare(_)
        )
    ));
    let err = with(&|v| v["passages_per_participant"] = 1.into()).unwrap_err();
    assert!(
        err.to_string()
            .contains("passages_per_participant is 1, but each list of the Latin square has 2"),
        "{err}"
    );
    assert!(with(&|v| v["passages_per_participant"] = 2.into()).is_ok());
}

#[test]
fn questions_are_checked_answered_and_screen_out() {
    let with = |change: &dyn Fn(&mut serde_json::Value)| {
        let mut value: serde_json::Value = serde_json::from_str(&config_json()).unwrap();
        change(&mut value);
        StudyConfig::from_json(&value.to_string())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        with(&|v| v["questions_before"][1]["text"] = " ".into()),
        "question \"age\" has no text"
    );
    assert!(
        with(&|v| v
            .as_object_mut()
            .unwrap()
            .remove("screened_out_url")
            .map_or((), |_| ()))
        .contains("no screened_out_url")
    );
    assert!(
        with(&|v| v["questions_after"][0]["screen_out"] = serde_json::json!(["Yes"]))
            .contains("only a choice asked before the passages")
    );
    assert!(
        with(&|v| v["questions_before"][0]["screen_out"] = serde_json::json!(["Never"]))
            .contains("not one of its options")
    );
    assert!(with(&|v| v["questions_before"][1]["id"] = "Age!".into()).contains("names a column"));
    let study = config();
    let native = &study.questions_before[0];
    assert_eq!(native.answer(&["No".into()]).as_deref(), Ok("No"));
    assert!(native.screens_out("No"));
    assert!(native.answer(&["Maybe".into()]).is_err());
    let age = &study.questions_before[1];
    assert!(age.answer(&["abc".into()]).is_err());
    assert_eq!(age.answer(&["42,0".into()]).as_deref(), Ok("42"));
}

#[test]
fn the_trial_table_holds_every_answer_with_what_was_played() {
    let study = dataset_from_files(&files(), &[], rules()).unwrap();
    let tables = study.tables().unwrap();
    let (header, rows) = parse_csv(&tables.trials);
    // The codebook names every column of trials.csv, in order.
    let (_, codebook) = parse_csv(&tables.codebook);
    let documented: Vec<&str> = codebook
        .iter()
        .filter(|r| r["table"].split("; ").any(|t| t == "trials.csv"))
        .map(|r| r["column"].as_str())
        .collect();
    assert_eq!(header, documented);
    assert!(header.ends_with(&[
        "q_native_speaker".into(),
        "q_age".into(),
        "q_looked_up".into()
    ]));
    // Six runs of eight answers (two passages of six words); P4 was screened out.
    assert_eq!(rows.len(), 6 * 10);
    let row = rows
        .iter()
        .find(|r| r["participant"] == "P1" && r["passage"] == "a_high" && r["position"] == "3")
        .unwrap();
    let expected = [
        ("study_id", "constraint-1"),
        ("run", "jatos-P1"),
        ("run_state", "complete"),
        ("worker_type", "GeneralMultiple"),
        ("pilot", "false"),
        ("list", "A"),
        ("list_chosen_by", "link"),
        ("attention_passed", "1"),
        ("attention_failed", "0"),
        ("median_response_ms", "1500"),
        ("consent_at", "2026-11-27T10:00:00Z"),
        ("user_agent", "Mozilla/5.0 (iPhone)"),
        ("screen", "390x844"),
        ("touch", "true"),
        ("excluded", "false"),
        ("exclusion_reason", ""),
        ("item", "1"),
        ("condition", "high"),
        ("practice", "false"),
        ("context", "The baker"),
        ("target_word", "sold"),
        ("response", "milk"),
        ("response_normalized", "milk"),
        ("correct", "false"),
        ("first_keystroke_ms", "750"),
        ("response_time_ms", "1500"),
        ("timestamp", "2026-11-27T10:01:03Z"),
        ("model", "samples_gpt2_study"),
        ("model_samples", "18"),
        ("q_native_speaker", "Yes"),
        ("q_age", "30"),
        ("q_looked_up", "No"),
    ];
    for (column, value) in expected {
        assert_eq!(row[column], value, "{column}");
    }
    // 3 of (5 + 3) + 3 + (2 × 3) + 1 samples of the word after "The baker".
    let p: f64 = row["model_probability"].parse().unwrap();
    assert!((p - 3.0 / 18.0).abs() < 1e-12, "{p}");
    let b_row = rows
        .iter()
        .find(|r| r["participant"] == "P2" && r["passage"] == "b_high" && r["position"] == "2")
        .unwrap();
    assert_eq!(
        (
            b_row["item"].as_str(),
            b_row["condition"].as_str(),
            b_row["list"].as_str()
        ),
        ("2", "high", "B")
    );
    assert_eq!(b_row["response_normalized"], "water");
    let reasons: BTreeMap<&str, &str> = rows
        .iter()
        .map(|r| (r["participant"].as_str(), r["exclusion_reason"].as_str()))
        .collect();
    assert_eq!(
        reasons,
        BTreeMap::from([
            ("P1", ""),
            ("P2", ""),
            ("P3", "failed_attention"),
            ("P5", "jatos_test_run"),
            ("P6", "too_fast"),
            ("P7", "")
        ])
    );
    let (_, exclusions) = parse_csv(&tables.exclusions);
    let listed: Vec<(&str, &str)> = exclusions
        .iter()
        .map(|r| (r["participant"].as_str(), r["reason"].as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("P3", "failed_attention"),
            ("P4", "screened_out"),
            ("P5", "jatos_test_run"),
            ("P6", "too_fast")
        ]
    );
    assert!(exclusions[3]["detail"].contains("median response time 200 ms, under 500 ms"));
    let screened = study
        .data
        .runs
        .iter()
        .find(|r| r.participant == "P4")
        .unwrap();
    assert_eq!(screened.state, RunState::ScreenedOut);
    assert_eq!(screened.questions, [("native_speaker".into(), "No".into())]);
    // The analysis counts only the kept runs' answers, and says who was left out.
    let answers: u32 = study
        .data
        .norms
        .iter()
        .map(|c| c.human.values().sum::<u32>())
        .sum();
    assert_eq!(answers, 3 * 10);
    assert_eq!(
        study.left_out().unwrap(),
        "4 runs left out (see exclusions.csv): jatos_test_run 1, failed_attention 1, \
         screened_out 1, too_fast 1"
    );
}

#[test]
fn a_test_run_is_kept_when_asked_and_foreign_files_are_named_not_lost() {
    let mut all: Vec<(String, String)> = files()
        .into_iter()
        .map(|(name, text)| {
            if name.ends_with(".json") {
                (format!("jatos_results.zip/study_result_1/{name}"), text)
            } else {
                (name, text)
            }
        })
        .collect();
    all.push((
        "jatos_results.zip/README.txt".into(),
        "Exported by JATOS".into(),
    ));
    all.push(("jatos_results.zip/notes.csv".into(), "a,b\n1,2\n".into()));
    let keep_tests = ExclusionRules {
        test_runs: false,
        ..ExclusionRules::default()
    };
    let study = dataset_from_files(&all, &[], keep_tests).unwrap();
    let (_, rows) = parse_csv(&study.tables().unwrap().trials);
    assert_eq!(rows.len(), 60, "every answer kept");
    assert!(rows.iter().all(|r| r["excluded"] == "false"));
    for foreign in ["README.txt", "notes.csv"] {
        assert!(
            study
                .data
                .notes
                .iter()
                .any(|n| n.contains(foreign) && n.contains("left out")),
            "{foreign}: {:?}",
            study.data.notes
        );
    }
    // A bundle whose manifest is broken is refused, naming the file.
    let mut broken = files();
    broken.push((
        "P9.json".into(),
        r#"{"manifest": 3, "responses": []}"#.into(),
    ));
    let err = dataset_from_files(&broken, &[], rules()).unwrap_err();
    assert!(err.to_string().contains("P9.json"), "{err}");
}

/// The first fenced block of `language` in the trial table's docs.
fn snippet(language: &str) -> String {
    let docs = std::fs::read_to_string(crate::common::repo_root().join("docs/trial-table.md"))
        .expect("docs/trial-table.md");
    let start = docs
        .find(&format!("```{language}\n"))
        .expect("a snippet in the docs")
        + language.len()
        + 4;
    let end = start + docs[start..].find("```").unwrap();
    docs[start..end].to_string()
}

/// Runs a snippet in a folder holding `trials.csv`; its "mean TVD over N contexts: X" and
/// "TVD at P word K: X" lines.
fn run_snippet(program: &str, file: &str, code: &str, trials: &str) -> (f64, f64) {
    let dir = std::env::temp_dir().join(format!("clozelab-snippet-{}-{file}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("trials.csv"), trials).unwrap();
    std::fs::write(dir.join(file), code).unwrap();
    let out = std::process::Command::new(program)
        .arg(file)
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{program} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value = |prefix: &str| -> f64 {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in {stdout}"));
        line.rsplit(": ").next().unwrap().trim().parse().unwrap()
    };
    std::fs::remove_dir_all(&dir).ok();
    (value("TVD at a_high word 2"), value("mean TVD over"))
}

#[test]
fn the_docs_snippets_reproduce_table_1s_tvd_from_the_trial_table() {
    let study = dataset_from_files(&files(), &[], rules()).unwrap();
    let trials = study.tables().unwrap().trials;
    let (rows, per_context) = compute_on(&study.data, &Table1Options::default()).unwrap();
    let model = rows
        .iter()
        .find(|r| r.system == "samples_gpt2_study")
        .unwrap();
    let table1 = model.tvd_human.unwrap();
    // a_high's word 2.
    let a_high = own_text_id(PASSAGES[0].0, PASSAGES[0].1);
    let first = per_context
        .iter()
        .find(|c| c.system == "samples_gpt2_study" && c.text_id == a_high && c.word_num == 2)
        .and_then(|c| c.tvd_human)
        .unwrap();
    let (one, mean) = run_snippet("python3", "tvd.py", &snippet("python"), &trials);
    assert!((one - first).abs() < 1e-4, "python {one} vs {first}");
    assert!(
        (mean - table1).abs() < 1e-4,
        "python {mean} vs Table 1 {table1}"
    );
    // R runs where the tests run (the test command installs Debian's r-base-core): a
    // missing R fails here instead of skipping the snippet.
    assert!(
        std::process::Command::new("Rscript")
            .arg("--version")
            .output()
            .is_ok(),
        "Rscript is not installed: `apt-get install r-base-core` (the test command does)"
    );
    let (one, mean) = run_snippet("Rscript", "tvd.R", &snippet("r"), &trials);
    assert!((one - first).abs() < 1e-4, "R {one} vs {first}");
    assert!((mean - table1).abs() < 1e-4, "R {mean} vs Table 1 {table1}");
    // The check can fail: a table with one answer changed gives another mean.
    let changed = trials.replacen(",milk,milk,", ",cup,cup,", 1);
    assert_ne!(changed, trials);
    let (_, other) = run_snippet("python3", "tvd.py", &snippet("python"), &changed);
    assert!((other - table1).abs() > 1e-6);
}

#[test]
fn results_with_only_screened_out_runs_still_make_their_tables() {
    let screened: Vec<(String, String)> = runs()
        .iter()
        .filter(|r| r.native == "No")
        .map(|r| (format!("{}.json", r.participant), bundle(r)))
        .collect();
    let results = StudyResults::read(
        screened
            .iter()
            .map(|(n, t)| (n.clone(), t.clone().into_bytes()))
            .collect(),
    )
    .unwrap();
    assert_eq!(results.participants[0].state, RunState::ScreenedOut);
    let study = dataset_from_files(&screened, &[], rules()).unwrap();
    let tables = study.tables().unwrap();
    assert_eq!(tables.trials.lines().count(), 1, "the header only");
    assert_eq!(tables.exclusions.lines().count(), 2);
}

#[test]
fn token_game_answers_get_their_own_table_with_the_run_columns() {
    use clozelab::game::tokens::records::TokenRecords;
    use clozelab::game::tokens::top1::Top1Record;
    let study = config();
    let mut plan = study.plan("T1", &BTreeMap::new()).unwrap();
    plan.run = "jatos-9".into();
    let mut manifest = Manifest::new(&ModelInfo::default(), &study, &plan, 0, "now");
    manifest.worker_type = Some("Jatos".into());
    let manifest = manifest.with_details(RunDetails {
        consent_at: Some("2026-11-27T09:00:00Z".into()),
        questions: vec![QuestionAnswer {
            question: "age".into(),
            answer: "41".into(),
            response_time_ms: None,
            timestamp: "t".into(),
            screened_out: false,
        }],
        ..RunDetails::default()
    });
    let guess = |position: u32, guess: &str, correct: bool| Top1Record {
        participant: "T1".into(),
        passage: "a_high".into(),
        position,
        context: "The baker, \"sold\"".into(),
        true_token: 5,
        true_token_text: " sold".into(),
        guess: guess.into(),
        guess_token: Some(6),
        correct,
        gpt2_top1: Some(5),
        g_true: Some(0.25),
        g_guess: Some(0.5),
        guess_rank: Some(1),
        ms_to_answer: Some(640.0),
        timestamp: "2026-11-27T09:01:00Z".into(),
        practice: false,
        run: "jatos-9".into(),
    };
    let bundle = TokenRecords::Top1(vec![guess(2, " sold", true), guess(3, " cake", false)])
        .to_bundle(&manifest)
        .unwrap();
    let study = dataset_from_files(&[("t1.json".into(), bundle)], &[], rules()).unwrap();
    let tables = study.tables().unwrap();
    assert_eq!(tables.trials.lines().count(), 1, "no next-word answers");
    let (header, rows) = parse_csv(tables.tokens.as_deref().unwrap());
    let (_, codebook) = parse_csv(&tables.codebook);
    let documented: Vec<&str> = codebook
        .iter()
        .filter(|r| r["table"].contains("token_trials.csv"))
        .map(|r| r["column"].as_str())
        .collect();
    assert_eq!(header, documented);
    assert_eq!(rows.len(), 2);
    let expected = [
        ("participant", "T1"),
        ("run", "jatos-9"),
        ("worker_type", "Jatos"),
        ("excluded", "true"),
        ("exclusion_reason", "jatos_test_run"),
        ("consent_at", "2026-11-27T09:00:00Z"),
        ("game", "top1"),
        ("passage", "a_high"),
        ("position", "3"),
        ("context", "The baker, \"sold\""),
        ("true_token", " sold"),
        ("guess", " cake"),
        ("correct", "false"),
        ("g_true", "0.25"),
        ("g_other", "0.5"),
        ("ms_to_answer", "640"),
        ("q_age", "41"),
    ];
    for (column, value) in expected {
        assert_eq!(rows[1][column], value, "{column}");
    }
}

#[test]
fn the_docs_name_every_column_of_the_codebook() {
    use clozelab::game::readback::codebook::{
        FLOW_CODEBOOK, NORMS_CODEBOOK, RUN_COLUMNS, RUNS_COLUMNS, TOKEN_COLUMNS, TRIAL_COLUMNS,
    };
    let docs = std::fs::read_to_string(crate::common::repo_root().join("docs/trial-table.md"))
        .expect("docs/trial-table.md");
    let missing: Vec<&str> = RUN_COLUMNS
        .iter()
        .chain(&TRIAL_COLUMNS)
        .chain(&TOKEN_COLUMNS)
        .chain(&RUNS_COLUMNS)
        .chain(&NORMS_CODEBOOK)
        .chain(&FLOW_CODEBOOK)
        .map(|(name, _, _)| *name)
        .filter(|name| !docs.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/trial-table.md does not name {missing:?}"
    );
}

#[test]
fn clozelab_results_writes_the_pages_tables_and_refuses_files_without_results() {
    let dir = std::env::temp_dir().join(format!("clozelab-results-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut args = vec!["results".to_string()];
    for (name, text) in files() {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        args.extend(["--file".into(), path.display().to_string()]);
    }
    let out_dir = dir.join("out");
    let mut flags = args.clone();
    flags.extend(
        [
            "--out",
            out_dir.to_str().unwrap(),
            "--exclude-failed-attention",
            "--exclude-screened-out",
            "--min-median-response-ms",
            "500",
        ]
        .map(String::from),
    );
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args(&flags)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The page and the CLI place answers by the built-in passages and the study's own.
    let built_in: Vec<(String, String)> = clozelab::game::design::passages::built_in_passages()
        .into_iter()
        .map(|p| (p.id, p.text))
        .collect();
    let page = dataset_from_files(&files(), &built_in, rules()).unwrap();
    let tables = page.tables().unwrap();
    for (name, text) in tables.files() {
        assert_eq!(
            std::fs::read_to_string(out_dir.join(&name)).unwrap(),
            text,
            "{name} is the page's"
        );
    }
    let readme = crate::common::repo_root().join("README.md");
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args(["results", "--file", readme.to_str().unwrap(), "--out"])
        .arg(dir.join("none"))
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("none of the files holds a study's results"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn long_format_answers_join_the_trial_table_beside_jatos_results() {
    // A lab computer's participant, downloaded from "Your data" as the long CSV.
    let csv = "participant,passage,position,response,response_time_ms,timestamp,normalized,first_keystroke_ms,practice,run\n\
               L1,a_high,2,Bread,900,2026-11-27T11:00:00Z,bread,400,false,local-00000000000000aa\n\
               L1,a_high,3,sold,800,2026-11-27T11:00:01Z,sold,300,false,local-00000000000000aa\n";
    let mut all = files();
    all.push(("lab.csv".into(), csv.into()));
    let study = dataset_from_files(&all, &[], rules()).unwrap();
    let (_, rows) = parse_csv(&study.tables().unwrap().trials);
    let lab: Vec<_> = rows.iter().filter(|r| r["participant"] == "L1").collect();
    assert_eq!(lab.len(), 2);
    let expected = [
        ("run", "local-00000000000000aa"),
        ("run_state", "incomplete"),
        ("response", "Bread"),
        ("response_normalized", "bread"),
        ("context", "The"),
        ("target_word", "baker"),
        ("item", "1"),
        ("condition", "high"),
        ("first_keystroke_ms", "400"),
        ("excluded", "false"),
    ];
    for (column, value) in expected {
        assert_eq!(lab[0][column], value, "{column}");
    }
    // Kept in the analyses as before: three complete runs and the lab's two answers.
    let answers: u32 = study
        .data
        .norms
        .iter()
        .map(|c| c.human.values().sum::<u32>())
        .sum();
    assert_eq!(answers, 3 * 10 + 2);
    let only_complete = ExclusionRules {
        incomplete: true,
        ..rules()
    };
    let (_, rows) = parse_csv(
        &dataset_from_files(&all, &[], only_complete)
            .unwrap()
            .tables()
            .unwrap()
            .exclusions,
    );
    assert!(
        rows.iter()
            .any(|r| r["participant"] == "L1" && r["reason"] == "incomplete")
    );
}

#[test]
fn a_hostile_manifest_square_does_not_break_the_table() {
    // A bundle whose study config claims an item with more versions than conditions.
    let mut bundle: serde_json::Value = serde_json::from_str(&bundle(&runs()[0])).unwrap();
    bundle["manifest"]["study"]["latin_square"]["items"][0] =
        serde_json::json!(["x", "y", "a_high"]);
    let files = vec![("odd.json".to_string(), bundle.to_string())];
    let study = dataset_from_files(&files, &[], rules()).unwrap();
    let (_, rows) = parse_csv(&study.tables().unwrap().trials);
    let row = rows.iter().find(|r| r["passage"] == "a_high").unwrap();
    assert_eq!((row["item"].as_str(), row["condition"].as_str()), ("", ""));
}

#[test]
fn a_samples_file_of_passages_the_data_lacks_is_noted_and_nothing_else_is_lost() {
    // The study's samples, and a second file naming a passage of another text (another
    // study's p1) and a Provo context the data does not have.
    let mut all = files();
    let foreign = [
        json_line(own_text_id("a_high", "The river ran very dry today"), 2),
        json_line(3, 7),
    ];
    all.push(("samples_other_study.jsonl".into(), foreign.join("\n")));
    let study = dataset_from_files(&all, &[], rules()).unwrap();
    let note = study
        .data
        .notes
        .iter()
        .find(|n| n.starts_with("samples_other_study.jsonl"))
        .unwrap_or_else(|| panic!("no note: {:?}", study.data.notes));
    assert!(
        note.contains("2 of its 2 contexts")
            && note.contains("are in no passage of these data")
            && note.contains("another study's passages"),
        "{note}"
    );
    // The study's own samples and answers are all there, as without the second file.
    let alone = dataset_from_files(&files(), &[], rules()).unwrap();
    assert_eq!(
        study.tables().unwrap().trials,
        alone.tables().unwrap().trials
    );
}

fn json_line(text_id: u32, word_num: u32) -> String {
    serde_json::json!({"text_id": text_id, "word_num": word_num, "samples": {"dry": 3}}).to_string()
}
