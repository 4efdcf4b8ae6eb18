//! The word-distribution estimators on the deterministic test model: the tree sampler against the naive
//! one-row-per-sample sampler (chi-square), Monte Carlo against exact word probabilities,
//! exact probabilities against brute-force sums over segmentations, on CPU and wgpu.

use crate::common;

use std::collections::BTreeMap;

use clozelab::estimators::decoding::DecodingStrategy;
use clozelab::estimators::progress::{FnMonitor, Progress, Unmonitored};
use clozelab::estimators::sampler::{
    SamplerConfig, SamplerError, WordSamples, sample_words, sample_words_naive,
};
use clozelab::estimators::wordprob::{WordProbError, WordScorer};
use clozelab::model::{Transformer, load_transformer};
use clozelab::runtime::backend::{ComputeDevice, cpu_device};
use clozelab::runtime::distributions::next_token_logprobs;
use clozelab::runtime::modeldir::read_model_dir;
use clozelab::text::tokenizer::{BpeTokenizer, END_OF_TEXT_ID};
use clozelab::text::words::{ContinuationStatus, continuation_status};

const CONTEXT: &str = "The cat sat on the";
/// Low enough that the test model's word distribution is peaked (a few words hold most mass).
const PEAKED: f64 = 0.15;

fn load(compute: &ComputeDevice) -> (Transformer, BpeTokenizer) {
    let files = read_model_dir(common::test_model_dir()).unwrap();
    let (_, model) = load_transformer(&files.config_json, &files.weights, &compute.device).unwrap();
    (model, files.tokenizer)
}

fn config(n: usize, seed: u64, temperature: f64) -> SamplerConfig {
    SamplerConfig::new(n, seed)
        .unwrap()
        .with_strategy(DecodingStrategy::new(temperature, None, None, None).unwrap())
}

fn tree(
    model: &Transformer,
    tok: &BpeTokenizer,
    context: &str,
    config: &SamplerConfig,
) -> WordSamples {
    let mut progress = Progress {
        contexts_done: 0,
        contexts_total: 1,
        samples_done: 0,
        elapsed_s: 0.0,
    };
    pollster::block_on(sample_words(
        model,
        tok,
        context,
        config,
        &mut Unmonitored,
        &mut progress,
    ))
    .unwrap()
}

/// Word counts with failures as one more category.
fn categories(s: &WordSamples) -> BTreeMap<String, usize> {
    let mut c = s.words.clone();
    c.insert("\u{0}failed".into(), s.failed);
    c
}

fn assert_same_distribution(a: &WordSamples, b: &WordSamples, what: &str) {
    let (stat, df) = common::chi_square_two_sample(&categories(a), &categories(b));
    let critical = common::chi_square_critical_001(df);
    eprintln!("{what}: chi2 = {stat:.1}, df = {df}, critical(0.001) = {critical:.1}");
    assert!(
        df >= 3,
        "{what}: the test needs several categories, got df = {df}"
    );
    assert!(
        stat < critical,
        "{what}: chi2 {stat:.1} ≥ {critical:.1}: different distributions"
    );
}

#[test]
fn tree_sampler_draws_like_naive_sampler_cpu() {
    let (model, tok) = load(&cpu_device());
    let n = 2000;
    let fast = tree(&model, &tok, CONTEXT, &config(n, 11, PEAKED));
    let naive = pollster::block_on(sample_words_naive(
        &model,
        &tok,
        CONTEXT,
        &config(n, 12, PEAKED),
    ))
    .unwrap();
    assert_eq!((fast.n, naive.n), (n, n));
    assert_same_distribution(&fast, &naive, "tree vs naive (cpu)");
    // The test has power: a slightly different temperature is detected.
    let warmer = pollster::block_on(sample_words_naive(
        &model,
        &tok,
        CONTEXT,
        &config(n, 13, PEAKED * 1.6),
    ))
    .unwrap();
    let (stat, df) = common::chi_square_two_sample(&categories(&fast), &categories(&warmer));
    assert!(
        stat > common::chi_square_critical_001(df),
        "T={PEAKED} vs T={} not told apart: chi2 {stat:.1}",
        PEAKED * 1.6
    );
}

