//! Adaptive norming inside JATOS, through the batch session as JATOS keeps it: the config's
//! checks against its design, the choice of list (every list's first runs, then the least
//! certain contexts), completed runs' answers counted once and abandoned runs' not at all, and
//! the study full at its target; then many participants with random answers and random
//! abandoning, checked against an independent count of what they completed.

use std::collections::BTreeMap;

use clozelab::analysis::norming::simulation::MIN_READINGS;
use clozelab::game::design::adaptive_norming::{
    AdaptiveNormingError, NormingAssignment, NormingStateFile,
};
use clozelab::game::design::study::{StudyConfig, StudyError};
use clozelab::game::run::jatos_batch::{ClaimStep, LedgerState, ListClaim};
use clozelab::game::run::norming_state::{
    NORMING_KEY, NORMING_MET_KEY, NormingPlan, ResponseCounts,
};
use clozelab::rng::SplitMix64;
use serde_json::json;

use crate::jatos_batch::Batch;

/// Two lists of one three-word passage each: contexts a:2, a:3 and b:2, b:3.
fn config(norming: serde_json::Value) -> StudyConfig {
    let text = json!({
        "texts": [{"id": "a", "title": "A", "text": "the cat sat"},
                  {"id": "b", "title": "B", "text": "a dog ran"}],
        "lists": [{"name": "A", "passages": ["a"]}, {"name": "B", "passages": ["b"]}],
        "adaptive_norming": norming,
    });
    StudyConfig::from_json(&text.to_string()).unwrap()
}

fn error_of(text: serde_json::Value) -> String {
    StudyConfig::from_json(&text.to_string())
        .unwrap_err()
        .to_string()
}

#[test]
fn a_target_the_design_cannot_state_is_refused_with_its_reason() {
    let texts = json!([{"id": "a", "title": "A", "text": "the cat sat"}]);
    let one_list = error_of(json!({"texts": texts, "passages": ["a"],
        "adaptive_norming": {"max_interval_width": 0.3}}));
    assert!(
        one_list.contains("give the study at least two `lists`"),
        "{one_list}"
    );
    let lists = json!([{"name": "A", "passages": ["a"]}, {"name": "B", "passages": ["storm"]}]);
    let game = error_of(json!({"texts": texts, "lists": lists, "game": "top1",
        "adaptive_norming": {"max_interval_width": 0.3}}));
    assert!(game.contains("next-word game only"), "{game}");
    let no_bound = error_of(json!({"texts": texts, "lists": lists, "adaptive_norming": {}}));
    assert!(no_bound.contains("state a bound"), "{no_bound}");
    let wide = error_of(json!({"texts": texts, "lists": lists,
        "adaptive_norming": {"max_interval_width": 1.5}}));
    assert!(wide.contains("must be in (0, 1]"), "{wide}");
    let prior = error_of(json!({"texts": texts, "lists": lists,
        "adaptive_norming": {"max_interval_width": 0.3, "prior": {"a:9": 0.2}}}));
    assert!(prior.contains("\"a:9\""), "{prior}");
    let url = error_of(json!({"texts": texts, "lists": lists,
        "adaptive_norming": {"max_unseen_mass": 0.2, "full_url": "javascript:alert(1)"}}));
    assert!(url.contains("full_url must be an http(s) address"), "{url}");
    assert_eq!(
        StudyConfig::from_json(
            &json!({"texts": texts, "passages": ["a"],
            "adaptive_norming": {"max_interval_width": 0.3}})
            .to_string()
        ),
        Err(StudyError::AdaptiveNorming(
            AdaptiveNormingError::NeedsLists
        ))
    );
}

/// Claims for `who` at `now`, carried to its end; `None` when the study is full.
fn claim(batch: &mut Batch, config: &StudyConfig, who: &str, now: f64) -> Option<(String, String)> {
    let plan = NormingPlan::of(config).unwrap();
    let mut exchange =
        ListClaim::new(config.lists.clone(), who, None, now).with_norming(plan, vec![]);
    let mut inbox = batch.opened();
    loop {
        match exchange.on_message(&inbox) {
            ClaimStep::Send(out) => inbox = batch.write(&out),
            ClaimStep::Chosen(name) => {
                return Some((name, exchange.reason().unwrap_or("").to_string()));
            }
            ClaimStep::Full(_) => return None,
            other => panic!("unexpected {other:?}"),
        }
    }
}

