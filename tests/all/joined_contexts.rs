//! Several contexts in one forward pass: a joined prefix whose rows each see only their own
//! context gives the numbers of each context run alone, and the word sampler run over contexts
//! together gives each context the samples it gets alone (same seeds), on CPU and wgpu.
//!
//! "The samples it gets alone" up to rounding: a larger batch sums in another order, and on the
//! test model's near-uniform next-token distributions a difference in the last bits of a
//! cumulative sum moves a draw to the neighbouring token now and then (a few in a hundred
//! draws). A row that attended to another context, or drew from another context's generator,
//! would share almost none of its samples.

use crate::common;

use burn::tensor::Tensor;
use burn::tensor::activation::log_softmax;
use clozelab::estimators::decoding::DecodingStrategy;
use clozelab::estimators::progress::{Progress, Unmonitored};
use clozelab::estimators::sampler::{
    SamplerConfig, SamplerError, WordSamples, sample_words, sample_words_for_contexts,
    sample_words_together,
};
use clozelab::estimators::tree::run_prefixes;
use clozelab::model::{ModelError, Transformer, load_transformer};
use clozelab::runtime::backend::{ComputeDevice, cpu_device};
use clozelab::runtime::distributions::read_f32;
use clozelab::runtime::modeldir::read_model_dir;
use clozelab::text::tokenizer::BpeTokenizer;

fn load(compute: &ComputeDevice) -> (Transformer, BpeTokenizer) {
    let files = read_model_dir(common::test_model_dir()).unwrap();
    let (_, model) = load_transformer(&files.config_json, &files.weights, &compute.device).unwrap();
    (model, files.tokenizer)
}

/// Log-probs of the next token after each row's last position, `[rows · vocab]`.
fn last_logprobs(model: &Transformer, hidden: Tensor<3>) -> Vec<f32> {
    pollster::block_on(read_f32(log_softmax(model.last_logits(hidden).unwrap(), 1))).unwrap()
}

/// Log-probs after `path` from a full forward pass of it alone.
fn alone(model: &Transformer, path: &[u32]) -> Vec<f32> {
    let tokens = model.token_tensor(&[path.to_vec()]).unwrap();
    let mut cache = model.new_cache(None, 1, path.len());
    last_logprobs(model, model.forward_cached(tokens, &mut cache).unwrap())
}

/// Contexts of different lengths joined into one prefix: its roots, a first level whose rows
/// continue segments out of order, and a second level after `select_rows`, each row against
/// the same tokens run alone.
fn joined_prefix_rows_continue_like_separate_runs(compute: &ComputeDevice) {
    let (model, _) = load(compute);
    let vocab = model.vocab_size;
    let contexts = vec![
        vec![464u32, 2068, 7586],
        vec![7454, 2402, 257, 640, 612],
        vec![50256],
    ];
    let (prefix, roots) = run_prefixes(&model, &contexts, 2).unwrap();
    assert_eq!(prefix.segments(), &[3, 5, 1]);
    let got = last_logprobs(&model, roots);
    for (i, context) in contexts.iter().enumerate() {
        let worst =
            common::worst_difference(&got[i * vocab..(i + 1) * vocab], &alone(&model, context));
        assert!(worst < 1e-4, "root {i}: {worst}");
    }

    let segments = vec![2, 0, 1, 0];
    let tokens = [21831u32, 3290, 18045, 625];
    let mut cache = model
        .new_cache_on_segments(prefix.clone(), segments.clone(), 2)
        .unwrap();
    let rows: Vec<Vec<u32>> = tokens.iter().map(|&t| vec![t]).collect();
    let hidden = model
        .forward_cached(model.token_tensor(&rows).unwrap(), &mut cache)
        .unwrap();
    let got = last_logprobs(&model, hidden);
    let mut paths = Vec::new();
    for (row, (&segment, &token)) in segments.iter().zip(&tokens).enumerate() {
        let mut path = contexts[segment].clone();
        path.push(token);
        let worst =
            common::worst_difference(&got[row * vocab..(row + 1) * vocab], &alone(&model, &path));
        assert!(worst < 1e-4, "first level, row {row}: {worst}");
        paths.push(path);
    }

    let picks = [3usize, 0, 3];
    let mut branched = cache.select_rows(&picks).unwrap();
    let next = [262u32, 1110, 13];
    let rows: Vec<Vec<u32>> = next.iter().map(|&t| vec![t]).collect();
    let hidden = model
        .forward_cached(model.token_tensor(&rows).unwrap(), &mut branched)
        .unwrap();
    let got = last_logprobs(&model, hidden);
    for (row, (&pick, &token)) in picks.iter().zip(&next).enumerate() {
        let mut path = paths[pick].clone();
        path.push(token);
        let worst =
            common::worst_difference(&got[row * vocab..(row + 1) * vocab], &alone(&model, &path));
        assert!(worst < 1e-4, "second level, row {row}: {worst}");
    }

    assert_eq!(
        model
            .new_cache_on_segments(prefix, vec![0, 3], 2)
            .err()
            .map(|e| e.to_string()),
        Some(
            ModelError::NoSuchSegment {
                segment: 3,
                segments: 3
            }
            .to_string()
        )
    );
    assert_eq!(
        run_prefixes(&model, &[vec![464], vec![]], 2).err(),
        Some(ModelError::EmptyInput)
    );
}

