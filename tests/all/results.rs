//! Study results read back in: JATOS's results archive and text export, a `submit_url`
//! server's bundles, the app's own downloads; repeats merged by idempotency key; each
//! participant's state.

use std::collections::BTreeMap;
use std::io::Write;

use clozelab::data::ResponseRecord;
use clozelab::data::participant_run::RunState;
use clozelab::game::design::study::StudyConfig;
use clozelab::game::readback::exclusions::ExclusionRules;
use clozelab::game::readback::imports::{Imported, import_file};
use clozelab::game::readback::jatos_export::study_result_id;
use clozelab::game::readback::results::{
    ResultsError, StudyResults, is_results_text, texts_of, unpack,
};
use clozelab::game::readback::results_dataset::dataset_from_files;
use clozelab::game::run::export::{ExportKind, Manifest, ModelInfo};

fn study() -> StudyConfig {
    StudyConfig::from_json(
        r#"{"title": "Storm study", "texts": [{"id": "s", "title": "S", "text": "One two three four"}],
            "passages": ["s"]}"#,
    )
    .unwrap()
}

fn answer(participant: &str, position: u32, word: &str) -> ResponseRecord {
    crate::common::answer(participant, "s", position, word)
}

/// The bundle the app sends for `participant` holding their first `n` answers (word numbers
/// from 2, as in Provo).
fn bundle(participant: &str, n: u32) -> String {
    let study = study();
    let plan = study.plan(participant, &BTreeMap::new()).unwrap();
    let manifest = Manifest::new(&ModelInfo::default(), &study, &plan, 0, "now");
    let records: Vec<_> = (2..=n + 1)
        .map(|p| answer(participant, p, ["two", "three", "four"][p as usize - 2]))
        .collect();
    ExportKind::Bundle
        .render(&records, &[], Some(&manifest))
        .unwrap()
}

fn zip(files: &[(&str, &str)]) -> Vec<u8> {
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::FileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (path, text) in files {
        out.start_file(*path, options).unwrap();
        out.write_all(text.as_bytes()).unwrap();
    }
    out.finish().unwrap().into_inner()
}

/// JATOS's metadata.json for study results `(id, state, PROLIFIC_PID)`.
fn metadata(runs: &[(u64, &str, &str)]) -> String {
    let runs: Vec<_> = runs
        .iter()
        .map(|(id, state, pid)| {
            serde_json::json!({"id": id, "uuid": "u", "studyState": state,
                "urlQueryParameters": {"PROLIFIC_PID": pid}, "componentResults": []})
        })
        .collect();
    serde_json::json!({"data": [{"studyId": 1, "studyTitle": "Storm study", "studyResults": runs}]})
        .to_string()
}

#[test]
fn a_jatos_results_archive_gives_each_participant_once_with_their_state() {
    // P1 reloaded: JATOS kept two component results, the second holding everything. P2
    // answered one of three and left. P3 withdrew: JATOS deleted the data, the run is ABORTED.
    let archive = zip(&[
        ("study_result_1/comp-result_1/data.txt", &bundle("P1", 2)),
        ("study_result_1/comp-result_2/data.txt", &bundle("P1", 3)),
        ("study_result_2/comp-result_3/data.txt", &bundle("P2", 1)),
        ("study_result_3/comp-result_4/data.txt", ""),
        (
            "metadata.json",
            &metadata(&[
                (1, "FINISHED", "P1"),
                (2, "STARTED", "P2"),
                (3, "ABORTED", "P3"),
            ]),
        ),
    ]);
    let results = StudyResults::read(vec![("jatos_results_20261124.zip".into(), archive)]).unwrap();
    assert_eq!(results.responses.len(), 4, "3 of P1's and 1 of P2's");
    assert_eq!(results.repeats, 2, "P1's first two answers came twice");
    assert_eq!(results.bundles, 3);
    let state: Vec<_> = results
        .participants
        .iter()
        .map(|p| (p.participant.as_str(), p.state, p.answered, p.planned))
        .collect();
    assert_eq!(
        state,
        [
            ("P1", RunState::Complete, 3, Some(3)),
            ("P2", RunState::Incomplete, 1, Some(3)),
            ("P3", RunState::Withdrawn, 0, None),
        ]
    );
    assert_eq!(results.skipped.len(), 1, "{:?}", results.skipped);
    assert!(
        results
            .summary()
            .starts_with("3 runs (1 complete, 1 incomplete, 1 withdrawn)")
    );
    let mut complete = results.clone();
    complete.only(&[RunState::Complete]);
    assert!(complete.responses.iter().all(|r| r.participant == "P1"));
    assert_eq!(complete.responses.len(), 3);
}

