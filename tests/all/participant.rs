//! The app's exports as Analysis data and a participant beside the models, on a dataset small
//! enough to work out by hand (the expected figures are derived in the comments).

use crate::common;
use clozelab::data::provo::ContextKey;

use std::collections::BTreeMap;

use clozelab::analysis::dataset::Dataset;
use clozelab::analysis::figures::Plot;
use clozelab::analysis::participant::{ParticipantError, accuracies, report};
use clozelab::analysis::passage_texts::{PassageTexts, own_text_id};
use clozelab::data::provo::{ProvoContext, Samples};
use clozelab::data::{Delimiter, ResponseRecord, export_long_csv};

fn context(word_num: u32, original: &str, human: &[(&str, u32)]) -> ProvoContext {
    ProvoContext {
        text_id: 1,
        word_num,
        context: ["The", "old", "lighthouse"][..word_num as usize - 1].join(" "),
        original: original.into(),
        human: human.iter().map(|(w, n)| (w.to_string(), *n)).collect(),
        gpt2_logprob_human: None,
        gpt2_logprob_original: None,
    }
}

fn answer(participant: &str, passage: &str, position: u32, response: &str) -> ResponseRecord {
    ResponseRecord {
        participant: participant.into(),
        passage: passage.into(),
        position,
        response: response.into(),
        response_time_ms: Some(1200.0),
        timestamp: "2026-11-22T10:00:00Z".into(),
        normalized: String::new(),
        first_keystroke_ms: None,
        practice: false,
        run: String::new(),
    }
}

fn samples(words: &[(&str, f64)]) -> Samples {
    Samples {
        words: words.iter().map(|(w, n)| (w.to_string(), *n)).collect(),
        failed: 0,
    }
}

const STORM: &str = "A storm came in over the hills";

