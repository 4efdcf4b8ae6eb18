//! The next-token games: the two-token game's estimator (analysis::perplexity) on known
//! distributions, and the games' core (tokenised passages, positions, records, exports).

use crate::common;

use clozelab::analysis::perplexity::{
    BUTTONS, PTrue, Pair, PerplexityError, Round, SimContext, TrueToken, estimate_loss,
    model_player_pairs, reward, simulate,
};
use clozelab::rng::SplitMix64;

fn random_distribution(n: usize, peak: f64, rng: &mut SplitMix64) -> Vec<f64> {
    let raw: Vec<f64> = (0..n)
        .map(|_| (peak * f64::from(rng.next_unit())).exp())
        .collect();
    let total: f64 = raw.iter().sum();
    raw.into_iter().map(|x| x / total).collect()
}

/// Every x weighted by g(x) instead of sampled: the estimator's expectation, by brute force.
#[test]
fn the_weights_average_to_g_over_h() {
    let mut rng = SplitMix64::new(7);
    for _ in 0..20 {
        let g = random_distribution(12, 4.0, &mut rng);
        let h = random_distribution(12, 4.0, &mut rng);
        let y = (rng.next_u64() % 12) as usize;
        let expected: f64 = (0..12)
            .map(|x| {
                let p = if x == y { 0.5 } else { h[y] / (h[y] + h[x]) };
                let round = Round {
                    logp_other: g[x].ln(),
                    p_true: PTrue::new(p).unwrap(),
                };
                let one = Pair {
                    logp_true: g[y].ln(),
                    rounds: vec![round],
                };
                g[x] * one.estimate().unwrap().d.exp()
            })
            .sum();
        assert!(
            (expected - g[y] / h[y]).abs() < 1e-9 * (g[y] / h[y]),
            "E[w] = {expected}, g(y)/h(y) = {}",
            g[y] / h[y]
        );
    }
}

#[test]
fn the_loss_is_the_mean_of_the_pairs_and_its_spread() {
    let pairs: Vec<Pair> = [(0.5f64, 0.25f64, 0.5f64), (0.1, 0.2, 0.8)]
        .iter()
        .map(|&(gy, gx, p)| Pair {
            logp_true: gy.ln(),
            rounds: vec![Round {
                logp_other: gx.ln(),
                p_true: PTrue::new(p).unwrap(),
            }],
        })
        .collect();
    let e = estimate_loss(&pairs).unwrap();
    // d₁ = ln(0.5/0.25 · 1) = ln 2; d₂ = ln(0.1/0.2 · 0.25) = ln 0.125.
    let d = [2f64.ln(), 0.125f64.ln()];
    let l_g = (-(0.5f64.ln()) - 0.1f64.ln()) / 2.0;
    assert!((e.loss_generator - l_g).abs() < 1e-12);
    assert!((e.loss_human - (l_g + (d[0] + d[1]) / 2.0)).abs() < 1e-12);
    let sd = ((d[0] - d[1]).powi(2) / 2.0).sqrt();
    assert!((e.se_pairs - sd / 2f64.sqrt()).abs() < 1e-12);
    assert!((e.loss_human_high - e.loss_human - 2.0 * e.se_pairs).abs() < 1e-12);
    assert!((e.perplexity_human - e.loss_human.exp()).abs() < 1e-9);
    assert_eq!((e.pairs, e.rounds), (2, 2));
    assert_eq!(e.mean_ess, 1.0);
}

