//! Study configs: validation with the loader's errors, plans per participant, ids from the
//! URL or JATOS's study link.

use std::collections::BTreeMap;

use clozelab::game::design::study::*;

fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn config_validation() {
    assert!(matches!(
        StudyConfig::from_json("{"),
        Err(StudyError::Json(_))
    ));
    assert_eq!(
        StudyConfig::from_json(r#"{"send_each_response": true}"#),
        Err(StudyError::SendEachWithoutSubmit)
    );
    assert!(
        StudyConfig::from_json(r#"{"send_each_response": true, "submit_url": "/s"}"#)
            .unwrap()
            .send_each_response
    );
    assert!(matches!(
        StudyConfig::from_json(r#"{"unknown_field": 1}"#),
        Err(StudyError::Json(_))
    ));
    assert_eq!(
        StudyConfig::from_json(r#"{"passages": ["nope"]}"#),
        Err(StudyError::UnknownPassage("nope".into()))
    );
    assert!(matches!(
        StudyConfig::from_json(r#"{"passages_per_participant": 0}"#),
        Err(StudyError::PassageCount { .. })
    ));
    assert!(matches!(
        StudyConfig::from_json(r#"{"passages_per_participant": 11}"#),
        Err(StudyError::PassageCount { .. })
    ));
    for bad in [
        "javascript:alert(1)",
        "data:text/html,x",
        " JAVASCRIPT:x",
        "ftp://x",
    ] {
        let json = serde_json::json!({"redirect_url": bad}).to_string();
        assert!(
            matches!(
                StudyConfig::from_json(&json),
                Err(StudyError::RedirectUrl(_))
            ),
            "{bad}"
        );
        let json = serde_json::json!({"decline_url": bad}).to_string();
        assert!(
            matches!(
                StudyConfig::from_json(&json),
                Err(StudyError::DeclineUrl(_))
            ),
            "{bad}"
        );
    }
    assert!(
        StudyConfig::from_json(
            r#"{"redirect_url": "https://app.prolific.com/submissions/complete?cc=X"}"#
        )
        .is_ok()
    );
    for bad in [
        "javascript:alert(1)",
        "//evil.example/x",
        "submit",
        "/a\\b",
        "https://lab.example.org/a b",
    ] {
        let json = serde_json::json!({"submit_url": bad}).to_string();
        assert!(
            matches!(StudyConfig::from_json(&json), Err(StudyError::SubmitUrl(_))),
            "{bad}"
        );
    }
    assert!(StudyConfig::from_json(r#"{"submit_url": "/api/submit"}"#).is_ok());
    // A study server elsewhere (the package's policy then names its origin).
    assert!(StudyConfig::from_json(r#"{"submit_url": "https://lab.example.org/submit"}"#).is_ok());
}

#[test]
fn attention_checks_are_validated_like_the_rest_of_the_config() {
    use clozelab::game::design::attention::AttentionError;
    let with = |checks: &str| {
        StudyConfig::from_json(&format!(
            r#"{{"texts": [{{"id": "s", "title": "S", "text": "One two three"}}],
                "attention_checks": {checks}}}"#
        ))
    };
    let good = r#"[{"passage": "s", "after": 1, "instruction": "Type blue.", "answer": "blue"}]"#;
    assert_eq!(with(good).unwrap().attention_checks[0].name(), "s@1");
    assert_eq!(
        with(r#"[{"passage": "t", "instruction": "Type blue.", "answer": "blue"}]"#),
        Err(StudyError::Attention(AttentionError::UnknownPassage {
            check: "t@0".into(),
            passage: "t".into()
        }))
    );
    assert_eq!(
        with(r#"[{"passage": "s", "instruction": " ", "answer": "blue"}]"#),
        Err(StudyError::Attention(AttentionError::Empty("s@0".into())))
    );
    assert_eq!(
        with(r#"[{"passage": "s", "instruction": "Type blue.", "answer": "?!"}]"#),
        Err(StudyError::Attention(AttentionError::Empty("s@0".into())))
    );
    let twice = r#"[{"id": "c", "passage": "s", "instruction": "Type blue.", "answer": "blue"},
                    {"id": "c", "passage": "s", "instruction": "Type red.", "answer": "red"}]"#;
    assert_eq!(
        with(twice),
        Err(StudyError::Attention(AttentionError::Duplicate("c".into())))
    );
    assert!(matches!(
        with(r#"[{"passage": "s", "instruction": "x", "answer": "y", "place": 2}]"#),
        Err(StudyError::Json(_))
    ));
}

#[test]
fn plans_are_seeded_per_participant() {
    let config = StudyConfig::from_json(
        r#"{"order": "random", "passages_per_participant": 3, "practice": "garden"}"#,
    )
    .unwrap();
    let a = config
        .plan("alice", &params(&[("STUDY_ID", "s1")]))
        .unwrap();
    let a2 = config.plan("alice", &BTreeMap::new()).unwrap();
    let b = config.plan("bob", &BTreeMap::new()).unwrap();
    assert_eq!(a.items, a2.items, "same participant, same order");
    assert_eq!(a.items.len(), 4);
    assert_eq!((a.items[0].0.id.as_str(), a.items[0].1), ("garden", true));
    assert!(
        a.items[1..]
            .iter()
            .all(|(p, practice)| !practice && p.id != "garden")
    );
    assert_ne!(a.order_seed, b.order_seed);
    assert_eq!(a.url_ids.get("STUDY_ID").map(String::as_str), Some("s1"));
    // Over many participants every passage gets first place sometimes: the order is shuffled.
    let firsts: std::collections::BTreeSet<String> = (0..200)
        .map(|i| {
            config
                .plan(&format!("p{i}"), &BTreeMap::new())
                .unwrap()
                .items[1]
                .0
                .id
                .clone()
        })
        .collect();
    assert!(firsts.len() >= 8, "{firsts:?}");
}

#[test]
fn a_study_inside_jatos_takes_its_ids_from_the_study_link_and_sends_to_jatos() {
    let cookie = "JATOS_ID_7=studyResultUuid=0a-1b&workerId=5";
    let mut run =
        clozelab::game::design::jatos_run::JatosRun::detect("/publix/0a-1b/c-2/index.html", cookie)
            .unwrap();
    let config =
        StudyConfig::from_json(r#"{"title": "T", "redirect_url": "https://app.prolific.com/x"}"#)
            .unwrap()
            .in_jatos(run.clone());
    // Without Prolific's id in the study link: JATOS's worker, whatever the fallback.
    assert_eq!(
        config.participant_id(&BTreeMap::new(), "gen").unwrap(),
        "jatos-worker-5"
    );
    assert_eq!(config.redirect_url.as_deref(), Some(run.end_url().as_str()));
    assert!(config.send_each_response);
    let bundle = r#"{"responses": [{"participant": "P", "passage": "p", "position": 2}]}"#;
    let pending =
        clozelab::game::run::outbox::submission(&config, "P/p/2".into(), bundle.into()).unwrap();
    // Appended to the run's result data under the answer's own key, one bundle per line.
    assert_eq!(
        (pending.key.as_str(), pending.url.as_str()),
        ("P/p/2", "/publix/0a-1b/c-2/resultData")
    );
    assert_eq!(
        pending.method,
        clozelab::game::run::outbox::SendMethod::AppendText
    );
    assert!(
        pending.body.contains("\"idempotency_key\":\"P/p/2\"") && pending.body.ends_with("}\n")
    );
    // The study link's parameters (from initData) name the participant and the session.
    run.url_parameters = params(&[("PROLIFIC_PID", "p9"), ("STUDY_ID", "s9")]);
    let config = config.in_jatos(run);
    assert_eq!(
        config.participant_id(&BTreeMap::new(), "gen").unwrap(),
        "p9"
    );
    let plan = config.plan("p9", &BTreeMap::new()).unwrap();
    assert_eq!(plan.url_ids.get("STUDY_ID").map(String::as_str), Some("s9"));
    // Outside JATOS: one response's own key, added to what the server has.
    let plain = StudyConfig::from_json(r#"{"submit_url": "/submit"}"#).unwrap();
    let pending =
        clozelab::game::run::outbox::submission(&plain, "P/p/2".into(), bundle.into()).unwrap();
    assert_eq!(
        (pending.key.as_str(), pending.method),
        ("P/p/2", clozelab::game::run::outbox::SendMethod::PostJson)
    );
    assert!(
        clozelab::game::run::outbox::submission(
            &StudyConfig::default_play(),
            "k".into(),
            "{}".into()
        )
        .is_none()
    );
}

#[test]
fn participant_ids() {
    let config = StudyConfig::from_json(r#"{"participant_param": "worker"}"#).unwrap();
    assert_eq!(
        config
            .participant_id(&params(&[("worker", "w1"), ("PROLIFIC_PID", "p1")]), "gen")
            .unwrap(),
        "w1"
    );
    assert_eq!(
        config
            .participant_id(&params(&[("PROLIFIC_PID", "p1")]), "gen")
            .unwrap(),
        "p1"
    );
    assert_eq!(
        config.participant_id(&BTreeMap::new(), "gen").unwrap(),
        "gen"
    );
    assert_eq!(
        config.participant_id(&params(&[("worker", &"x".repeat(200))]), "gen"),
        Err(StudyError::ParticipantId)
    );
    let hostile = "<img src=x onerror=alert(1)>";
    assert_eq!(
        config
            .participant_id(&params(&[("worker", hostile)]), "gen")
            .unwrap(),
        hostile,
        "kept; only ever shown as text"
    );
}
