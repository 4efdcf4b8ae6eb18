//! Table 1 of Ilia & Aziz (2024) from ../shared/provo (skipped when ../shared is absent), and the
//! oracle split's contract.

use crate::common;
use clozelab::data::provo::ContextKey;

use std::collections::BTreeMap;

use clozelab::analysis::metrics::{EceConvention, tvd};
use clozelab::analysis::table1::{OracleSize, Table1Options, compute, oracle_split};
use clozelab::data::provo::{read_word_lists, strip_list_number};
use clozelab::rng::SplitMix64;

#[test]
fn oracle_halves_are_disjoint_equal_and_seeded() {
    let human: BTreeMap<String, u32> = [("a", 7u32), ("b", 5), ("c", 1)]
        .iter()
        .map(|(w, c)| (w.to_string(), *c))
        .collect();
    let (h1, h2) = oracle_split(&human, OracleSize::Half, &mut SplitMix64::new(1)).unwrap();
    // 13 responses: one dropped, 6 + 6, together never more than the original counts.
    assert_eq!((h1.total(), h2.total()), (6.0, 6.0));
    for w in ["a", "b", "c"] {
        let used = (h1.prob(w) + h2.prob(w)) * 6.0;
        assert!(used <= human[w] as f64 + 1e-9, "{w}: {used}");
    }
    let again = oracle_split(&human, OracleSize::Half, &mut SplitMix64::new(1)).unwrap();
    assert_eq!((again.0, again.1), (h1.clone(), h2.clone()));
    let other = oracle_split(&human, OracleSize::Half, &mut SplitMix64::new(2)).unwrap();
    assert!(
        other.0 != h1 || other.1 != h2,
        "different seeds give different splits"
    );
    let single: BTreeMap<String, u32> = [("a".to_string(), 1u32)].into();
    assert!(oracle_split(&single, OracleSize::Half, &mut SplitMix64::new(1)).is_none());
    assert!(tvd(&h1, &h2) <= 1.0);
}

#[test]
fn oracles_of_10_and_20_are_disjoint_draws_without_replacement() {
    let human: BTreeMap<String, u32> = [("a", 25u32), ("b", 12), ("c", 3)]
        .iter()
        .map(|(w, c)| (w.to_string(), *c))
        .collect();
    for n in [10usize, 20] {
        let mut rng = SplitMix64::new(4);
        let (g1, g2) = oracle_split(&human, OracleSize::Of(n), &mut rng).unwrap();
        assert_eq!((g1.total(), g2.total()), (n as f64, n as f64));
        for w in ["a", "b", "c"] {
            let used = (g1.prob(w) + g2.prob(w)) * n as f64;
            assert!(used <= human[w] as f64 + 1e-9, "{w}: {used}");
        }
    }
    // 40 responses hold two groups of 20 but not of 21.
    assert!(oracle_split(&human, OracleSize::Of(21), &mut SplitMix64::new(1)).is_none());
    assert_eq!("half".parse::<OracleSize>(), Ok(OracleSize::Half));
    assert_eq!("10".parse::<OracleSize>(), Ok(OracleSize::Of(10)));
    assert!("0".parse::<OracleSize>().is_err() && "ten".parse::<OracleSize>().is_err());
}

#[test]
fn list_answers_on_one_line_are_split_into_words() {
    let dir = common::repo_root().join("target");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("lists-{}.jsonl", std::process::id()));
    let lines = [
        r#"{"text_id": 1, "word_num": 2, "list_prompt": "explosion fire flare-up fire"}"#,
        r#"{"text_id": 1, "word_num": 3, "list_prompt": "1. later \n2. ago"}"#,
        r#"{"text_id": 1, "word_num": 4, "list_prompt": "went. reached. went."}"#,
    ];
    std::fs::write(
        &path,
        lines.join(
            "
",
        ),
    )
    .unwrap();
    let lists = read_word_lists(&path, "list_prompt").unwrap();
    std::fs::remove_file(&path).ok();
    let words = |k: u32| lists[&ContextKey::new(1, k)].words.clone();
    assert_eq!(
        words(2),
        [("explosion", 1.0), ("fire", 2.0), ("flareup", 1.0)]
            .iter()
            .map(|(w, c)| (w.to_string(), *c))
            .collect()
    );
    assert_eq!(words(3).len(), 2);
    assert_eq!(words(4).get("went"), Some(&2.0));
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
    let options = Table1Options {
        resamples: 5,
        ..Table1Options::default()
    };
    let (rows, per_context) = compute(&shared.join("provo"), &options).unwrap();
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
    // The interpretation curve (random replacement) runs from the model's expected TVD (to
    // oracle group 1) down to the oracle's, never below it, and W1 to the oracle reaches 0.
    let t05 = get("GPT-2 (T=0.5)");
    let curve = t05.interpretation_curve.clone().unwrap();
    let oracle_mean = get("Oracle").tvd_human.unwrap();
    assert_eq!(curve.len(), 11);
    assert!((curve[0].mean_tvd - t05.tvd_oracle.unwrap().mean).abs() < 1e-9);
    assert!((curve[10].mean_tvd - oracle_mean).abs() < 1e-9);
    assert_eq!(curve[10].w1_to_oracle, 0.0);
    for w in curve.windows(2) {
        assert!(w[1].mean_tvd <= w[0].mean_tvd + 1e-3, "{w:?}");
        assert!(w[1].w1_to_oracle <= w[0].w1_to_oracle + 1e-3, "{w:?}");
    }
    assert!(curve.iter().all(|p| p.mean_tvd >= oracle_mean - 1e-3));
    assert!((t05.w1_to_oracle.unwrap() - curve[0].w1_to_oracle).abs() < 1e-9);
    let ci = get("BLOOM").tvd_human_ci.unwrap();
    let (lo, hi) = (ci.low, ci.high);
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

