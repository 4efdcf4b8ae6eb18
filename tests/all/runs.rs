//! Runs that cannot mix: every answer kept under its study and run, so a second study, a
//! second run or the next person on the same computer never loads (or sends) another run's
//! answers; the results reader keeps runs apart and flags those whose data does not add up;
//! configs that would make a wrong run are refused.

use std::collections::BTreeMap;

use clozelab::data::ResponseRecord;
use clozelab::data::participant_run::RunState;
use clozelab::game::design::jatos_run::JatosRun;
use clozelab::game::design::plan::Plan;
use clozelab::game::design::study::{StudyConfig, StudyError};
use clozelab::game::readback::results::StudyResults;
use clozelab::game::run::export::{ExportKind, Manifest, ModelInfo};
use clozelab::game::run::outbox::SendMethod;
use clozelab::game::run::session::{GameSession, Timing};
use clozelab::game::run::store::{MemoryStore, ResponseStore};

fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn config(json: &str) -> StudyConfig {
    StudyConfig::from_json(json).unwrap()
}

/// Plays `answers` answers of `plan` into `store`; returns the game.
async fn play(store: &mut MemoryStore, plan: &Plan, answers: usize) -> GameSession {
    let stored = store.load(&plan.scope()).await.unwrap();
    let mut game = GameSession::resume(plan.clone(), &stored);
    for _ in 0..answers {
        game.submit(store, "word", Timing::default(), "t")
            .await
            .unwrap();
    }
    game
}