#[test]
fn the_generator_as_player_scores_exactly_its_own_loss_and_rounding_costs() {
    let mut rng = SplitMix64::new(3);
    let mut pairs = Vec::new();
    let mut model = Vec::new();
    for _ in 0..30 {
        let g = random_distribution(50, 5.0, &mut rng);
        let y = (rng.next_u64() % 50) as usize;
        let xs: Vec<usize> = (0..4).map(|_| (rng.next_u64() % 50) as usize).collect();
        pairs.push(Pair {
            logp_true: g[y].ln(),
            rounds: xs
                .iter()
                .map(|&x| Round {
                    logp_other: g[x].ln(),
                    p_true: PTrue::new(0.5).unwrap(),
                })
                .collect(),
        });
        model.push((g[y].ln(), xs.iter().map(|&x| g[x].ln()).collect()));
    }
    let exact = estimate_loss(&model_player_pairs(&pairs, &model, false)).unwrap();
    assert!((exact.loss_human - exact.loss_generator).abs() < 1e-9);
    let rounded = estimate_loss(&model_player_pairs(&pairs, &model, true)).unwrap();
    assert!(rounded.loss_human != exact.loss_human);
}

#[test]
fn the_simulation_converges_to_the_true_loss_and_underestimates_with_few_rounds() {
    let mut rng = SplitMix64::new(11);
    let contexts: Vec<SimContext> = (0..40)
        .map(|_| {
            let logits: Vec<f64> = (0..30).map(|_| 4.0 * f64::from(rng.next_unit())).collect();
            let softmax = |t: f64| {
                let e: Vec<f64> = logits.iter().map(|l| (l / t).exp()).collect();
                let z: f64 = e.iter().sum();
                e.into_iter().map(|x| x / z).collect::<Vec<f64>>()
            };
            SimContext {
                generator: softmax(1.0),
                player: softmax(0.5),
                true_token: TrueToken::FromPlayer,
            }
        })
        .collect();
    let points = simulate(&contexts, &[1, 4, 40, 1000], 60, 5).unwrap();
    let bias: Vec<f64> = points.iter().map(|p| p.bias).collect();
    assert!(bias[0] < -0.05, "few rounds should underestimate: {bias:?}");
    assert!(
        bias[3].abs() < 0.02,
        "1000 rounds per pair should be close: {bias:?}"
    );
    assert!(bias[0].abs() > bias[1].abs() && bias[1].abs() > bias[2].abs());
    // A fixed true token is used as given.
    let fixed: Vec<SimContext> = contexts
        .iter()
        .map(|c| SimContext {
            true_token: TrueToken::Fixed(0),
            ..c.clone()
        })
        .collect();
    let point = simulate(&fixed, &[1], 1, 0).unwrap()[0];
    let true_loss = -fixed.iter().map(|c| c.player[0].ln()).sum::<f64>() / 40.0;
    assert!((point.true_loss - true_loss).abs() < 1e-12);
}

/// The player's expected reward, over which of the two tokens is the original, given their
/// beliefs h and the generator g: P(a original) ∝ h(a)·g(b).
fn expected_reward(h: (f64, f64), g: (f64, f64), p_a: f64) -> f64 {
    let (prior_a, prior_b) = (h.0 * g.1, h.1 * g.0);
    let z = prior_a + prior_b;
    prior_a / z * reward(g.0, PTrue::new(p_a).unwrap())
        + prior_b / z * reward(g.1, PTrue::new(1.0 - p_a).unwrap())
}

#[test]
fn a_rational_players_expected_reward_is_maximal_at_the_honest_answer() {
    let mut rng = SplitMix64::new(19);
    for _ in 0..200 {
        let h = (
            f64::from(rng.next_unit()) + 1e-3,
            f64::from(rng.next_unit()) + 1e-3,
        );
        let g = (
            f64::from(rng.next_unit()) + 1e-3,
            f64::from(rng.next_unit()) + 1e-3,
        );
        let honest = h.0 / (h.0 + h.1);
        let best = expected_reward(h, g, honest);
        for p in (1..100).map(|i| f64::from(i) / 100.0) {
            assert!(
                expected_reward(h, g, p) <= best + 1e-9,
                "h={h:?} g={g:?}: answering {p} beats the honest {honest}"
            );
        }
    }
}

