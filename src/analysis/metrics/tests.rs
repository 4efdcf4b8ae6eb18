use super::*;
use crate::rng::SplitMix64;

fn random_dist(rng: &mut SplitMix64) -> WordDistribution {
    let words = ["a", "b", "c", "d", "e"];
    let counts: Vec<(&str, f64)> = words
        .iter()
        .map(|w| (*w, (rng.next_u64() % 4) as f64))
        .collect();
    WordDistribution::from_counts(counts)
        .unwrap_or_else(|_| WordDistribution::from_samples(["a"]).unwrap())
}

#[test]
fn tvd_properties() {
    let mut rng = SplitMix64::new(11);
    for _ in 0..500 {
        let (p, q, r) = (
            random_dist(&mut rng),
            random_dist(&mut rng),
            random_dist(&mut rng),
        );
        let d = tvd(&p, &q);
        assert!((0.0..=1.0).contains(&d));
        assert!((d - tvd(&q, &p)).abs() < TOLERANCE, "symmetric");
        assert!(tvd(&p, &p) < TOLERANCE, "zero on itself");
        assert!(
            d <= tvd(&p, &r) + tvd(&r, &q) + TOLERANCE,
            "triangle inequality"
        );
        if d < TOLERANCE {
            assert!(
                p.support().all(|(w, pw)| (pw - q.prob(w)).abs() < 1e-9),
                "zero only if equal"
            );
        }
    }
    let disjoint = (
        WordDistribution::from_samples(["x"]).unwrap(),
        WordDistribution::from_samples(["y"]).unwrap(),
    );
    assert_eq!(tvd(&disjoint.0, &disjoint.1), 1.0);
}

#[test]
fn empty_and_bad_input() {
    assert_eq!(
        WordDistribution::from_samples(Vec::<&str>::new()),
        Err(MetricsError::Empty)
    );
    assert_eq!(
        WordDistribution::from_samples(["...", "—"]),
        Err(MetricsError::Empty)
    );
    assert!(matches!(
        WordDistribution::from_counts([("a", -1.0)]),
        Err(MetricsError::BadCount { .. })
    ));
    assert!(matches!(
        WordDistribution::from_counts([("a", f64::NAN)]),
        Err(MetricsError::BadCount { .. })
    ));
    assert_eq!(mean(&[]), None);
    assert_eq!(mean_with_bootstrap_ci(&[], 100, 1), None);
    assert_eq!(wasserstein1(&[], &[1.0]), None);
    assert_eq!(wasserstein1(&[f64::NAN], &[1.0]), None);
    assert_eq!(ece(&[], 10), None);
    assert_eq!(ece(&[(0.5, true)], 0), None);
}

#[test]
fn mode_ties_are_alphabetical() {
    let p = WordDistribution::from_samples(["zebra", "apple", "mango", "mango", "apple"]).unwrap();
    assert_eq!(p.mode(), ("apple", 0.4));
}

#[test]
fn ece_in_unit_interval_and_bootstrap_brackets_mean() {
    let mut rng = SplitMix64::new(5);
    for _ in 0..200 {
        let preds: Vec<(f64, bool)> = (0..20)
            .map(|_| (rng.next_unit() as f64, rng.next_u64().is_multiple_of(2)))
            .collect();
        let e = ece(&preds, 10).unwrap();
        assert!((0.0..=1.0).contains(&e));
    }
    let values: Vec<f64> = (0..50).map(|i| (i as f64 * 0.37).sin().abs()).collect();
    let (m, ci) = mean_with_bootstrap_ci(&values, 1000, 3).unwrap();
    assert!(ci.low <= m && m <= ci.high && ci.low < ci.high);
    assert_eq!(
        mean_with_bootstrap_ci(&values, 1000, 3),
        mean_with_bootstrap_ci(&values, 1000, 3)
    );
}

#[test]
fn wasserstein_matches_sorted_difference_for_equal_sizes() {
    let a = [0.3, 0.1, 0.9, 0.5];
    let b = [0.2, 0.8, 0.4, 0.6];
    let (mut sa, mut sb) = (a.to_vec(), b.to_vec());
    sa.sort_by(f64::total_cmp);
    sb.sort_by(f64::total_cmp);
    let expected: f64 = sa.iter().zip(&sb).map(|(x, y)| (x - y).abs()).sum::<f64>() / 4.0;
    assert!((wasserstein1(&a, &b).unwrap() - expected).abs() < 1e-12);
    assert_eq!(wasserstein1(&a, &a), Some(0.0));
}