#[test]
fn tree_sampler_with_truncation_draws_like_naive_sampler() {
    let (model, tok) = load(&cpu_device());
    let strategy = DecodingStrategy::new(0.3, Some(50), Some(0.9), None).unwrap();
    let cfg = |seed| {
        SamplerConfig::new(800, seed)
            .unwrap()
            .with_strategy(strategy.clone())
    };
    let fast = tree(&model, &tok, "Once upon a", &cfg(1));
    let naive =
        pollster::block_on(sample_words_naive(&model, &tok, "Once upon a", &cfg(2))).unwrap();
    assert_same_distribution(&fast, &naive, "top-k + top-p, tree vs naive");
}

#[test]
fn sampler_is_reproducible_and_counts_add_up() {
    let (model, tok) = load(&cpu_device());
    let a = tree(&model, &tok, CONTEXT, &config(300, 5, 1.0));
    let b = tree(&model, &tok, CONTEXT, &config(300, 5, 1.0));
    let c = tree(&model, &tok, CONTEXT, &config(300, 6, 1.0));
    assert_eq!(a, b, "same seed, same samples");
    assert_ne!(a.words, c.words, "another seed, other samples");
    assert_eq!(a.words.values().sum::<usize>() + a.failed, 300);
    assert_eq!(a.surface.values().sum::<usize>() + a.failed, 300);
    let q = a.relative_frequencies();
    assert!((q.values().sum::<f64>() - 1.0).abs() < 1e-9);
    // With a budget of one token, only a token that holds a whole word and what ends it (like
    // "s)") can succeed; every accepted word must be such a token's, and most samples fail.
    let short = tree(
        &model,
        &tok,
        CONTEXT,
        &config(300, 5, 1.0).with_token_budget(1).unwrap(),
    );
    let one_token_words: std::collections::BTreeSet<String> = (0..END_OF_TEXT_ID)
        .filter_map(
            |id| match continuation_status(tok.token_bytes(id).unwrap(), false) {
                ContinuationStatus::Complete(w) => Some(w),
                _ => None,
            },
        )
        .collect();
    assert!(
        short.surface.keys().all(|w| one_token_words.contains(w)),
        "{:?}",
        short.surface
    );
    assert!(short.failed >= 250, "{} of 300 failed", short.failed);
    // The empty context conditions on <|endoftext|>.
    let empty = tree(&model, &tok, "", &config(50, 1, 1.0));
    assert_eq!(empty.n, 50);
}

#[test]
fn progress_is_reported_and_cancel_stops_the_run() {
    let (model, tok) = load(&cpu_device());
    let mut reports = Vec::new();
    let mut monitor = FnMonitor {
        clock: || 1.0,
        on_progress: |p: &Progress| {
            reports.push(p.samples_done);
            true
        },
    };
    let contexts: Vec<String> = vec![CONTEXT.into(), "Once upon a".into()];
    let out = pollster::block_on(clozelab::estimators::sampler::sample_words_for_contexts(
        &model,
        &tok,
        &contexts,
        &config(100, 1, 1.0),
        &mut monitor,
    ))
    .unwrap();
    assert_eq!(out.len(), 2);
    assert!(
        reports.len() >= 3 && reports.windows(2).all(|w| w[0] <= w[1]),
        "{reports:?}"
    );
    assert_eq!(*reports.last().unwrap(), 200);
    let mut cancel = FnMonitor {
        clock: || 0.0,
        on_progress: |_: &Progress| false,
    };
    let mut progress = Progress {
        contexts_done: 0,
        contexts_total: 1,
        samples_done: 0,
        elapsed_s: 0.0,
    };
    let r = pollster::block_on(sample_words(
        &model,
        &tok,
        CONTEXT,
        &config(1000, 1, 1.0),
        &mut cancel,
        &mut progress,
    ));
    assert_eq!(r, Err(SamplerError::Cancelled));
}

fn exact(
    model: &Transformer,
    tok: &BpeTokenizer,
    context: &str,
    words: &[&str],
    t: f64,
) -> Vec<clozelab::estimators::wordprob::WordProb> {
    let mut scorer = WordScorer::new(tok);
    let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    pollster::block_on(scorer.score(model, tok, context, &words, t, &mut Unmonitored)).unwrap()
}