fn complete(
    batch: &mut Batch,
    config: &StudyConfig,
    who: &str,
    list: &str,
    answers: &[(&str, &str)],
    now: f64,
) {
    let plan = NormingPlan::of(config).unwrap();
    let answers = answers
        .iter()
        .map(|(k, w)| (k.to_string(), w.to_string()))
        .collect();
    batch.carry(ListClaim::mark(who, list, LedgerState::Complete, now).with_norming(plan, answers));
}

#[test]
fn each_list_gets_its_first_runs_then_the_least_certain_list_until_the_target_is_met() {
    let config = config(json!({"max_interval_width": 0.5, "full_url": "https://example.org/full"}));
    let mut batch = Batch::new();
    // The first runs alternate, as without the option, whatever the answers say.
    let mut t = 0.0;
    for i in 0..2 * MIN_READINGS {
        t += 1.0;
        let who = format!("P{i}");
        let (list, reason) = claim(&mut batch, &config, &who, t).unwrap();
        assert!(
            reason.contains("runs every list gets before the answers steer"),
            "{reason}"
        );
        // List A's people agree on every word; list B's split half and half.
        let answers: Vec<(&str, &str)> = if list == "A" {
            vec![("a:2", "cat"), ("a:3", "Sat.")]
        } else if i % 4 < 2 {
            vec![("b:2", "dog"), ("b:3", "ran")]
        } else {
            vec![("b:2", "cow"), ("b:3", "barked")]
        };
        complete(&mut batch, &config, &who, &list, &answers, t);
    }
    assert_eq!(
        batch.data[NORMING_KEY]["a:3"]["sat"],
        json!(MIN_READINGS),
        "answers normalised as the analyses do"
    );
    let plan = NormingPlan::of(&config).unwrap();
    let status = plan.status(&ResponseCounts::from_session(&batch.data));
    assert_eq!(
        (status.met, status.done),
        (2, false),
        "A's contexts are settled, B's are not"
    );
    // Now the answers steer: B, whose contexts are furthest from the target, also while one
    // of its runs is still playing (it has not answered yet).
    let (list, reason) = claim(&mut batch, &config, "Q1", t + 1.0).unwrap();
    assert_eq!(list, "B");
    assert!(
        reason.contains("furthest from the target") && reason.contains("2 of 4 contexts meet it"),
        "{reason}"
    );
    // A reload asks again: the same list, with the reason it was given for.
    assert_eq!(
        claim(&mut batch, &config, "Q1", t + 1.5),
        Some((list.clone(), reason.clone()))
    );
    let (list, reason) = claim(&mut batch, &config, "Q2", t + 2.0).unwrap();
    assert_eq!(list, "B");
    assert!(reason.contains("1 runs still playing"), "{reason}");
    // Q1 never finishes: its answers never count. Q2 and two more complete B with the target.
    for (i, who) in ["Q2", "Q3", "Q4"].iter().enumerate() {
        if *who != "Q2" {
            assert_eq!(
                claim(&mut batch, &config, who, t + 3.0 + i as f64)
                    .unwrap()
                    .0,
                "B"
            );
        }
        complete(
            &mut batch,
            &config,
            who,
            "B",
            &[("b:2", "dog"), ("b:3", "ran")],
            t + 3.0 + i as f64,
        );
        if batch.data.get(NORMING_MET_KEY).is_some() {
            break;
        }
    }
    let met = &batch.data[NORMING_MET_KEY];
    assert_eq!(
        (met["contexts"].clone(), met["met"].clone()),
        (json!(4), json!(4)),
        "{met}"
    );
    let n: u64 = batch.data[NORMING_KEY]["b:2"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(
        n < u64::from(MIN_READINGS) + 4,
        "Q1's abandoned run added nothing: {n}"
    );
    // Full: the next participant is not written down anywhere.
    let before = batch.data.clone();
    assert_eq!(claim(&mut batch, &config, "LATE", t + 10.0), None);
    assert_eq!(batch.data, before);
}

/// Outside JATOS, participants between two refreshes of the state file are spread over the
/// lists in proportion to their need, and none is sent anywhere once the target is met.
#[test]
fn the_state_file_spreads_participants_by_need_outside_jatos() {
    let config = config(json!({"max_interval_width": 0.5}));
    let plan = NormingPlan::of(&config).unwrap();
    let mut state = NormingStateFile {
        written_at: "2026-11-28T08:00:00Z".into(),
        ..NormingStateFile::default()
    };
    let draws = |state: &NormingStateFile| {
        let mut rng = SplitMix64::new(7);
        let mut by_list = BTreeMap::<String, u32>::new();
        for _ in 0..2000 {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            match plan.draw(state, u) {
                NormingAssignment::List { name, .. } => *by_list.entry(name).or_default() += 1,
                NormingAssignment::Full { reason } => panic!("{reason}"),
            }
        }
        by_list
    };
    // No state yet: even.
    let even = draws(&state);
    assert!((even["A"] as i32 - 1000).abs() < 100, "{even:?}");
    // A has its first runs and settled answers; B has none: everyone to B.
    state.runs.insert("A".into(), u64::from(MIN_READINGS));
    for key in ["a:2", "a:3"] {
        let word = if key == "a:2" { "cat" } else { "sat" };
        state
            .counts
            .insert(key.into(), BTreeMap::from([(word.to_string(), 20)]));
    }
    assert_eq!(draws(&state).get("A"), None);
    // Both past their first runs, B still open: B takes nearly everyone.
    state.runs.insert("B".into(), u64::from(MIN_READINGS));
    for key in ["b:2", "b:3"] {
        state.counts.insert(
            key.into(),
            BTreeMap::from([("dog".to_string(), 5), ("cow".to_string(), 5)]),
        );
    }
    let steered = draws(&state);
    assert!(
        steered.get("A").copied().unwrap_or(0) < 50 && steered["B"] > 1900,
        "{steered:?}"
    );
    // B settled too: full, said with the state's date.
    for key in ["b:2", "b:3"] {
        let word = if key == "b:2" { "dog" } else { "ran" };
        state
            .counts
            .insert(key.into(), BTreeMap::from([(word.to_string(), 20)]));
    }
    match plan.draw(&state, 0.3) {
        NormingAssignment::Full { reason } => {
            assert!(reason.contains("2026-11-28T08:00:00Z"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

/// Many participants, interleaved: each claims, then completes with answers drawn from its
/// list's true distributions, or abandons. The batch session's counts equal an independent
/// tally of the completed runs' answers, and once it says the target is met, it is.
#[test]
fn random_participants_leave_counts_that_equal_what_they_completed() {
    let config = config(json!({"max_interval_width": 0.35, "share": 0.75}));
    let plan = NormingPlan::of(&config).unwrap();
    for seed in 0..5u64 {
        let mut rng = SplitMix64::new(seed);
        let mut batch = Batch::new();
        let mut tally: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
        let mut playing: Vec<(String, String)> = Vec::new();
        let mut full_at = None;
        for step in 0..400u32 {
            let now = f64::from(step);
            let u = |rng: &mut SplitMix64| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            if u(&mut rng) < 0.5 || playing.is_empty() {
                match claim(&mut batch, &config, &format!("S{seed}-{step}"), now) {
                    Some((list, _)) => playing.push((format!("S{seed}-{step}"), list)),
                    None => {
                        full_at = Some(step);
                        break;
                    }
                }
            } else {
                let (who, list) = playing.remove((u(&mut rng) * playing.len() as f64) as usize);
                if u(&mut rng) < 0.2 {
                    continue; // abandoned: never heard of again
                }
                let (passage, words) = if list == "A" {
                    ("a", ["cat", "sat"])
                } else {
                    ("b", ["dog", "ran"])
                };
                let answers: Vec<(String, String)> = (0..2)
                    .map(|i| {
                        let word = if u(&mut rng) < 0.6 {
                            words[i].to_string()
                        } else {
                            format!("w{}", (u(&mut rng) * 4.0) as u32)
                        };
                        (format!("{passage}:{}", i + 2), word)
                    })
                    .collect();
                for (k, w) in &answers {
                    *tally
                        .entry(k.clone())
                        .or_default()
                        .entry(w.clone())
                        .or_default() += 1;
                }
                let refs: Vec<(&str, &str)> = answers
                    .iter()
                    .map(|(k, w)| (k.as_str(), w.as_str()))
                    .collect();
                complete(&mut batch, &config, &who, &list, &refs, now);
            }
        }
        let kept: BTreeMap<String, BTreeMap<String, u32>> =
            serde_json::from_value(batch.data[NORMING_KEY].clone()).unwrap();
        assert_eq!(kept, tally, "seed {seed}");
        let status = plan.status(&ResponseCounts::from_session(&batch.data));
        assert!(
            full_at.is_some() && status.done,
            "seed {seed}: reached its target ({status:?})"
        );
        assert!(batch.data.get(NORMING_MET_KEY).is_some(), "seed {seed}");
    }
}