#[test]
fn without_jatos_metadata_a_run_is_complete_when_every_planned_answer_is_there() {
    // The older JATOS export: one result per line; and a submit_url server's files.
    let lines = format!(
        "{}\n{}\n",
        bundle("A", 3).replace('\n', ""),
        bundle("B", 2).replace('\n', "")
    );
    let results = StudyResults::read(vec![
        ("jatos_results.txt".into(), lines.into_bytes()),
        ("A-complete.json".into(), bundle("A", 3).into_bytes()),
    ])
    .unwrap();
    let state: Vec<_> = results
        .participants
        .iter()
        .map(|p| (p.participant.as_str(), p.state))
        .collect();
    assert_eq!(
        state,
        [("A", RunState::Complete), ("B", RunState::Incomplete)]
    );
    assert_eq!(results.responses.len(), 5);
    assert_eq!(results.repeats, 3);
}

#[test]
fn files_are_told_apart_by_content_not_name() {
    // JATOS names every result data.txt: "Your data" must not read it as passages.
    let imported = import_file("data.txt", bundle("P1", 2).as_bytes()).unwrap();
    let Imported::Results(results) = imported else {
        panic!("read as {imported:?}")
    };
    assert_eq!(results.responses.len(), 2);
    let archive = zip(&[("study_result_9/comp-result_1/data.txt", &bundle("P1", 1))]);
    assert!(matches!(
        import_file("export.jzip", &archive),
        Ok(Imported::Results(_))
    ));
    assert!(matches!(
        import_file("story.txt", b"Once upon a time."),
        Ok(Imported::Passages(_))
    ));
    assert!(is_results_text(&bundle("P1", 1)));
    assert!(!is_results_text(r#"{"passages": ["storm"]}"#));
    assert_eq!(
        study_result_id("x.zip/study_result_77/comp-result_1/data.txt"),
        Some(77)
    );
}

#[test]
fn broken_archives_and_bundles_are_clear_errors() {
    let mut cut = zip(&[("study_result_1/comp-result_1/data.txt", &bundle("P1", 3))]);
    cut.truncate(cut.len() / 2);
    let err = StudyResults::read(vec![("r.zip".into(), cut)]).unwrap_err();
    assert!(
        matches!(err, ResultsError::Zip { ref file, .. } if file == "r.zip"),
        "{err}"
    );
    let bad = bundle("P1", 1).replace("\"participant\": \"P1\"", "\"participant\": 7");
    let err = StudyResults::read(vec![("b.json".into(), bad.into_bytes())]).unwrap_err();
    assert!(err.to_string().starts_with("b.json"), "{err}");
    // A file that is not results is named, the rest still read.
    let ok = StudyResults::read(vec![
        ("notes.txt".into(), b"hello".to_vec()),
        ("b.json".into(), bundle("P1", 1).into_bytes()),
    ])
    .unwrap();
    assert_eq!(ok.responses.len(), 1);
    assert_eq!(ok.skipped, ["notes.txt: not results"]);
    assert_eq!(unpack("plain.txt", b"x".to_vec()).unwrap().len(), 1);
}

#[test]
fn the_analysis_dataset_counts_each_answer_once_and_keeps_the_states() {
    let archive = zip(&[
        ("study_result_1/comp-result_1/data.txt", &bundle("P1", 2)),
        ("study_result_1/comp-result_2/data.txt", &bundle("P1", 3)),
        ("study_result_2/comp-result_3/data.txt", &bundle("P2", 1)),
        (
            "metadata.json",
            &metadata(&[(1, "FINISHED", "P1"), (2, "STARTED", "P2")]),
        ),
    ]);
    let read = texts_of("results.zip", archive).unwrap();
    assert!(read.not_text.is_empty());
    let texts = read.texts;
    let passages = [("s".to_string(), "One two three four".to_string())];
    let data = dataset_from_files(&texts, &passages, ExclusionRules::default())
        .unwrap()
        .data;
    let first = data.norms.iter().find(|c| c.word_num == 2).unwrap();
    assert_eq!(first.human, BTreeMap::from([("two".to_string(), 2)]));
    assert_eq!(
        data.norms
            .iter()
            .map(|c| c.human.values().sum::<u32>())
            .sum::<u32>(),
        4
    );
    let states: Vec<_> = data
        .runs
        .iter()
        .map(|r| (r.participant.as_str(), r.state))
        .collect();
    assert_eq!(
        states,
        [("P1", RunState::Complete), ("P2", RunState::Incomplete)]
    );
    assert!(
        data.notes
            .iter()
            .any(|n| n.contains("2 runs (1 complete, 1 incomplete"))
    );
    // The study's own passage comes with its bundles: its answers count without being given.
    let unaided = dataset_from_files(&texts, &[], ExclusionRules::default())
        .unwrap()
        .data;
    assert_eq!(unaided.norms, data.norms);
}

#[test]
fn only_complete_participants_can_be_kept() {
    let archive = zip(&[
        ("study_result_1/comp-result_1/data.txt", &bundle("P1", 3)),
        ("study_result_2/comp-result_2/data.txt", &bundle("P2", 1)),
    ]);
    let texts = texts_of("results.zip", archive).unwrap().texts;
    let passages = [("s".to_string(), "One two three four".to_string())];
    let data = dataset_from_files(
        &texts,
        &passages,
        ExclusionRules {
            incomplete: true,
            ..Default::default()
        },
    )
    .unwrap()
    .data;
    let answers: u32 = data
        .norms
        .iter()
        .map(|c| c.human.values().sum::<u32>())
        .sum();
    assert_eq!(answers, 3, "P2's one answer left out");
    assert_eq!(data.runs.len(), 2, "both still listed");
    assert!(
        data.notes
            .iter()
            .any(|n| n.contains("1 run left out (see exclusions.csv): incomplete 1")),
        "{:?}",
        data.notes
    );
    let all = dataset_from_files(&texts, &passages, ExclusionRules::default())
        .unwrap()
        .data;
    assert_eq!(
        all.norms
            .iter()
            .map(|c| c.human.values().sum::<u32>())
            .sum::<u32>(),
        4
    );
}

#[test]
fn a_withdrawal_notice_deletes_what_the_server_already_had() {
    // W sent two answers one by one (send_each_response), then withdrew; K stayed.
    let notice = clozelab::game::run::withdrawal::WithdrawalNotice {
        participant: "W".into(),
        study: "Storm study".into(),
        withdrawn_at: "2026-11-24T10:05:00Z".into(),
        run: String::new(),
    };
    let files = vec![
        ("W-2.json".to_string(), bundle("W", 1).into_bytes()),
        ("W-3.json".to_string(), bundle("W", 2).into_bytes()),
        ("K.json".to_string(), bundle("K", 3).into_bytes()),
        (
            "W-withdrawn.json".to_string(),
            notice.to_json().into_bytes(),
        ),
    ];
    let results = StudyResults::read(files).unwrap();
    assert!(results.responses.iter().all(|r| r.participant == "K"));
    assert_eq!(results.responses.len(), 3);
    let state: Vec<_> = results
        .participants
        .iter()
        .map(|p| (p.participant.as_str(), p.state, p.answered))
        .collect();
    assert_eq!(
        state,
        [("K", RunState::Complete, 3), ("W", RunState::Withdrawn, 0)]
    );
    // A notice alone (the server had nothing else of theirs) still names them.
    let alone = StudyResults::read(vec![("n.json".into(), notice.to_json().into_bytes())]).unwrap();
    assert_eq!(alone.participants.len(), 1);
    assert_eq!(alone.participants[0].state, RunState::Withdrawn);
    assert_eq!(alone.participants[0].study, "Storm study");
}

#[test]
fn a_preview_is_listed_as_pilot_and_never_kept_with_the_complete() {
    let study = study().for_preview();
    let plan = study.plan("preview", &BTreeMap::new()).unwrap();
    let manifest = Manifest::new(&ModelInfo::default(), &study, &plan, 0, "now");
    let records: Vec<_> = (2..=4)
        .map(|p| answer("preview", p, ["two", "three", "four"][p as usize - 2]))
        .collect();
    let pilot = ExportKind::Bundle
        .render(&records, &[], Some(&manifest))
        .unwrap();
    assert!(pilot.contains(r#""pilot": true"#));
    let files = vec![
        ("pilot.json".to_string(), pilot.into_bytes()),
        ("p1.json".to_string(), bundle("P1", 3).into_bytes()),
    ];
    let mut results = StudyResults::read(files).unwrap();
    let flags: Vec<_> = results
        .participants
        .iter()
        .map(|p| (p.participant.as_str(), p.state, p.pilot))
        .collect();
    assert_eq!(
        flags,
        [
            ("P1", RunState::Complete, false),
            ("preview", RunState::Complete, true)
        ]
    );
    results.only(&[RunState::Complete]);
    assert!(results.responses.iter().all(|r| r.participant == "P1"));
    assert_eq!(results.responses.len(), 3);
}

#[test]
fn attention_checks_are_counted_per_participant_and_failures_can_be_left_out() {
    use clozelab::game::design::attention::{AttentionCheck, AttentionResult};
    let check = AttentionCheck {
        id: "purple".into(),
        passage: "s".into(),
        after: 1,
        instruction: "Type the word purple.".into(),
        answer: "purple".into(),
    };
    // The bundle of a participant with their answer to the check in the manifest; an early
    // bundle without it (sent before the check) is superseded by the later one.
    let with_check = |participant: &str, typed: &str| {
        let study = study();
        let plan = study.plan(participant, &BTreeMap::new()).unwrap();
        let result = AttentionResult::new(participant, &check, typed, Some(1200.0), "t");
        let manifest = Manifest::new(&ModelInfo::default(), &study, &plan, 0, "now")
            .with_attention(vec![result]);
        let records: Vec<_> = (2..=4)
            .map(|p| answer(participant, p, ["two", "three", "four"][p as usize - 2]))
            .collect();
        ExportKind::Bundle
            .render(&records, &[], Some(&manifest))
            .unwrap()
    };
    let texts = vec![
        ("early.json".to_string(), bundle("Good", 1)),
        ("good.json".to_string(), with_check("Good", "Purple")),
        ("bad.json".to_string(), with_check("Bad", "two")),
        ("none.json".to_string(), bundle("Unchecked", 3)),
    ];
    let passages = [("s".to_string(), "One two three four".to_string())];
    let all = dataset_from_files(&texts, &passages, ExclusionRules::default())
        .unwrap()
        .data;
    let tally: Vec<_> = all
        .runs
        .iter()
        .map(|p| {
            (
                p.participant.as_str(),
                p.attention_passed,
                p.attention_failed,
            )
        })
        .collect();
    assert_eq!(tally, [("Bad", 0, 1), ("Good", 1, 0), ("Unchecked", 0, 0)]);
    let answers = |data: &clozelab::analysis::dataset::Dataset| -> u32 {
        data.norms
            .iter()
            .map(|c| c.human.values().sum::<u32>())
            .sum()
    };
    assert_eq!(answers(&all), 9);
    let careful = dataset_from_files(
        &texts,
        &passages,
        ExclusionRules {
            failed_attention: true,
            ..Default::default()
        },
    )
    .unwrap()
    .data;
    assert_eq!(answers(&careful), 6, "Bad's three answers left out");
    assert!(
        careful
            .notes
            .iter()
            .any(|n| n.contains("1 run left out (see exclusions.csv): failed_attention 1")),
        "{:?}",
        careful.notes
    );
}

#[test]
fn jatos_exports_as_they_come_latin1_data_no_data_txt_data_retrieved_and_jrzip() {
    // A German answer in a data.txt that JATOS wrote in Latin-1 (its server's default charset).
    let bundle = bundle("PL", 2).replace("\"three\"", "\"Käse\"");
    let latin1: Vec<u8> = bundle
        .chars()
        .map(|c| u8::try_from(c as u32).unwrap())
        .collect();
    assert!(
        std::str::from_utf8(&latin1).is_err(),
        "the fixture is not UTF-8"
    );
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::FileOptions::default();
    out.start_file("study_result_3/comp-result_5/data.txt", options)
        .unwrap();
    out.write_all(&latin1).unwrap();
    // A component result without data has a folder and no data.txt.
    out.add_directory("study_result_3/comp-result_6/", options)
        .unwrap();
    out.start_file("metadata.json", options).unwrap();
    out.write_all(metadata(&[(3, "DATA_RETRIEVED", "PL")]).as_bytes())
        .unwrap();
    let archive = out.finish().unwrap().into_inner();

    // The archive as JATOS 3.8–3.9.1 named it: `.jrzip`, told apart by content.
    let files = vec![("results.jrzip".to_string(), archive.clone())];
    let read = StudyResults::read(files).unwrap();
    assert_eq!(read.warnings.len(), 1, "{:?}", read.warnings);
    assert!(read.warnings[0].contains("Latin-1"), "{:?}", read.warnings);
    assert!(read.skipped.is_empty(), "{:?}", read.skipped);
    let words: Vec<&str> = read.responses.iter().map(|r| r.response.as_str()).collect();
    assert_eq!(words, ["two", "Käse"]);
    // An open run that was exported (DATA_RETRIEVED) with 2 of 3 answers: incomplete.
    assert_eq!(read.participants.len(), 1);
    assert_eq!(read.participants[0].state, RunState::Incomplete);

    // The page reads files through `texts_of`, which keeps such a data.txt too.
    let texts = texts_of("results.jrzip", archive).unwrap();
    assert_eq!(
        texts.latin1,
        ["results.jrzip/study_result_3/comp-result_5/data.txt"]
    );
    assert!(texts.not_text.is_empty());
    // Bytes that are neither UTF-8 nor results stay out, named.
    let other = texts_of(
        "x.zip",
        zip_bytes(&[("photo.jpg", &[0xff, 0xd8, 0xff, 0xe0])]),
    )
    .unwrap();
    assert_eq!(other.not_text, ["x.zip/photo.jpg"]);
}

fn zip_bytes(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, bytes) in files {
        out.start_file(*path, zip::write::FileOptions::default())
            .unwrap();
        out.write_all(bytes).unwrap();
    }
    out.finish().unwrap().into_inner()
}