#[test]
fn smaller_oracles_disagree_more_and_the_papers_ece_convention_lowers_chatgpts_ece() {
    let Some(shared) = common::shared_dir() else {
        eprintln!("SKIPPED: ../shared absent (needs ../shared/provo)");
        return;
    };
    let dir = shared.join("provo");
    let oracle_tvd = |oracle_size| {
        let options = Table1Options {
            resamples: 3,
            oracle_size,
            ..Table1Options::default()
        };
        let (rows, _) = compute(&dir, &options).unwrap();
        let oracle = rows.iter().find(|r| r.system == "Oracle").unwrap();
        (oracle.tvd_human.unwrap(), oracle.contexts)
    };
    let (ten, twenty, half) = (
        oracle_tvd(OracleSize::Of(10)),
        oracle_tvd(OracleSize::Of(20)),
        oracle_tvd(OracleSize::Half),
    );
    assert!(
        ten.0 > twenty.0 && twenty.0 > half.0,
        "{ten:?} {twenty:?} {half:?}"
    );
    // Groups of 20 need 40 responses: fewer contexts have them.
    assert!(
        twenty.1 < ten.1 && ten.1 <= half.1,
        "{ten:?} {twenty:?} {half:?}"
    );

    // ECE against the human majority: the paper's code drops confidence 1 from every bin,
    // which is how it reports 0.37 for ChatGPT.
    let chatgpt_ece = |ece| {
        let options = Table1Options {
            resamples: 1,
            ece,
            ..Table1Options::default()
        };
        let (rows, _) = compute(&dir, &options).unwrap();
        let row = rows.iter().find(|r| r.system == "ChatGPT").unwrap();
        row.ece_human_majority.unwrap()
    };
    let (ours, papers) = (
        chatgpt_ece(EceConvention::LastBin),
        chatgpt_ece(EceConvention::DropCertain),
    );
    eprintln!(
        "ChatGPT ECE (human majority): last bin {ours:.3}, paper's convention {papers:.3} (published 0.37)"
    );
    assert!((papers - 0.37).abs() < 0.005, "{papers}");
    assert!((ours - 0.44).abs() < 0.005, "{ours}");
}

/// Brill's lexicon from the npm package `pos` (the setup installs it).
fn pos_tagger() -> Option<clozelab::text::pos::Tagger> {
    let path = common::repo_root().join("node_modules/pos/lexicon.js");
    let text = std::fs::read_to_string(&path).ok()?;
    let lexicon = clozelab::text::pos::Lexicon::from_js(&text).expect("lexicon.js parses");
    Some(clozelab::text::pos::Tagger::new(lexicon))
}

/// Agreement of the tagger with a reference file of scripts/reference_pos.py: for each context
/// the distinct words in sorted order and their tags; `words` gives each context's words with
/// their weights (people, samples). Returns the agreement and the commonest disagreements.
fn agreement_with(
    tagger: &clozelab::text::pos::Tagger,
    norms: &[clozelab::data::provo::ProvoContext],
    reference: &str,
    words: impl Fn(&clozelab::data::provo::ProvoContext) -> Option<BTreeMap<String, usize>>,
) -> (f64, usize, Vec<String>) {
    let spacy: BTreeMap<(u32, u32), Vec<&str>> = reference
        .lines()
        .filter_map(|line| {
            let mut f = line.split('\t');
            let key = (f.next()?.parse().ok()?, f.next()?.parse().ok()?);
            let tags = f.next()?.split(' ').filter(|t| !t.is_empty()).collect();
            Some((key, tags))
        })
        .collect();
    let (mut agree, mut total) = (0usize, 0usize);
    let mut confusions: BTreeMap<String, usize> = BTreeMap::new();
    for c in norms {
        let (Some(tags), Some(words)) = (spacy.get(&(c.text_id, c.word_num)), words(c)) else {
            continue;
        };
        assert_eq!(
            tags.len(),
            words.len(),
            "context {}:{}",
            c.text_id,
            c.word_num
        );
        for ((word, count), spacy_tag) in words.iter().zip(tags) {
            let ours = tagger.tag_in_context(&c.context, word).map(|t| t.as_str());
            total += count;
            if ours == Some(*spacy_tag) {
                agree += count;
            } else {
                let kind = format!("spaCy {} → {}", spacy_tag, ours.unwrap_or("none"));
                *confusions.entry(kind).or_default() += count;
            }
        }
    }
    let mut worst: Vec<_> = confusions.into_iter().collect();
    worst.sort_by_key(|b| std::cmp::Reverse(b.1));
    let worst = worst
        .iter()
        .take(6)
        .map(|(k, n)| format!("{k}: {n}"))
        .collect();
    (agree as f64 / total.max(1) as f64, total, worst)
}