#[test]
fn the_same_prolific_id_in_two_studies_makes_two_runs_that_never_meet() {
    pollster::block_on(async {
        let study_a = config(r#"{"passages": ["storm", "kitchen"]}"#);
        let study_b = config(r#"{"passages": ["storm", "bees"]}"#);
        assert_ne!(study_a.study_id(), study_b.study_id());
        let link = params(&[("PROLIFIC_PID", "P1")]);
        let mut store = MemoryStore::default();
        let plan_a = study_a
            .plan("P1", &link)
            .unwrap()
            .in_run(|_, _| "local-a".into());
        let done_a = play(&mut store, &plan_a, 30).await;
        assert_eq!(done_a.progress().0, 30);

        // Study B starts at its beginning, though "storm" is in both and 30 answers are stored.
        let plan_b = study_b
            .plan("P1", &link)
            .unwrap()
            .in_run(|_, _| "local-b".into());
        assert_eq!(store.load(&plan_b.scope()).await.unwrap(), vec![]);
        let game_b = play(&mut store, &plan_b, 5).await;
        assert_eq!(game_b.progress().0, 5);
        assert_eq!(store.load(&plan_a.scope()).await.unwrap().len(), 30);
        let b_answers = store.load(&plan_b.scope()).await.unwrap();
        assert_eq!(b_answers.len(), 5);
        assert!(b_answers.iter().all(|r| r.run == "local-b"));

        // Within a run, a reload resumes where it stopped.
        let resumed = play(&mut store, &plan_a, 0).await;
        assert_eq!(resumed.current(), done_a.current());
    });
}

#[test]
fn jatos_study_results_and_prolific_sessions_name_the_run() {
    let study = config(r#"{"passages": ["storm"], "study_id": "cloze-1"}"#);
    // Prolific's session id makes the run; a pilot and the main study differ in it.
    let pilot = study
        .plan(
            "P1",
            &params(&[("PROLIFIC_PID", "P1"), ("SESSION_ID", "s1")]),
        )
        .unwrap();
    let main = study
        .plan(
            "P1",
            &params(&[("PROLIFIC_PID", "P1"), ("SESSION_ID", "s2")]),
        )
        .unwrap();
    assert_eq!(
        (pilot.run.as_str(), main.run.as_str()),
        ("prolific-s1", "prolific-s2")
    );
    assert_eq!(pilot.study_id, "cloze-1");
    // The page's own run only where nothing named one.
    let named = pilot.clone().in_run(|_, _| unreachable!());
    assert_eq!(named.run, "prolific-s1");
    let page = study
        .plan("P1", &BTreeMap::new())
        .unwrap()
        .in_run(|study, participant| format!("local-{study}-{participant}"));
    assert_eq!(page.run, "local-cloze-1-P1");

    // Two JATOS test runs: one worker, two study results, two runs.
    let run = |id: u32| {
        JatosRun::detect(
            &format!("/publix/8a2c4f1e-0000-4000-8000-00000000000{id}/5b1d0c2a-0000-4000-8000-000000000002/start"),
            &format!(
                "JATOS_IDS_{id}=studyResultUuid=8a2c4f1e-0000-4000-8000-00000000000{id}&studyResultId={id}&workerId=7"
            ),
        )
        .unwrap()
    };
    let first = study.clone().in_jatos(run(1));
    let second = study.clone().in_jatos(run(2));
    let participant = first.participant_id(&BTreeMap::new(), "anon").unwrap();
    assert_eq!(
        participant,
        second.participant_id(&BTreeMap::new(), "anon").unwrap()
    );
    let first_plan = first.plan(&participant, &BTreeMap::new()).unwrap();
    let second_plan = second.plan(&participant, &BTreeMap::new()).unwrap();
    assert_eq!(first_plan.run, "jatos-1");
    assert_eq!(second_plan.run, "jatos-2");
    assert_eq!(first_plan.study_id, "cloze-1", "JATOS keeps the study's id");
    assert_ne!(first_plan.scope(), second_plan.scope());
    assert_ne!(
        first_plan.scope().response_key("storm", 2),
        second_plan.scope().response_key("storm", 2)
    );
    assert_ne!(
        first_plan.scope().submission_key(),
        second_plan.scope().submission_key()
    );

    // A config without an id keeps the same one inside JATOS (its URLs change with the run).
    let unnamed = config(r#"{"passages": ["storm"]}"#);
    assert_eq!(
        unnamed.clone().in_jatos(run(1)).study_id(),
        unnamed.study_id()
    );
    assert_eq!(unnamed.clone().for_preview().study_id(), unnamed.study_id());
    let preview = unnamed.for_preview().plan("x", &BTreeMap::new()).unwrap();
    assert_eq!(preview.run, "preview");
}

#[test]
fn inside_jatos_each_answer_is_a_small_append_with_its_runs_key() {
    let study = config(r#"{"passages": ["storm"], "study_id": "cloze-1"}"#);
    let run = JatosRun::detect(
        "/publix/8a2c4f1e-0000-4000-8000-000000000001/5b1d0c2a-0000-4000-8000-000000000002/start",
        "JATOS_IDS_1=studyResultUuid=8a2c4f1e-0000-4000-8000-000000000001&studyResultId=4",
    )
    .unwrap();
    let jatos = study.in_jatos(run);
    let plan = jatos.plan("P1", &BTreeMap::new()).unwrap();
    let manifest = Manifest::new(&ModelInfo::default(), &jatos, &plan, 0, "now");
    let record = ResponseRecord {
        participant: "P1".into(),
        passage: "storm".into(),
        position: 2,
        response: "rain".into(),
        response_time_ms: Some(900.0),
        timestamp: "t".into(),
        normalized: "rain".into(),
        first_keystroke_ms: None,
        practice: false,
        run: plan.run.clone(),
    };
    let bundle = ExportKind::Bundle
        .render(std::slice::from_ref(&record), &[], Some(&manifest))
        .unwrap();
    let key = plan.scope().response_key("storm", 2);
    let pending = clozelab::game::run::outbox::submission(&jatos, key.clone(), bundle).unwrap();
    assert_eq!(pending.method, SendMethod::AppendText);
    assert!(pending.url.ends_with("/resultData"));
    assert_eq!(pending.key, "P1/jatos-4/storm/2");
    // One line: JATOS's data.txt then holds one bundle per line.
    assert_eq!(pending.body.lines().count(), 1);
    assert!(pending.body.ends_with('\n'));
    let sent: serde_json::Value = serde_json::from_str(&pending.body).unwrap();
    assert_eq!(sent["responses"][0]["idempotency_key"], key.as_str());
    assert_eq!(sent["manifest"]["run"], "jatos-4");
    // Small and constant: well under the 32 KiB that goes with keepalive.
    assert!(pending.body.len() < 16 * 1024, "{}", pending.body.len());

    // Outside JATOS: a POST of JSON the server keeps once per key.
    let own = config(r#"{"passages": ["storm"], "submit_url": "/submit"}"#);
    let pending = clozelab::game::run::outbox::submission(&own, "k".into(), "{}".into()).unwrap();
    assert_eq!(pending.method, SendMethod::PostJson);
}

fn answer(participant: &str, position: u32, word: &str) -> ResponseRecord {
    crate::common::answer(participant, "s", position, word)
}

/// A bundle of `words` (positions from 2) for `participant` in `run` of a three-answer study.
fn bundle(participant: &str, run: &str, words: &[&str]) -> (String, Vec<u8>) {
    let study = config(
        r#"{"title": "S", "texts": [{"id": "s", "title": "S", "text": "One two three four"}],
            "passages": ["s"]}"#,
    );
    let plan = study
        .plan(participant, &BTreeMap::new())
        .unwrap()
        .in_run(|_, _| run.to_string());
    let manifest = Manifest::new(&ModelInfo::default(), &study, &plan, 0, "now");
    let records: Vec<_> = words
        .iter()
        .enumerate()
        .map(|(i, w)| answer(participant, i as u32 + 2, w))
        .collect();
    let text = ExportKind::Bundle
        .render(&records, &[], Some(&manifest))
        .unwrap();
    (
        format!("{participant}-{run}-{}.json", words.len()),
        text.into_bytes(),
    )
}

#[test]
fn the_reader_keeps_runs_apart_and_flags_what_does_not_add_up() {
    let results = StudyResults::read(vec![
        // One participant, two complete runs with different answers: two rows, six answers.
        bundle("P1", "local-a", &["two", "three", "four"]),
        bundle("P1", "local-b", &["one", "one", "one"]),
        // The same run sent twice: counted once, no warning.
        bundle("P2", "local-c", &["two", "three", "four"]),
        bundle("P2", "local-c", &["two", "three", "four"]),
        // Two different answers under one key: flagged, left out of analyses.
        bundle("P3", "local-d", &["two", "three", "four"]),
        bundle("P3", "local-d", &["two", "tree", "four"]),
    ])
    .unwrap();
    let row = |p: &str, run: &str| {
        results
            .participants
            .iter()
            .find(|r| r.participant == p && r.run == run)
            .unwrap_or_else(|| panic!("no row {p} {run}: {:?}", results.participants))
            .clone()
    };
    assert_eq!(results.participants.len(), 4);
    for run in ["local-a", "local-b"] {
        let r = row("P1", run);
        assert_eq!(
            (r.answered, r.planned, r.state),
            (3, Some(3), RunState::Complete)
        );
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }
    assert!(row("P2", "local-c").warnings.is_empty());
    let p3 = row("P3", "local-d");
    assert_eq!(p3.warnings.len(), 1, "{:?}", p3.warnings);
    assert_eq!(
        p3.warnings[0],
        "1 answer arrived again with another response (the first is kept): s word 3"
    );
    assert_eq!(results.responses.len(), 12);
    assert!(
        results.summary().contains("; 1 run flagged"),
        "{}",
        results.summary()
    );

    let mut kept = results.clone();
    kept.only(&[RunState::Complete]);
    assert_eq!(kept.responses.len(), 9, "the flagged run is left out");
    assert!(kept.responses.iter().all(|r| r.participant != "P3"));
}

#[test]
fn a_run_holding_more_answers_than_its_plan_is_flagged_not_complete_and_quiet() {
    // What mixed runs looked like: one bundle under one participant and run with the answers
    // of another study's passage in it (5 where the plan has 3).
    let (name, text) = bundle("P1", "local-a", &["two", "three", "four"]);
    let mut value: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let extra = |position: u32| {
        let mut r = serde_json::to_value(answer("P1", position, "storm")).unwrap();
        r["passage"] = "storm".into();
        r
    };
    let responses = value["responses"].as_array_mut().unwrap();
    responses.push(extra(2));
    responses.push(extra(3));
    let results = StudyResults::read(vec![(name, serde_json::to_vec(&value).unwrap())]).unwrap();
    let run = &results.participants[0];
    assert_eq!((run.answered, run.planned), (5, Some(3)));
    assert!(
        run.warnings[0].starts_with("5 answers where the plan has 3"),
        "{:?}",
        run.warnings
    );
    let mut kept = results.clone();
    kept.only(&[RunState::Complete, RunState::Incomplete]);
    assert!(kept.responses.is_empty());
}

#[test]
fn configs_that_would_make_a_wrong_run_are_refused() {
    let refused = |json: &str| StudyConfig::from_json(json).unwrap_err();
    assert_eq!(
        refused(
            r#"{"lists": [{"name": "A", "passages": []}, {"name": "B", "passages": ["storm"]}]}"#
        ),
        StudyError::EmptyList("A".into())
    );
    assert!(matches!(
        refused(r#"{"lists": [{"name": "A", "passages": ["storm", "bees", "storm"]}]}"#),
        StudyError::RepeatedPassage { passage, .. } if passage == "storm"
    ));
    assert!(matches!(
        refused(r#"{"passages": ["bees", "bees"]}"#),
        StudyError::RepeatedPassage { .. }
    ));
    for url in [
        "https://",
        "http://",
        "https:///path",
        "https://?cc=1",
        "https://exa mple.org",
    ] {
        assert!(
            matches!(
                refused(&format!(r#"{{"redirect_url": "{url}"}}"#)),
                StudyError::RedirectUrl(_)
            ),
            "{url}"
        );
        assert!(
            matches!(
                refused(&format!(r#"{{"decline_url": "{url}"}}"#)),
                StudyError::DeclineUrl(_)
            ),
            "{url}"
        );
    }
    for url in [
        "https://app.prolific.com/submissions/complete?cc=C1",
        "http://localhost:9000/done",
        "https://[::1]:8080/x",
    ] {
        assert!(
            StudyConfig::from_json(&format!(r#"{{"redirect_url": "{url}"}}"#)).is_ok(),
            "{url}"
        );
    }
    assert!(matches!(
        refused(r#"{"study_id": "a/b"}"#),
        StudyError::StudyId(_)
    ));
    assert!(matches!(
        refused(r#"{"study_id": ""}"#),
        StudyError::StudyId(_)
    ));
    // Top-level passages left empty still mean every passage (documented), and lists may
    // share passages with each other.
    assert!(
        StudyConfig::from_json(
            r#"{"lists": [{"name": "A", "passages": ["storm"]}, {"name": "B", "passages": ["storm"]}]}"#
        )
        .is_ok()
    );
}
