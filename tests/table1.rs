//! Table 1 of Ilia & Aziz (2024) from ../shared/provo (skipped when ../shared is absent), and the
//! oracle split's contract.

mod common;

use std::collections::BTreeMap;

use clozelab::analysis::metrics::tvd;
use clozelab::analysis::table1::{compute, oracle_halves};
use clozelab::data::provo::strip_list_number;
use clozelab::rng::SplitMix64;

#[test]
fn oracle_halves_are_disjoint_equal_and_seeded() {
    let human: BTreeMap<String, u32> = [("a", 7u32), ("b", 5), ("c", 1)]
        .iter()
        .map(|(w, c)| (w.to_string(), *c))
        .collect();
    let (h1, h2) = oracle_halves(&human, &mut SplitMix64::new(1)).unwrap();
    // 13 responses: one dropped, 6 + 6, together never more than the original counts.
    assert_eq!((h1.total(), h2.total()), (6.0, 6.0));
    for w in ["a", "b", "c"] {
        let used = (h1.prob(w) + h2.prob(w)) * 6.0;
        assert!(used <= human[w] as f64 + 1e-9, "{w}: {used}");
    }
    let again = oracle_halves(&human, &mut SplitMix64::new(1)).unwrap();
    assert_eq!((again.0, again.1), (h1.clone(), h2.clone()));
    let other = oracle_halves(&human, &mut SplitMix64::new(2)).unwrap();
    assert!(
        other.0 != h1 || other.1 != h2,
        "different seeds give different splits"
    );
    let single: BTreeMap<String, u32> = [("a".to_string(), 1u32)].into();
    assert!(oracle_halves(&single, &mut SplitMix64::new(1)).is_none());
    assert!(tvd(&h1, &h2) <= 1.0);
}

#[test]
fn numbered_list_items() {
    assert_eq!(strip_list_number("12. later "), " later ");
    assert_eq!(strip_list_number("3) ago"), " ago");
    assert_eq!(strip_list_number("no number"), "no number");
    assert_eq!(strip_list_number("1999 was"), "1999 was");
}

#[test]
fn reproduces_published_mean_tvds() {
    let Some(shared) = common::shared_dir() else {
        eprintln!("SKIPPED: ../shared absent (needs ../shared/provo)");
        return;
    };
    let (rows, per_context) = compute(&shared.join("provo"), 0, 5).unwrap();
    let get = |name: &str| {
        rows.iter()
            .find(|r| r.system == name)
            .unwrap_or_else(|| panic!("row {name}"))
    };
    // Same contexts as the paper (all 2687) for these systems: within 0.01 of Table 1.
    for (name, published) in [
        ("GPT-2 (T=0.5)", 0.61),
        ("BLOOM", 0.61),
        ("ChatGPT", 0.76),
        ("ChatGPT (list)", 0.82),
    ] {
        let ours = get(name).tvd_human.unwrap();
        assert!(
            (ours - published).abs() <= 0.01,
            "{name}: {ours} vs published {published}"
        );
    }
    // Known gaps (see the issue note): the oracle over all 2687 contexts (0.433 vs 0.42; 0.415 on
    // the GPT-2 subset), GPT-2 ancestral on the 797 available contexts only (0.62 vs 0.64).
    for (name, published, slack) in [("Oracle", 0.42, 0.02), ("GPT-2", 0.64, 0.03)] {
        let ours = get(name).tvd_human.unwrap();
        assert!(
            (ours - published).abs() <= slack,
            "{name}: {ours} vs published {published}"
        );
    }
    assert_eq!(get("Human").contexts, 2687);
    assert_eq!(get("GPT-2").contexts, 797);
    for r in &rows {
        for v in [r.ece_original, r.ece_human_majority, r.tvd_human]
            .into_iter()
            .flatten()
        {
            assert!((0.0..=1.0).contains(&v), "{}: {v}", r.system);
        }
        assert!(r.mean_entropy.is_finite() && r.top1_accuracy <= 1.0);
    }
    assert!(
        per_context
            .iter()
            .all(|p| p.entropy.is_finite() && (0.0..=1.0).contains(&p.mode_prob))
    );
    // The interpretation curve runs from the model's expected TVD (to oracle half₁) to the
    // oracle's; worst contexts go first, so it falls until the model's better-than-oracle
    // contexts are reached, then rises to the oracle's value.
    let t05 = get("GPT-2 (T=0.5)");
    let curve = t05.interpretation_curve.clone().unwrap();
    assert!((curve[0] - t05.tvd_oracle.unwrap().0).abs() < 0.01);
    assert!((curve[100] - get("Oracle").tvd_human.unwrap()).abs() < 1e-9);
    let lowest = curve.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(curve[..50].windows(2).all(|w| w[1] <= w[0] + 1e-12));
    assert!(lowest < curve[100]);
    let (lo, hi) = get("BLOOM").tvd_human_ci.unwrap();
    assert!(lo < get("BLOOM").tvd_human.unwrap() && get("BLOOM").tvd_human.unwrap() < hi);

    // The CLI writes the per-context CSV.
    let csv = common::repo_root()
        .join("target")
        .join(format!("per-context-{}.csv", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args([
            "table1",
            "--provo",
            shared.join("provo").to_str().unwrap(),
            "--resamples",
            "2",
            "--per-context",
            csv.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("GPT-2 (T=0.5)"));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.starts_with("text_id,word_num,system,tvd_human,tvd_oracle,entropy,mode,mode_prob\n")
    );
    assert_eq!(text.lines().count(), 1 + per_context.len());
    std::fs::remove_file(&csv).ok();
}