#[test]
fn bad_answers_are_rejected() {
    assert_eq!(PTrue::new(0.0), Err(PerplexityError::PTrue(0.0)));
    assert!(PTrue::new(f64::NAN).is_err());
    assert_eq!(
        PTrue::from_button(55, true),
        Err(PerplexityError::Button(55))
    );
    for b in BUTTONS {
        let left = PTrue::from_button(b, true).unwrap().get();
        let right = PTrue::from_button(b, false).unwrap().get();
        assert!((left + right - 1.0).abs() < 1e-12);
    }
    assert_eq!(estimate_loss(&[]), Err(PerplexityError::Empty));
    let no_rounds = Pair {
        logp_true: -1.0,
        rounds: vec![],
    };
    assert_eq!(no_rounds.estimate(), Err(PerplexityError::Empty));
    let positive_logp = Pair {
        logp_true: 0.5,
        rounds: vec![Round {
            logp_other: -1.0,
            p_true: PTrue::new(0.5).unwrap(),
        }],
    };
    assert!(positive_logp.estimate().is_err());
    assert!(simulate(&[], &[1], 1, 0).is_err());
}

use clozelab::game::tokens::records::{TokenRecords, import_token_records};
use clozelab::game::tokens::schedule::Slot;
use clozelab::game::tokens::top1::{Top1Record, accuracies, is_correct};
use clozelab::game::tokens::two_token::{Answer, RoundSetup, TwoTokenRecord, pairs};
use clozelab::game::tokens::{TokenPassage, positions, show_token, single_token};
use clozelab::runtime::modeldir::read_tokenizer;

fn tokenizer() -> clozelab::text::tokenizer::BpeTokenizer {
    read_tokenizer(&common::vocab_dir().expect("GPT-2 vocabulary (npm ci)")).unwrap()
}

#[test]
fn passages_are_cut_into_gpt2_tokens_with_contexts_and_visible_whitespace() {
    let tok = tokenizer();
    let p = TokenPassage::new("p", "Hello world.\n\tNext line", &tok).unwrap();
    let shown: Vec<String> = p.bytes.iter().map(|b| show_token(b)).collect();
    assert_eq!(shown.concat(), "Hello·world.↵⇥Next·line");
    assert_eq!(p.context(0), "");
    assert_eq!(p.context(2), "Hello world");
    assert_eq!(p.context_ids(2), &p.ids[..2]);
    // A character split across tokens shows its bytes.
    let emoji = TokenPassage::new("e", "🦀", &tok).unwrap();
    assert!(
        emoji
            .bytes
            .iter()
            .map(|b| show_token(b))
            .any(|s| s.contains('⟨'))
    );
    assert_eq!(positions(p.len(), None, 0, "p").len(), p.len() - 1);
}

#[test]
fn typed_text_is_checked_against_the_vocabulary() {
    let tok = tokenizer();
    let the = single_token(&tok, "the");
    assert!(the.as_typed.is_some() && the.with_space.is_some());
    assert_ne!(the.as_typed, the.with_space);
    let spaced = single_token(&tok, " the");
    assert_eq!(spaced.as_typed, the.with_space);
    assert_eq!(spaced.with_space, None);
    let long = single_token(&tok, "antidisestablishmentarianism");
    assert_eq!((long.as_typed, long.with_space), (None, None));
    assert_eq!(single_token(&tok, "").as_typed, None);
    assert!(single_token(&tok, "\n").as_typed.is_some());
    assert!(is_correct(
        " the",
        the.with_space,
        the.with_space.unwrap(),
        " the"
    ));
    assert!(!is_correct(
        "the",
        the.as_typed,
        the.with_space.unwrap(),
        " the"
    ));
}

fn slot(position: u32, round: u32, practice: bool) -> Slot {
    Slot {
        passage: "p".into(),
        position,
        round,
        practice,
    }
}