/// Norms: (1,2) "old" {old 3, sun 1}; (1,3) "lighthouse" {lamp 2, lighthouse 1}.
/// System M: (1,2) {old 3, sun 1}; (1,3) {lighthouse 3, lamp 1}. System N: (1,2) {sun 1}.
/// p1: old, lamp (and "sun" again for (1,2): a repeat). p2: sun, lighthouse.
/// p3, p4: "wind" after "A storm" (built-in-like passage "storm"); p5 on an unknown passage.
fn dataset() -> Dataset {
    let mut data = Dataset {
        norms: vec![
            context(2, "old", &[("old", 3), ("sun", 1)]),
            context(3, "lighthouse", &[("lamp", 2), ("lighthouse", 1)]),
        ],
        systems: vec![
            (
                "M".into(),
                BTreeMap::from([
                    (
                        ContextKey::new(1, 2),
                        samples(&[("old", 3.0), ("sun", 1.0)]),
                    ),
                    (
                        ContextKey::new(1, 3),
                        samples(&[("lighthouse", 3.0), ("lamp", 1.0)]),
                    ),
                ]),
            ),
            (
                "N".into(),
                BTreeMap::from([(ContextKey::new(1, 2), samples(&[("sun", 1.0)]))]),
            ),
        ],
        ..Dataset::default()
    };
    let mut practice = answer("p1", "1", 3, "night");
    practice.practice = true;
    let records = vec![
        answer("p1", "1", 2, "Old"),
        answer("p1", "1", 3, "lamp"),
        answer("p1", "1", 2, "sun"),
        practice,
        answer("p2", "1", 2, "sun"),
        answer("p2", "1", 3, "lighthouse."),
        answer("p3", "storm", 3, "wind"),
        answer("p4", "storm", 3, "Wind"),
        answer("p5", "nowhere", 2, "x"),
    ];
    data.add_responses(
        &records,
        &PassageTexts::shared(&[("storm".into(), STORM.into())]),
    );
    data
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn exports_merge_into_the_norms_once_per_trial() {
    let data = dataset();
    let counts = |k: (u32, u32)| {
        data.norms
            .iter()
            .find(|c| ContextKey::new(c.text_id, c.word_num) == ContextKey::from(k))
            .map(|c| c.human.clone())
            .unwrap()
    };
    // p1's old, p2's sun; p1's repeated "sun" and the practice trial are not counted.
    assert_eq!(
        counts((1, 2)),
        BTreeMap::from([("old".into(), 4), ("sun".into(), 2)])
    );
    assert_eq!(
        counts((1, 3)),
        BTreeMap::from([("lamp".into(), 3), ("lighthouse".into(), 2)])
    );
    let storm = data
        .norms
        .iter()
        .find(|c| c.text_id == own_text_id("storm", STORM))
        .unwrap();
    assert_eq!(
        (
            storm.word_num,
            storm.context.as_str(),
            storm.original.as_str()
        ),
        (3, "A storm", "came")
    );
    assert_eq!(storm.human, BTreeMap::from([("wind".into(), 2)]));
    assert_eq!(
        data.participants.keys().collect::<Vec<_>>(),
        ["p1", "p2", "p3", "p4"]
    );
    assert_eq!(data.notes.len(), 2, "{:?}", data.notes);
    assert!(data.notes[0].starts_with("1 responses were left out"));
    assert!(data.notes[1].starts_with("1 responses repeated"));
}

#[test]
fn a_participant_beside_every_system_and_the_oracle() {
    let data = dataset();
    let r = report(&data, "p1").unwrap();
    assert_eq!(r.systems, ["M", "N"]);
    let [me, m, n, oracle] = &r.scores[..] else {
        panic!("{:?}", r.scores)
    };
    // p1 on (1,2): "old", the original; the others {old 3, sun 2}: share 3/5, the majority;
    // M gives it 3/4, N 0. On (1,3): "lamp", not "lighthouse"; others {lamp 2, lighthouse 2}:
    // 1/2, tied majority; M gives it 1/4, N has no samples there.
    assert_eq!((me.name.as_str(), me.contexts), ("p1", 2));
    assert!(close(me.top1_accuracy, 0.5));
    assert!(close(me.system_probs[0].unwrap(), (0.75 + 0.25) / 2.0));
    assert!(close(me.system_probs[1].unwrap(), 0.0));
    assert!(close(me.others_share, (0.6 + 0.5) / 2.0));
    assert!(close(me.majority_share, 1.0));
    // M's top words: "old" (3/4) and "lighthouse" (3/4), both the originals; N gives "old" 0.
    assert_eq!(m.name, "M");
    assert!(close(m.top1_accuracy, 1.0));
    assert!(close(m.system_probs[0].unwrap(), 0.75));
    assert!(close(m.system_probs[1].unwrap(), 0.0));
    assert!(close(m.others_share, (0.6 + 0.5) / 2.0));
    // N answers (1,2) only, "sun": wrong, 2 of the others' 5, not their majority; M gives it 1/4.
    assert_eq!((n.name.as_str(), n.contexts), ("N", 1));
    assert!(close(n.top1_accuracy, 0.0));
    assert!(close(n.system_probs[0].unwrap(), 0.25));
    assert!(close(n.system_probs[1].unwrap(), 1.0));
    assert!(close(n.others_share, 0.4));
    assert!(close(n.majority_share, 0.0));
    // The others' majority: "old", then the tie lamp/lighthouse goes to "lamp".
    assert!(close(oracle.top1_accuracy, 0.5));
    assert!(close(oracle.majority_share, 1.0));
    // Accuracies: p1 0.5, p2 0.5 (sun ✗, lighthouse ✓), p3 and p4 0 ("wind", not "came").
    let all = accuracies(&data);
    let by: Vec<(&str, f64)> = all.iter().map(|(p, _, a)| (p.as_str(), *a)).collect();
    assert_eq!(by, [("p1", 0.5), ("p2", 0.5), ("p3", 0.0), ("p4", 0.0)]);
    assert_eq!(
        (me.rank, m.rank, n.rank, oracle.rank, r.participants),
        (1, 1, 3, 1, 4)
    );
    let p3 = report(&data, "p3").unwrap();
    assert_eq!(
        p3.scores.len(),
        2,
        "neither system has samples on the storm passage"
    );
    assert_eq!(p3.scores[0].rank, 3);
    assert_eq!(p3.scores[0].system_probs, [None, None]);
    let Plot::Histogram { marks, .. } = &p3.histogram.plot else {
        panic!()
    };
    assert_eq!(
        marks.len(),
        1,
        "only p3 is marked, not the oracle in a system's place: {marks:?}"
    );
    // The histogram: two participants in the lowest bin, two at 0.5; p1, M and N marked.
    let Plot::Histogram { bins, marks, .. } = &r.histogram.plot else {
        panic!()
    };
    assert_eq!((bins.len(), bins[0].2, bins[10].2), (20, 2, 2));
    assert_eq!(
        marks,
        &[
            ("p1".to_string(), 0.5),
            ("M".to_string(), 1.0),
            ("N".to_string(), 0.0)
        ]
    );
    assert!(r.histogram.to_svg(900, 520).unwrap().contains("p1: 50.0 %"));
    // Tidy: a row per predictor and system.
    let csv = r.csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "predictor,system,contexts,top1_accuracy,system_prob,others_share,majority_share,rank,participants"
    );
    assert_eq!(lines.len(), 1 + 4 * 2, "{csv}");
    assert_eq!(lines[1], "p1,M,2,0.500000,0.500000,0.550000,1.000000,1,4");
    assert_eq!(lines[2], "p1,N,2,0.500000,0.000000,0.550000,1.000000,1,4");
    assert_eq!(lines[6], "N,N,1,0.000000,1.000000,0.400000,0.000000,3,4");
    assert_eq!(
        report(&data, "nobody"),
        Err(ParticipantError::UnknownParticipant("nobody".into()))
    );
    assert_eq!(
        report(&Dataset::default(), "p1"),
        Err(ParticipantError::NoParticipants)
    );
    // Without systems: the participant and the oracle, one row each with an empty system.
    let people_only = Dataset {
        systems: vec![],
        ..dataset()
    };
    let alone = report(&people_only, "p1").unwrap();
    assert_eq!(alone.scores.len(), 2);
    let csv = alone.csv();
    assert_eq!(
        csv.lines().nth(1),
        Some("p1,,2,0.500000,,0.550000,1.000000,1,4")
    );
}