/// The tagger's universal tags agree with spaCy's English pipeline (`en_core_web_sm`, through
/// scripts/reference_pos.py) on ≥ 90% of the Provo human responses, each tagged after its
/// context, and of GPT-2's sampled words (T = 0.5), which its rules were not written against.
/// Skips without ../shared or the reference files.
#[test]
fn the_tagger_agrees_with_spacy_on_the_provo_responses_in_context() {
    let (Some(shared), Some(tagger)) = (common::shared_dir(), pos_tagger()) else {
        eprintln!("skipped: needs ../shared/provo and node_modules/pos (npm ci)");
        return;
    };
    let fixtures = common::repo_root().join("tests/fixtures");
    let (Ok(humans), Ok(gpt2)) = (
        std::fs::read_to_string(fixtures.join("pos_reference_provo.tsv")),
        std::fs::read_to_string(fixtures.join("pos_reference_gpt2.tsv")),
    ) else {
        eprintln!("skipped: no reference tags (scripts/reference_pos.py)");
        return;
    };
    let provo = shared.join("provo");
    let norms = clozelab::data::provo::read_norms(&provo).unwrap();
    let people = |c: &clozelab::data::provo::ProvoContext| {
        Some(
            c.human
                .iter()
                .map(|(w, n)| (w.clone(), *n as usize))
                .collect(),
        )
    };
    let samples =
        clozelab::data::provo::read_counted_samples(&provo.join("samples_gpt2_temp0.5_n40.jsonl"))
            .unwrap();
    let sampled = |c: &clozelab::data::provo::ProvoContext| {
        let s = samples.get(&ContextKey::new(c.text_id, c.word_num))?;
        let mut words: BTreeMap<String, usize> = BTreeMap::new();
        for (w, n) in &s.words {
            *words.entry(w.to_lowercase()).or_default() += *n as usize;
        }
        Some(words)
    };
    for (what, reference, words) in [
        ("Provo responses", &humans, &people as &dyn Fn(&_) -> _),
        ("GPT-2 (T=0.5) words", &gpt2, &sampled),
    ] {
        let (agreement, total, worst) = agreement_with(&tagger, &norms, reference, words);
        eprintln!(
            "tagger agreement with spaCy on {total} {what}: {:.1}%; commonest disagreements: {}",
            100.0 * agreement,
            worst.join(", ")
        );
        assert!(agreement >= 0.90, "{what}: agreement {agreement:.3} < 0.90");
    }
}

/// Syntactic TVD on the paper's samples: merging words into their parts of speech can only bring
/// distributions closer, so every system's syntactic TVD is at most its word-level TVD, per
/// context; and the oracle stays the closest to people.
#[test]
fn syntactic_tvd_is_below_the_word_level_and_the_oracle_is_closest() {
    let (Some(shared), Some(tagger)) = (common::shared_dir(), pos_tagger()) else {
        eprintln!("skipped: needs ../shared/provo and node_modules/pos (npm ci)");
        return;
    };
    use clozelab::analysis::classes::{Level, PartOfSpeech, class_tvd_rows};
    let data =
        clozelab::analysis::dataset::Dataset::from_shared_dir(&shared.join("provo")).unwrap();
    let options = Table1Options {
        resamples: 2,
        ..Table1Options::default()
    };
    let (rows, per_context) = clozelab::analysis::table1::compute_on(&data, &options).unwrap();
    let classes =
        class_tvd_rows(&data, &PartOfSpeech(&tagger), Level::Syntactic, &options).unwrap();
    let oracle = classes.iter().find(|r| r.system == "Oracle").unwrap();
    for row in classes.iter().filter(|r| r.system != "Oracle") {
        let words: BTreeMap<(u32, u32), f64> = per_context
            .iter()
            .filter(|p| p.system == row.system)
            .filter_map(|p| Some(((p.text_id, p.word_num), p.tvd_human?)))
            .collect();
        for (t, w, syntactic) in &row.per_context {
            assert!(
                *syntactic <= words[&(*t, *w)] + 1e-9,
                "{} {t}:{w}",
                row.system
            );
        }
        let word_row = rows.iter().find(|r| r.system == row.system).unwrap();
        assert!(row.tvd_human.unwrap() < word_row.tvd_human.unwrap());
        assert!(
            oracle.tvd_human.unwrap() < row.tvd_human.unwrap(),
            "{}",
            row.system
        );
    }
}