fn two_token_record(
    position: u32,
    round: u32,
    g: (f64, f64),
    button: u8,
    left: bool,
) -> TwoTokenRecord {
    Answer {
        participant: "P1",
        run: "",
        slot: &slot(position, round, false),
        context: "A context, with \"quotes\"",
        true_token: (262, " the"),
        other_token: (257, " a"),
        g_true: g.0,
        g_other: g.1,
        true_left: left,
        button,
        ms_to_answer: Some(812.0),
        timestamp: "2026-11-22T10:00:00Z",
    }
    .record()
    .unwrap()
}

#[test]
fn two_token_answers_become_records_pairs_and_exports_that_read_back() {
    let r = two_token_record(3, 0, (0.2, 0.05), 80, false);
    assert!(
        (r.p_true - 0.2).abs() < 1e-12,
        "80 % on the left, true on the right"
    );
    assert!(r.reward < 0.0);
    let same = Answer {
        other_token: (262, " the"),
        ..Answer {
            participant: "P1",
            run: "",
            slot: &slot(4, 0, false),
            context: "c",
            true_token: (262, " the"),
            other_token: (262, " the"),
            g_true: 0.2,
            g_other: 0.2,
            true_left: true,
            button: 99,
            ms_to_answer: None,
            timestamp: "t",
        }
    }
    .record()
    .unwrap();
    assert_eq!((same.button, same.p_true, same.reward), (50, 0.5, 0.0));
    // The side and sampling seed are fixed by the slot.
    assert_eq!(
        RoundSetup::for_slot(9, &slot(3, 1, false)),
        RoundSetup::for_slot(9, &slot(3, 1, false))
    );
    let sides: std::collections::BTreeSet<bool> = (0..20)
        .map(|i| RoundSetup::for_slot(9, &slot(i, 0, false)).true_left)
        .collect();
    assert_eq!(sides.len(), 2);

    let records = vec![
        r.clone(),
        two_token_record(3, 1, (0.2, 0.1), 30, true),
        two_token_record(5, 0, (0.01, 0.3), 99, true),
    ];
    let grouped = pairs(&records, None).unwrap();
    assert_eq!(grouped.len(), 2);
    assert_eq!(grouped[0].rounds.len(), 2);
    assert!(pairs(&records, Some("nobody")).is_err());

    let all = TokenRecords::TwoToken(records.clone());
    for (name, text) in [
        ("a.csv", all.to_csv().unwrap()),
        ("a.json", all.to_json().unwrap()),
    ] {
        assert_eq!(import_token_records(name, &text).unwrap(), all, "{name}");
    }
    let header = all.to_csv().unwrap();
    assert!(header.starts_with("participant,passage,position,round,context,true_token,"));
    let broken = header.replacen(",80,", ",eighty,", 1);
    let err = import_token_records("b.csv", &broken)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("b.csv: line 2"), "{err}");
}

#[test]
fn top1_records_give_accuracy_per_participant_beside_gpt2() {
    let rec = |participant: &str, correct: bool, model_right: bool, practice: bool| Top1Record {
        participant: participant.into(),
        passage: "p".into(),
        position: 1,
        context: "ctx".into(),
        true_token: 5,
        true_token_text: "x".into(),
        guess: "y".into(),
        guess_token: Some(if correct { 5 } else { 6 }),
        correct,
        gpt2_top1: Some(if model_right { 5 } else { 7 }),
        g_true: Some(0.3),
        g_guess: Some(0.1),
        guess_rank: Some(2),
        ms_to_answer: None,
        timestamp: "t".into(),
        practice,
        run: String::new(),
    };
    let records = vec![
        rec("A", true, true, false),
        rec("A", false, true, false),
        rec("A", false, false, true),
        rec("B", true, false, false),
    ];
    let acc = accuracies(&records).unwrap();
    assert_eq!(acc.len(), 2);
    assert_eq!((acc[0].positions, acc[0].accuracy), (2, 0.5));
    assert_eq!(acc[0].model_accuracy, Some(1.0));
    assert_eq!((acc[1].accuracy, acc[1].model_accuracy), (1.0, Some(0.0)));
    assert!(accuracies(&records[2..3]).is_none());
    let all = TokenRecords::Top1(records);
    for (name, text) in [
        ("t.csv", all.to_csv().unwrap()),
        ("t.json", all.to_json().unwrap()),
    ] {
        assert_eq!(import_token_records(name, &text).unwrap(), all, "{name}");
    }
    assert!(import_token_records("x.csv", "a,b\n1,2\n").is_err());
}