#[test]
fn the_interpretation_curve_replaces_random_contexts_and_never_undercuts_the_oracle() {
    // A model better than the oracle on a fifth of the contexts, much worse elsewhere.
    let mut rng = SplitMix64::new(5);
    let oracle: Vec<f64> = (0..500)
        .map(|_| 0.3 + 0.2 * f64::from(rng.next_unit()))
        .collect();
    let model: Vec<f64> = oracle
        .iter()
        .enumerate()
        .map(|(i, o)| if i % 5 == 0 { o - 0.1 } else { o + 0.3 })
        .collect();
    let percents: Vec<u32> = (0..=10).map(|k| k * 10).collect();
    let curve = interpretation_curve(&model, &oracle, &percents, 20, 3).unwrap();
    let (m, o) = (mean(&model).unwrap(), mean(&oracle).unwrap());
    for p in &curve {
        let expected = m + (o - m) * f64::from(p.percent) / 100.0;
        assert!((p.mean_tvd - expected).abs() < 0.01, "{p:?} vs {expected}");
        assert!(p.mean_tvd >= o - 1e-9, "{p:?} below the oracle's {o}");
    }
    assert!(
        curve
            .windows(2)
            .all(|w| w[1].w1_to_oracle <= w[0].w1_to_oracle + 0.005)
    );
    assert_eq!(curve[10].w1_to_oracle, 0.0);
    assert_eq!(
        curve,
        interpretation_curve(&model, &oracle, &percents, 20, 3).unwrap()
    );
    assert!(interpretation_curve(&model, &oracle[1..], &percents, 20, 3).is_none());
    assert!(interpretation_curve(&model, &oracle, &percents, 0, 3).is_none());
    // Worst first answers another question: it undercuts the oracle at 90 %.
    let worst = worst_first_curve(&model, &oracle).unwrap();
    assert!(worst[90] < o, "{} vs {o}", worst[90]);
}

#[test]
fn certain_predictions_go_in_the_last_bin_or_in_none() {
    let preds = [(1.0, false), (1.0, true), (0.35, false)];
    let ours = ece(&preds, 10).unwrap();
    let paper = ece_with(&preds, 10, EceConvention::DropCertain).unwrap();
    // Ours: bin 9 has one hit of two at confidence 1 (gap 0.5), bin 3 a miss at 0.35.
    assert!((ours - (2.0 / 3.0 * 0.5 + 1.0 / 3.0 * 0.35)).abs() < 1e-12);
    assert!((paper - 1.0 / 3.0 * 0.35).abs() < 1e-12);
    assert_eq!(ece_with(&[], 10, EceConvention::DropCertain), None);
}

proptest::proptest! {
    /// W₁ is a metric on samples: symmetric, zero on a copy, the triangle inequality; a shift
    /// of one sample by c moves it by |c| from the original; and for equal sizes it is the
    /// mean distance between the sorted values paired in order.
    #[test]
    fn wasserstein1_is_a_metric_and_pairs_sorted_values(
        a in proptest::collection::vec(-5.0f64..5.0, 1..12),
        b in proptest::collection::vec(-5.0f64..5.0, 1..12),
        c in proptest::collection::vec(-5.0f64..5.0, 1..12),
        shift in -3.0f64..3.0,
    ) {
        let w = |x: &[f64], y: &[f64]| wasserstein1(x, y).unwrap();
        proptest::prop_assert!((w(&a, &b) - w(&b, &a)).abs() < 1e-9);
        proptest::prop_assert!(w(&a, &a).abs() < 1e-12);
        proptest::prop_assert!(w(&a, &c) <= w(&a, &b) + w(&b, &c) + 1e-9);
        let shifted: Vec<f64> = a.iter().map(|x| x + shift).collect();
        proptest::prop_assert!((w(&a, &shifted) - shift.abs()).abs() < 1e-9);
        let n = a.len().min(b.len());
        let (mut x, mut y) = (a[..n].to_vec(), b[..n].to_vec());
        x.sort_by(f64::total_cmp);
        y.sort_by(f64::total_cmp);
        let paired = x.iter().zip(&y).map(|(p, q)| (p - q).abs()).sum::<f64>() / n as f64;
        proptest::prop_assert!((w(&x, &y) - paired).abs() < 1e-9);
    }
}