/// Monte Carlo frequencies converge to the exact probabilities: for the most frequent words,
/// the share of samples that spell the word right after the context is within 4.5 standard
/// errors of its exact probability.
fn mc_converges_to_exact(compute: &ComputeDevice) {
    let (model, tok) = load(compute);
    let n = 4000;
    let samples = tree(&model, &tok, CONTEXT, &config(n, 3, PEAKED));
    let mut top: Vec<(&String, &usize)> = samples.spelled_directly.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1));
    let words: Vec<&str> = top.iter().take(6).map(|(w, _)| w.as_str()).collect();
    assert!(
        words.len() >= 3,
        "peaked distribution should still have a few words: {words:?}"
    );
    let scores = exact(&model, &tok, CONTEXT, &words, PEAKED);
    for (score, &(_, &count)) in scores.iter().zip(&top) {
        let q = count as f64 / n as f64;
        let p = score.prob;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        eprintln!(
            "{:>14}: MC {q:.4}  exact {p:.4}  (± {:.4})",
            score.word,
            4.5 * se
        );
        assert!(
            (q - p).abs() <= 4.5 * se + 2.0 / n as f64,
            "{}: MC {q} vs exact {p}",
            score.word
        );
    }
}

#[test]
fn mc_converges_to_exact_cpu() {
    mc_converges_to_exact(&cpu_device());
}

#[test]
fn mc_converges_to_exact_wgpu() {
    if let Some(gpu) = common::wgpu_or_skip() {
        mc_converges_to_exact(&gpu);
    }
}

#[test]
fn tree_sampler_on_wgpu_draws_like_naive_on_cpu() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    let (gpu_model, tok) = load(&gpu);
    let (cpu_model, _) = load(&cpu_device());
    let n = 1000;
    let fast = tree(&gpu_model, &tok, CONTEXT, &config(n, 21, PEAKED));
    let naive = pollster::block_on(sample_words_naive(
        &cpu_model,
        &tok,
        CONTEXT,
        &config(n, 22, PEAKED),
    ))
    .unwrap();
    assert_same_distribution(&fast, &naive, "tree on wgpu vs naive on cpu");
}