#[test]
fn sampled_tokens_follow_the_distribution() {
    use clozelab::runtime::distributions::sample_token;
    let probs = [0.5f64, 0.3, 0.15, 0.05];
    let logprobs: Vec<f32> = probs.iter().map(|p| p.ln() as f32).collect();
    let mut rng = SplitMix64::new(1);
    let n = 40_000;
    let mut counts = [0usize; 4];
    for _ in 0..n {
        counts[sample_token(&logprobs, &mut rng) as usize] += 1;
    }
    for (c, p) in counts.iter().zip(probs) {
        let se = (p * (1.0 - p) / n as f64).sqrt();
        let share = *c as f64 / n as f64;
        assert!((share - p).abs() < 4.5 * se, "{counts:?}");
    }
}

#[test]
fn token_exports_dropped_into_your_data_are_recognised() {
    use clozelab::game::design::plan::Plan;
    use clozelab::game::design::study::StudyConfig;
    use clozelab::game::readback::imports::{Imported, import_file};
    use clozelab::game::run::export::{Manifest, ModelInfo};
    let all = TokenRecords::TwoToken(vec![two_token_record(3, 0, (0.2, 0.05), 80, false)]);
    let plan = Plan {
        participant: "P1".into(),
        url_ids: Default::default(),
        order_seed: 0,
        items: vec![],
        list: None,
        study_id: "s".into(),
        run: "r".into(),
    };
    let manifest = Manifest::new(
        &ModelInfo::default(),
        &StudyConfig::default_play(),
        &plan,
        0,
        "t",
    );
    for (name, text) in [
        ("two.csv", all.to_csv().unwrap()),
        ("two.json", all.to_json().unwrap()),
    ] {
        match import_file(name, text.as_bytes()) {
            Ok(Imported::TokenRecords(r)) => assert_eq!(r, all, "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    // A bundle is a study's result: its records, and its participant.
    match import_file("bundle.json", all.to_bundle(&manifest).unwrap().as_bytes()) {
        Ok(Imported::Results(results)) => {
            // Read back in the manifest's run.
            let TokenRecords::TwoToken(mut in_run) = all else {
                unreachable!()
            };
            in_run.iter_mut().for_each(|r| r.run = "r".into());
            assert_eq!(
                results.token_records(),
                Some(TokenRecords::TwoToken(in_run))
            );
            assert_eq!(results.participants[0].participant, "P1");
        }
        other => panic!("bundle.json: {other:?}"),
    }
    // The next-word game's own files are still what they were.
    let study = import_file("s.json", br#"{"passages": ["storm"], "game": "two_token"}"#);
    assert!(matches!(study, Ok(Imported::Study(_))));
}

#[test]
fn no_rounds_score_zero_not_minus_zero() {
    use clozelab::game::tokens::two_token::total_reward;
    assert_eq!(format!("{:+.0}", total_reward(&[])), "+0");
}

#[test]
fn a_token_study_config_says_game_counts_seed_and_model() {
    use clozelab::game::design::study::{GameKind, StudyConfig, StudyError};
    let config = StudyConfig::from_json(
        r#"{"game": "two_token", "passages": ["storm"], "positions_per_passage": 5,
            "rounds_per_position": 3, "seed": 42, "model": "models/test/"}"#,
    )
    .unwrap();
    assert_eq!(config.game, GameKind::TwoToken);
    assert_eq!(
        (config.positions_per_passage, config.rounds(), config.seed),
        (Some(5), 3, 42)
    );
    assert_eq!(config.model.as_deref(), Some("models/test/"));
    assert_eq!(StudyConfig::default_play().rounds(), 1);
    for bad in [
        r#"{"rounds_per_position": 0}"#,
        r#"{"positions_per_passage": 0}"#,
    ] {
        assert_eq!(
            StudyConfig::from_json(bad),
            Err(StudyError::TokenGameCounts),
            "{bad}"
        );
    }
    for bad in [
        "https://evil.example/gpt2/",
        "//evil.example/",
        "",
        "a\\b",
        "x\ny",
    ] {
        let json = serde_json::json!({ "model": bad }).to_string();
        assert!(
            matches!(StudyConfig::from_json(&json), Err(StudyError::ModelUrl(_))),
            "{bad:?}"
        );
    }
    assert!(matches!(
        StudyConfig::from_json(r#"{"game": "three_token"}"#),
        Err(StudyError::Json(_))
    ));
}

#[test]
fn a_second_model_scores_the_same_rounds_in_the_order_of_the_pairs() {
    use clozelab::analysis::perplexity::{estimate_loss, model_player_pairs};
    use clozelab::game::tokens::two_token::model_logprobs_for_pairs;
    let mut practice = two_token_record(1, 0, (0.5, 0.5), 50, true);
    practice.practice = true;
    let records = vec![
        two_token_record(5, 0, (0.01, 0.3), 99, true),
        practice,
        two_token_record(3, 0, (0.2, 0.05), 80, false),
        two_token_record(3, 1, (0.2, 0.1), 30, true),
    ];
    let grouped = pairs(&records, None).unwrap();
    // A model that is the generator: the pairs' own log-probabilities, position 3 first.
    let own = model_logprobs_for_pairs(&records, None, |r| Some((r.g_true.ln(), r.g_other.ln())))
        .unwrap();
    let expected: Vec<(f64, Vec<f64>)> = grouped
        .iter()
        .map(|p| (p.logp_true, p.rounds.iter().map(|r| r.logp_other).collect()))
        .collect();
    assert_eq!(own, expected);
    // Scored as a player, the generator's exact answers give exactly its own loss.
    let as_player = estimate_loss(&model_player_pairs(&grouped, &own, false)).unwrap();
    assert!((as_player.loss_human - as_player.loss_generator).abs() < 1e-12);
    // A different model gives a different loss; a record not yet scored gives nothing.
    let flat =
        model_logprobs_for_pairs(&records, None, |_| Some(((0.1f64).ln(), (0.1f64).ln()))).unwrap();
    let flat_loss = estimate_loss(&model_player_pairs(&grouped, &flat, false)).unwrap();
    assert!((flat_loss.loss_human - as_player.loss_human).abs() > 1e-3);
    assert!(
        model_logprobs_for_pairs(&records, None, |r| (r.position != 5).then_some((0.0, 0.0)))
            .is_none()
    );
    // The practice record is never looked up.
    assert!(
        model_logprobs_for_pairs(&records, None, |r| (!r.practice).then_some((0.0, 0.0))).is_some()
    );
}

#[test]
fn a_second_models_scores_are_kept_per_round_until_all_are_there() {
    use clozelab::game::tokens::two_token::ModelScores;
    let records = vec![
        two_token_record(3, 0, (0.2, 0.05), 80, false),
        two_token_record(3, 1, (0.2, 0.1), 30, true),
    ];
    let mut scores = ModelScores::new("distilgpt2");
    assert_eq!(scores.missing(&records).len(), 2);
    assert!(scores.for_pairs(&records).is_none());
    scores.insert(&records[1], -1.0, -2.0);
    assert_eq!(scores.missing(&records), vec![&records[0]]);
    scores.insert(&records[0], -1.0, -3.0);
    assert_eq!(
        scores.for_pairs(&records),
        Some(vec![(-1.0, vec![-3.0, -2.0])])
    );
}
