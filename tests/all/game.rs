//! The next-word game's core: the state machine over a store, resume, entry validation, exports.

use std::collections::BTreeMap;

use clozelab::data::{Delimiter, import_long_csv};
use clozelab::game::design::study::StudyConfig;
use clozelab::game::run::export::provo_aggregate_csv;
use clozelab::game::run::session::{EntryError, GameSession, SubmitError, Timing};
use clozelab::game::run::store::{MemoryStore, ResponseStore};

fn study() -> StudyConfig {
    StudyConfig::from_json(
        r#"{"passages": ["storm", "bees"], "practice": "garden", "order": "random"}"#,
    )
    .unwrap()
}

#[test]
fn play_reload_and_resume_loses_and_doubles_nothing() {
    pollster::block_on(async {
        let config = study();
        let plan = config.plan("alice", &BTreeMap::new()).unwrap();
        let mut store = MemoryStore::default();
        let mut game = GameSession::resume(plan.clone(), &[]);
        let first = game.current().unwrap();
        assert!(first.practice && first.position == 2 && first.context == "If");
        let (_, total) = game.progress();

        // A rejected entry stores nothing and does not move on.
        for bad in [
            "",
            "   ",
            "two words",
            "<img src=x onerror=alert(1)>",
            &"a".repeat(41),
        ] {
            let r = game.submit(&mut store, bad, Timing::default(), "t").await;
            assert!(matches!(r, Err(SubmitError::Entry(_))), "{bad:?}");
        }
        assert!(store.records.is_empty());
        assert_eq!(game.current().unwrap(), first);

        // Play 60 trials, then "reload": a new game from the stored responses.
        for i in 0..60 {
            let timing = Timing {
                first_keystroke_ms: Some(100.0 + i as f64),
                submit_ms: Some(900.0),
            };
            let reveal = game
                .submit(&mut store, " the ", timing, &format!("t{i}"))
                .await
                .unwrap();
            assert_eq!(reveal.record.response, "the");
        }
        let before_reload = game.current().unwrap();
        let stored = store.load(&plan.scope()).await.unwrap();
        assert_eq!(stored.len(), 60);
        let mut resumed = GameSession::resume(plan.clone(), &stored);
        assert_eq!(
            resumed.current().unwrap(),
            before_reload,
            "resumes exactly where it stopped"
        );

        // Finish; every trial of the plan is stored exactly once.
        let mut n = 60;
        while !resumed.is_finished() {
            resumed
                .submit(&mut store, "word", Timing::default(), "t")
                .await
                .unwrap();
            n += 1;
        }
        assert_eq!(n, total);
        assert_eq!(store.load(&plan.scope()).await.unwrap().len(), total);
        assert!(matches!(
            resumed
                .submit(&mut store, "late", Timing::default(), "t")
                .await,
            Err(SubmitError::Finished)
        ));
        assert_eq!(resumed.progress(), (total, total));

        // The aggregate leaves practice out and has one row per context here (one participant).
        let records = store.load(&plan.scope()).await.unwrap();
        let passages: Vec<_> = plan.items.iter().map(|(p, _)| p.clone()).collect();
        let csv = provo_aggregate_csv(&records, &passages, Delimiter::Comma);
        let practice_trials = plan.items[0].0.words().len() - 1;
        assert_eq!(csv.lines().count() - 1, total - practice_trials);
        let long = clozelab::data::export_long_csv(&records, Delimiter::Comma);
        assert_eq!(import_long_csv("long.csv", &long).unwrap(), records);
    });
}

#[test]
fn failed_save_keeps_the_trial() {
    pollster::block_on(async {
        let plan = study().plan("bob", &BTreeMap::new()).unwrap();
        let mut store = MemoryStore {
            fail_after: Some(2),
            ..Default::default()
        };
        let mut game = GameSession::resume(plan, &[]);
        game.submit(&mut store, "a", Timing::default(), "t")
            .await
            .unwrap();
        game.submit(&mut store, "b", Timing::default(), "t")
            .await
            .unwrap();
        let stuck = game.current().unwrap();
        let r = game.submit(&mut store, "c", Timing::default(), "t").await;
        assert!(matches!(r, Err(SubmitError::Store(_))));
        assert_eq!(game.current().unwrap(), stuck, "the UI must not move on");
        assert_eq!(
            store.records.len(),
            2,
            "what was saved is still there to download"
        );
    });
}