#[test]
fn joined_prefix_rows_continue_like_separate_runs_cpu() {
    joined_prefix_rows_continue_like_separate_runs(&cpu_device());
}

#[test]
fn joined_prefix_rows_continue_like_separate_runs_wgpu() {
    if let Some(gpu) = common::wgpu_or_skip() {
        joined_prefix_rows_continue_like_separate_runs(&gpu);
    }
}

fn fresh_progress() -> Progress {
    Progress {
        contexts_done: 0,
        contexts_total: 1,
        samples_done: 0,
        elapsed_s: 0.0,
    }
}

const CONTEXTS: [&str; 4] = ["The cat sat on the", "", "Once upon a", "A"];

/// Each context's samples drawn together with the others are those it gets alone.
fn together_equals_alone(compute: &ComputeDevice, config: &SamplerConfig) {
    let (model, tok) = load(compute);
    let seeded: Vec<(&str, u64)> = CONTEXTS
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, 40 + i as u64))
        .collect();
    let mut progress = fresh_progress();
    let together = pollster::block_on(sample_words_together(
        &model,
        &tok,
        &seeded,
        config,
        &mut Unmonitored,
        &mut progress,
    ))
    .unwrap();
    assert_eq!(progress.samples_done, CONTEXTS.len() * config.samples());
    let mut each_alone = Vec::new();
    for &(context, seed) in &seeded {
        let config = SamplerConfig::new(config.samples(), seed)
            .unwrap()
            .with_strategy(config.strategy().clone());
        let single = pollster::block_on(sample_words(
            &model,
            &tok,
            context,
            &config,
            &mut Unmonitored,
            &mut fresh_progress(),
        ))
        .unwrap();
        each_alone.push(single);
    }
    assert_mostly_equal(&together, &each_alone);
}

/// Samples shared by two runs of a context: Σ_w min(count in a, count in b).
fn shared_samples(a: &WordSamples, b: &WordSamples) -> usize {
    a.words
        .iter()
        .map(|(w, &k)| k.min(b.words.get(w).copied().unwrap_or(0)))
        .sum::<usize>()
        + a.failed.min(b.failed)
}

/// Each context shares at least 70% of its samples between the two runs, all together 90%
/// (see the module docs for why not all).
fn assert_mostly_equal(a: &[WordSamples], b: &[WordSamples]) {
    assert_eq!(a.len(), b.len());
    let (mut shared, mut total) = (0, 0);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(
            (x.n, x.words.values().sum::<usize>() + x.failed),
            (y.n, y.n)
        );
        let s = shared_samples(x, y);
        assert!(
            10 * s >= 7 * x.n,
            "context {i}: {s} of {} samples shared",
            x.n
        );
        shared += s;
        total += x.n;
    }
    assert!(
        10 * shared >= 9 * total,
        "{shared} of {total} samples shared"
    );
}

fn sampler_config(samples: usize, strategy: DecodingStrategy) -> SamplerConfig {
    SamplerConfig::new(samples, 0)
        .unwrap()
        .with_strategy(strategy)
}

#[test]
fn contexts_sampled_together_get_their_samples_alone_cpu() {
    let cpu = cpu_device();
    // On the device's inverse CDF (temperature only), narrow and wide trees.
    for (samples, temperature) in [(40, 1.0), (300, 1.0), (100, 0.3)] {
        let strategy = DecodingStrategy::new(temperature, None, None, None).unwrap();
        together_equals_alone(&cpu, &sampler_config(samples, strategy));
    }
    // Truncation draws on the host.
    let top_k = DecodingStrategy::new(1.0, Some(20), None, None).unwrap();
    together_equals_alone(&cpu, &sampler_config(60, top_k));
}

#[test]
fn contexts_sampled_together_get_their_samples_alone_wgpu() {
    if let Some(gpu) = common::wgpu_or_skip() {
        let strategy = DecodingStrategy::new(1.0, None, None, None).unwrap();
        together_equals_alone(&gpu, &sampler_config(100, strategy));
    }
}

/// Grouping changes how contexts share passes, not their results (beyond rounding).
#[test]
fn contexts_per_pass_leaves_every_result_as_it_was() {
    let (model, tok) = load(&cpu_device());
    let contexts: Vec<String> = [
        "The",
        "The cat",
        "The cat sat",
        "",
        "Once upon a time there",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    let run = |per_pass: usize| -> Vec<WordSamples> {
        let config = SamplerConfig::new(80, 9)
            .unwrap()
            .with_contexts_per_pass(per_pass)
            .unwrap();
        pollster::block_on(sample_words_for_contexts(
            &model,
            &tok,
            &contexts,
            &config,
            &mut Unmonitored,
        ))
        .unwrap()
    };
    let one_at_a_time = run(1);
    assert_mostly_equal(&run(2), &one_at_a_time);
    assert_mostly_equal(&run(8), &one_at_a_time);
    assert!(
        10 * shared_samples(&one_at_a_time[0], &one_at_a_time[1]) < 80,
        "contexts differ"
    );
    assert_eq!(
        SamplerConfig::new(1, 0).unwrap().with_contexts_per_pass(0),
        Err(SamplerError::NoContexts)
    );
}