#[test]
fn exports_are_recognised_among_the_files_and_alone_make_a_dataset() {
    let records = [
        answer("a", "storm", 2, "storm"),
        answer("b", "storm", 2, "wind"),
    ];
    let csv = export_long_csv(&records[..1], Delimiter::Tab);
    let bundle = format!(
        "{{\n  \"manifest\": {{\"app\": \"clozelab\"}},\n  \"responses\": {}\n}}",
        serde_json::to_string(&records[1..]).unwrap()
    );
    let files = vec![("a.tsv".to_string(), csv), ("b.json".to_string(), bundle)];
    let passages = PassageTexts::shared(&[("storm".to_string(), STORM.to_string())]);
    let data = Dataset::from_files(&files, &passages, &[]).unwrap();
    assert_eq!(data.norms.len(), 1);
    assert_eq!(
        data.norms[0].human,
        BTreeMap::from([("storm".into(), 1), ("wind".into(), 1)])
    );
    assert_eq!(data.participants.len(), 2);
    let err = Dataset::from_files(
        &[("c.json".to_string(), "[{\"participant\": 1}]".to_string())],
        &passages,
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("c.json"), "{err}");
}

#[test]
fn the_cli_writes_the_participant_figures() {
    let dir = common::repo_root().join("tests/fixtures/analysis");
    let out = common::repo_root()
        .join("target")
        .join(format!("participants-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    // Two participants on the fixture's passage 1 (its words: The old lighthouse keeper …).
    let records = vec![
        answer("ann", "1", 3, "lighthouse"),
        answer("ann", "1", 4, "keeper"),
        answer("bob", "1", 3, "lamp"),
    ];
    let export = out.join("export.csv");
    std::fs::write(&export, export_long_csv(&records, Delimiter::Comma)).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args([
            "figures",
            "--resamples",
            "2",
            "--participant",
            "ann",
            "--out",
        ])
        .arg(&out)
        .args(["--file", dir.join("norms.jsonl").to_str().unwrap()])
        .args([
            "--file",
            dir.join("samples_small_model.jsonl").to_str().unwrap(),
        ])
        .arg("--responses")
        .arg(&export)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = std::fs::read_to_string(out.join("participants.csv")).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(
        lines[1].starts_with("ann,samples_small_model,2,1.000000,"),
        "{table}"
    );
    assert!(
        lines[2].starts_with("bob,samples_small_model,1,0.000000,"),
        "{table}"
    );
    let own = std::fs::read_to_string(out.join("participant-ann.csv")).unwrap();
    assert!(own.contains("samples_small_model"), "{own}");
    assert!(out.join("participant-ann-accuracy.svg").is_file());
    std::fs::remove_dir_all(&out).ok();
}