#[test]
fn correct_answers_and_reveal() {
    pollster::block_on(async {
        let config = StudyConfig::from_json(r#"{"passages": ["kitchen"]}"#).unwrap();
        let mut game = GameSession::resume(config.plan("c", &BTreeMap::new()).unwrap(), &[]);
        let mut store = MemoryStore::default();
        let r = game
            .submit(&mut store, "SUNDAY", Timing::default(), "t")
            .await
            .unwrap();
        assert!(r.correct && r.true_word == "Sunday");
        let r = game
            .submit(&mut store, "mother", Timing::default(), "t")
            .await
            .unwrap();
        assert!(!r.correct && r.true_word == "my");
        assert_eq!(
            clozelab::game::run::session::validate_entry("x y"),
            Err(EntryError::Characters)
        );
    });
}

#[test]
fn lists_counterbalance_and_are_recorded_to_the_results() {
    use clozelab::game::design::lists::ListAssignment;
    use clozelab::game::design::study::StudyError;
    use clozelab::game::readback::results::StudyResults;
    use clozelab::game::run::export::{ExportKind, Manifest, ModelInfo};
    let config = StudyConfig::from_json(
        r#"{"title": "Lists", "practice": "garden", "lists": [
            {"name": "A", "passages": ["storm", "bees"]},
            {"name": "B", "passages": ["letter", "river"]}]}"#,
    )
    .unwrap();
    let url = |list: &str| BTreeMap::from([("list".to_string(), list.to_string())]);
    let plan = config.plan("P1", &url("B")).unwrap();
    let ids: Vec<&str> = plan.items.iter().map(|(p, _)| p.id.as_str()).collect();
    assert_eq!(ids, ["garden", "letter", "river"]);
    let chosen = plan.list.clone().unwrap();
    assert_eq!(
        (chosen.name.as_str(), chosen.how),
        ("B", ListAssignment::UrlParameter)
    );
    assert_eq!(
        config.plan("P1", &url("C")),
        Err(StudyError::UnknownList("C".into()))
    );
    // Without a list in the URL, a stable hash of the id: both lists are used, each the same
    // way every time.
    let hashed: Vec<String> = (0..40)
        .map(|i| {
            config
                .plan(&format!("P{i}"), &BTreeMap::new())
                .unwrap()
                .list
                .unwrap()
                .name
        })
        .collect();
    assert!(hashed.iter().any(|n| n == "A") && hashed.iter().any(|n| n == "B"));
    assert_eq!(
        config.plan("P7", &BTreeMap::new()).unwrap().list,
        config.plan("P7", &BTreeMap::new()).unwrap().list
    );
    // Lists are checked like passages.
    for (bad, expected) in [
        (
            r#"[{"name": "A", "passages": ["nope"]}]"#,
            "unknown passage",
        ),
        (
            r#"[{"name": "A", "passages": ["storm"]}, {"name": "A", "passages": ["bees"]}]"#,
            "used twice",
        ),
        (
            r#"[{"name": " ", "passages": ["storm"]}]"#,
            "name of its own",
        ),
    ] {
        let err = StudyConfig::from_json(&format!(r#"{{"lists": {bad}}}"#)).unwrap_err();
        assert!(err.to_string().contains(expected), "{err}");
    }
    let too_many = r#"{"passages_per_participant": 3, "lists": [{"name": "A", "passages": ["storm", "bees", "letter"]}, {"name": "B", "passages": ["river"]}]}"#;
    assert!(matches!(
        StudyConfig::from_json(too_many),
        Err(StudyError::PassageCount {
            got: 3,
            available: 1
        })
    ));
    // The export says which list and how; the results reader shows it per participant.
    let manifest = Manifest::new(&ModelInfo::default(), &config, &plan, 0, "now");
    let bundle = ExportKind::Bundle
        .render(&[], &[], Some(&manifest))
        .unwrap();
    assert!(bundle.contains(r#""how": "url_parameter""#), "{bundle}");
    let results = StudyResults::read(vec![("b.json".into(), bundle.into_bytes())]).unwrap();
    assert_eq!(results.participants[0].list.as_deref(), Some("B"));
}
