//! The two-token game's estimator (analysis::perplexity) on known distributions.

use clozelab::analysis::perplexity::{
    BUTTONS, PTrue, Pair, PerplexityError, Round, SimContext, estimate_loss, model_player_pairs,
    reward, simulate,
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
                true_token: None,
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
            true_token: Some(0),
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