/// Every segmentation of `target` into vocabulary tokens, by brute force.
fn segmentations(tok: &BpeTokenizer, target: &[u8]) -> Vec<Vec<u32>> {
    let by_bytes: BTreeMap<Vec<u8>, u32> = (0..END_OF_TEXT_ID)
        .map(|id| (tok.token_bytes(id).unwrap().to_vec(), id))
        .collect();
    fn go(rest: &[u8], by: &BTreeMap<Vec<u8>, u32>, path: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if rest.is_empty() {
            out.push(path.clone());
            return;
        }
        for k in 1..=rest.len() {
            if let Some(&id) = by.get(&rest[..k]) {
                path.push(id);
                go(&rest[k..], by, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    go(target, &by_bytes, &mut Vec::new(), &mut out);
    out
}

/// The exact estimator against full forward passes over every segmentation.
fn exact_matches_brute_force(compute: &ComputeDevice, context: &str, word: &str) {
    let (model, tok) = load(compute);
    let target = if context.is_empty() {
        word.to_string()
    } else {
        format!(" {word}")
    };
    let segs = segmentations(&tok, target.as_bytes());
    assert!(
        segs.len() >= 4,
        "{target:?} should have several segmentations, has {}",
        segs.len()
    );
    let ctx = tok.encode_context(context).unwrap();
    let mut no_end = 0.0;
    let mut canonical_with_end = 0.0;
    let canonical = tok.encode(&target).unwrap();
    for seg in &segs {
        let mut ids = ctx.clone();
        let mut logp = 0.0;
        for &t in seg {
            let lp = pollster::block_on(next_token_logprobs(&model, &ids)).unwrap();
            logp += lp[t as usize] as f64;
            ids.push(t);
        }
        no_end += logp.exp();
        if *seg == canonical {
            // End factor: next tokens that close the word right away (no lookahead here).
            let lp = pollster::block_on(next_token_logprobs(&model, &ids)).unwrap();
            let end: f64 = (0..model.vocab_size as u32)
                .filter(|&v| {
                    let mut bytes = target.as_bytes().to_vec();
                    let ended = v == END_OF_TEXT_ID;
                    if !ended {
                        bytes.extend_from_slice(tok.token_bytes(v).unwrap());
                    }
                    continuation_status(&bytes, ended)
                        == ContinuationStatus::Complete(word.to_string())
                })
                .map(|v| (lp[v as usize] as f64).exp())
                .sum();
            canonical_with_end = logp.exp() * end;
        }
    }
    let got = &exact(&model, &tok, context, &[word], 1.0)[0];
    eprintln!(
        "{target:?}: {} segmentations, brute force {no_end:e}, exact {:e} (pruned ≤ {:e})",
        segs.len(),
        got.prob_no_end,
        got.pruned_mass
    );
    assert!(got.prob_no_end <= no_end * (1.0 + 1e-3));
    assert!(
        got.prob_no_end + got.pruned_mass >= no_end * (1.0 - 1e-3),
        "missing mass beyond the pruning bound"
    );
    assert!(got.segmentations >= 1 && got.segmentations <= segs.len());
    // The ending factor: at least the canonical path's immediate endings, at most all of no-end.
    assert!(
        got.prob >= canonical_with_end * (1.0 - 1e-3),
        "{} < {canonical_with_end}",
        got.prob
    );
    assert!(got.prob <= got.prob_no_end + 1e-15);
}

#[test]
fn exact_sums_segmentations_cpu() {
    exact_matches_brute_force(&cpu_device(), CONTEXT, "hat");
    exact_matches_brute_force(&cpu_device(), "", "Hat");
}

#[test]
fn exact_on_wgpu_matches_cpu() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    let words = ["hat", "don't", "Zürich", "1970"];
    let (g, tok) = load(&gpu);
    let (c, _) = load(&cpu_device());
    for (a, b) in exact(&g, &tok, CONTEXT, &words, 1.0)
        .iter()
        .zip(exact(&c, &tok, CONTEXT, &words, 1.0))
    {
        let (la, lb) = (a.logprob.unwrap(), b.logprob.unwrap());
        assert!((la - lb).abs() < 2e-3, "{}: wgpu {la} vs cpu {lb}", a.word);
        assert_eq!(a.segmentations, b.segmentations);
    }
}

#[test]
fn exact_rejects_non_words_and_variants_sum() {
    let (model, tok) = load(&cpu_device());
    let mut scorer = WordScorer::new(&tok);
    for bad in [
        "",
        "two words",
        "<img src=x onerror=alert(1)>",
        " cat",
        "cat.",
    ] {
        let r = pollster::block_on(scorer.score(
            &model,
            &tok,
            CONTEXT,
            &[bad.to_string()],
            1.0,
            &mut Unmonitored,
        ));
        assert!(
            matches!(r, Err(WordProbError::NotAWord(_))),
            "{bad:?}: {r:?}"
        );
    }
    let r = pollster::block_on(scorer.score(
        &model,
        &tok,
        CONTEXT,
        &["cat".into()],
        0.0,
        &mut Unmonitored,
    ));
    assert!(matches!(r, Err(WordProbError::Temperature(_))));
}

#[test]
fn sequence_logprobs_match_one_token_at_a_time() {
    let (model, tok) = load(&cpu_device());
    let context = tok.encode_context("The cat sat").unwrap();
    let tokens = tok.encode(" on the mat.").unwrap();
    let got = pollster::block_on(clozelab::runtime::distributions::sequence_logprobs(
        &model, &context, &tokens,
    ))
    .unwrap();
    assert_eq!(got.len(), tokens.len());
    let mut prefix = context.clone();
    for (i, &token) in tokens.iter().enumerate() {
        let row = pollster::block_on(next_token_logprobs(&model, &prefix)).unwrap();
        assert!(
            (row[token as usize] - got[i]).abs() < 1e-4,
            "token {i}: {} vs {}",
            row[token as usize],
            got[i]
        );
        prefix.push(token);
    }
    assert_eq!(
        pollster::block_on(clozelab::runtime::distributions::sequence_logprobs(
            &model,
            &context,
            &[]
        )),
        Ok(vec![])
    );
    assert!(
        pollster::block_on(clozelab::runtime::distributions::sequence_logprobs(
            &model,
            &context,
            &[60_000]
        ))
        .is_err()
    );
}

#[test]
fn token_stats_give_ranks_probabilities_and_a_reproducible_sample() {
    use clozelab::runtime::distributions::{token_stats, top_k};
    let (model, tok) = load(&cpu_device());
    let context = tok.encode("The cat sat on the").unwrap();
    let row = pollster::block_on(next_token_logprobs(&model, &context)).unwrap();
    let best = top_k(&row, 3);
    let asked = [best[2].0, best[0].0, 262];
    let stats =
        pollster::block_on(token_stats(&model, &tok, &context, &asked, 5, Some(42))).unwrap();
    assert_eq!(&stats.ranks[..2], &[3, 1]);
    let rank_262 = 1 + row.iter().filter(|&&x| x > row[262]).count() as u32;
    assert_eq!(stats.ranks[2], rank_262);
    for (lp, &id) in stats.logprobs.iter().zip(&asked) {
        assert!((lp - f64::from(row[id as usize])).abs() < 1e-6);
    }
    assert_eq!(stats.top.len(), 5);
    assert_eq!(stats.top[0].id, best[0].0);
    let sampled = stats.sampled.clone().unwrap();
    assert!((sampled.logprob - f64::from(row[sampled.id as usize])).abs() < 1e-6);
    assert_eq!(sampled.bytes, tok.token_bytes(sampled.id).unwrap());
    let again =
        pollster::block_on(token_stats(&model, &tok, &context, &asked, 5, Some(42))).unwrap();
    assert_eq!(again.sampled, stats.sampled);
    // An empty context conditions on <|endoftext|>; an unknown token is an error.
    assert!(pollster::block_on(token_stats(&model, &tok, &[], &[1], 1, None)).is_ok());
    assert!(pollster::block_on(token_stats(&model, &tok, &context, &[60_000], 1, None)).is_err());
}

#[test]
fn a_comma_after_digits_may_separate_thousands() {
    use clozelab::estimators::wordprob::EndClass;
    let (_, tok) = load(&cpu_device());
    let mut scorer = WordScorer::new(&tok);
    let id = |text: &str| {
        let ids = tok.encode(text).unwrap();
        assert_eq!(ids.len(), 1, "{text:?} is one GPT-2 token");
        ids[0]
    };
    // "10" + "," + "000" is "10,000" (the norms' "10000"), not "10" then a comma.
    assert_eq!(scorer.end_class("10", "", id(",")), Some(EndClass::Open));
    assert_eq!(
        scorer.end_class("10", ",", id("000")),
        Some(EndClass::Continues)
    );
    assert_eq!(scorer.end_class("10", ",", id("00")), Some(EndClass::Open));
    assert_eq!(
        scorer.end_class("10", ",", id(" people")),
        Some(EndClass::Ends)
    );
    assert_eq!(scorer.end_class("hat", "", id(",")), Some(EndClass::Ends));
    assert_eq!(
        scorer.end_class("10", "", id(" people")),
        Some(EndClass::Ends)
    );
    // The sampler's rule is the same.
    assert_eq!(
        continuation_status(b" 10,000 people", false),
        ContinuationStatus::Complete("10,000".into())
    );
    assert_eq!(
        continuation_status(b" 10,00", false),
        ContinuationStatus::Pending
    );
}

#[test]
fn token_level_tvd_and_hits_match_a_dense_computation() {
    use clozelab::analysis::metrics::EceConvention;
    use clozelab::analysis::token_level::{first_token, summarise};
    use clozelab::data::provo::parse_jsonl;
    use clozelab::runtime::distributions::token_level_contexts;
    let (model, tok) = load(&cpu_device());
    let text =
        std::fs::read_to_string(common::repo_root().join("tests/fixtures/analysis/norms.jsonl"))
            .unwrap();
    let mut norms: Vec<clozelab::data::provo::ProvoContext> =
        parse_jsonl("norms.jsonl", &text).unwrap();
    // Two passages, read in one pass each, and a context that is no prefix of its passage's
    // longest: its own pass.
    norms[5].context = "A lighthouse of another story".into();
    let norms = &norms[..];
    let got = pollster::block_on(token_level_contexts(&model, &tok, norms, |_| true)).unwrap();
    assert_eq!(got.len(), norms.len());
    for (c, g) in norms.iter().zip(&got) {
        assert_eq!((g.text_id, g.word_num), (c.text_id, c.word_num));
        let lp = pollster::block_on(next_token_logprobs(
            &model,
            &tok.encode_context(&c.context).unwrap(),
        ))
        .unwrap();
        // Humans' first tokens, dense over the vocabulary.
        let mut q = vec![0.0f64; lp.len()];
        let total: u32 = c.human.values().sum();
        for (w, n) in &c.human {
            let t = tok.encode(&format!(" {w}")).unwrap()[0];
            q[t as usize] += f64::from(*n) / f64::from(total);
        }
        let dense: f64 = 0.5
            * lp.iter()
                .zip(&q)
                .map(|(l, q)| (f64::from(*l).exp() - q).abs())
                .sum::<f64>();
        // f32 probabilities over 50257 tokens sum to 1 only to ~1e-5.
        assert!((g.tvd - dense).abs() < 2e-5, "{} vs {dense}", g.tvd);
        let top = lp
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap()
            .0 as u32;
        assert_eq!(g.model_top, top);
        let original = first_token(&tok, &clozelab::text::words::normalize(&c.original)).unwrap();
        assert_eq!(g.hit_original, original == Some(top));
    }
    let row = summarise(&got, EceConvention::LastBin).unwrap();
    assert_eq!(row.contexts, norms.len());
    assert!((row.tvd - got.iter().map(|g| g.tvd).sum::<f64>() / norms.len() as f64).abs() < 1e-12);
    // The figure: the token level's density beside the word level's, each from its own TVDs.
    let word_level: Vec<clozelab::analysis::table1::PerContext> = Vec::new();
    let report = clozelab::analysis::token_level::TokenLevelReport::new(
        "test model",
        &got,
        &word_level,
        EceConvention::LastBin,
    )
    .unwrap();
    let figure = report.figure.unwrap();
    assert_eq!(figure.id, "token-level-density");
    assert!(
        figure
            .csv
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("\"test model, token level\",0.00,")
    );
    assert_eq!(
        figure.csv.lines().count(),
        1 + 101,
        "one curve on 101 points"
    );
    // Stopping early keeps what was done.
    let two = pollster::block_on(token_level_contexts(&model, &tok, norms, |i| i < 2)).unwrap();
    assert_eq!(two.len(), 2);
    let into_second = pollster::block_on(token_level_contexts(&model, &tok, norms, |i| i < 15));
    assert_eq!(into_second.unwrap(), got[..15]);
}

/// A model whose embedding is padded past its tokenizer's vocabulary (Pythia: 50304 rows for
/// 50277 tokens) samples words: an id the tokenizer does not have is drawn as a token without
/// bytes, as Hugging Face decodes it, not an error that ends the run. A random model spreads
/// its mass nearly evenly, so its 47 padded ids are drawn in most runs of this size.
#[test]
fn a_vocabulary_padded_past_the_tokenizers_samples_words() {
    let (_, tokenizer) = load(&cpu_device());
    let config = clozelab::model::TransformerConfig::new(1, 2, 16, 50304, 64, 64);
    let model = config.init(&cpu_device().device).unwrap();
    assert!(model.vocab_size > tokenizer.vocab_size());
    let samples = tree(&model, &tokenizer, CONTEXT, &self::config(3000, 7, 1.0));
    assert_eq!(samples.n, 3000);
    let naive = pollster::block_on(sample_words_naive(
        &model,
        &tokenizer,
        CONTEXT,
        &self::config(300, 7, 1.0),
    ))
    .unwrap();
    assert_eq!(naive.n, 300);
}
