//! Decode steps recorded once and replayed give, step after step, the logits of the same steps
//! run one by one, and leave the cache as those do: on wgpu (lavapipe) where the step is
//! recorded, over rows at different positions of a joined prefix, for GPT-2 and for the rotary
//! families (their angles gathered at those positions); and on the CPU, where the steps run one
//! by one and say why.

use crate::common;

use clozelab::estimators::tree::run_prefixes;
use clozelab::model::replayed_steps::EagerReason;
use clozelab::model::{KvCache, ModelError, Precision, Transformer, load_transformer};
use clozelab::runtime::backend::{ComputeDevice, cpu_device};
use clozelab::runtime::distributions::read_f32;
use clozelab::runtime::modeldir::read_model_dir;

fn load(compute: &ComputeDevice, dir: &std::path::Path) -> Transformer {
    let files = read_model_dir(dir).unwrap();
    load_transformer(&files.config_json, &files.weights, &compute.device)
        .unwrap()
        .1
}

/// Two caches holding the same joined prefix, rows continuing its segments out of order (so at
/// different positions, each seeing its own segment only), with room for `steps` own tokens.
fn twin_caches(model: &Transformer, steps: usize) -> (KvCache, KvCache) {
    let contexts = vec![vec![464u32, 2068, 7586], vec![7454, 2402, 257, 640, 612]];
    let (prefix, _) = run_prefixes(model, &contexts, steps).unwrap();
    let cache = || {
        model
            .new_cache_on_segments(prefix.clone(), vec![1, 0, 1], steps)
            .unwrap()
    };
    (cache(), cache())
}

const STEPS: [[u32; 3]; 5] = [
    [21831, 3290, 18045],
    [625, 11, 50256],
    [262, 262, 9],
    [0, 1000, 30000],
    [13, 13, 13],
];

/// Steps run one by one and replayed, logits compared at every step; then one more step run one
/// by one from each returned cache, which holds every replayed step's keys only if each replay
/// wrote them where the next one reads.
fn replays_match_steps_one_by_one(
    compute: &ComputeDevice,
    dir: &std::path::Path,
) -> Option<EagerReason> {
    replays_match_steps_of(&load(compute, dir))
}

fn replays_match_steps_of(model: &Transformer) -> Option<EagerReason> {
    let (mut one_by_one, recorded) = twin_caches(model, STEPS.len() + 1);
    let mut replayed = pollster::block_on(model.replayed_steps(recorded)).unwrap();
    for (i, tokens) in STEPS.iter().enumerate() {
        let rows: Vec<Vec<u32>> = tokens.iter().map(|&t| vec![t]).collect();
        let hidden = model
            .forward_cached(model.token_tensor(&rows).unwrap(), &mut one_by_one)
            .unwrap();
        let expected = pollster::block_on(read_f32(model.last_logits(hidden).unwrap())).unwrap();
        let got = pollster::block_on(read_f32(replayed.step(tokens).unwrap())).unwrap();
        let worst = common::worst_difference(&got, &expected);
        assert!(worst < 1e-4, "step {i}: logits differ by {worst}");
    }
    assert_eq!(replayed.len(), STEPS.len());
    let reason = replayed.eager_reason();
    let mut after_replays = replayed.into_cache();
    let next = |cache: &mut KvCache| {
        let rows = vec![vec![5u32], vec![6], vec![7]];
        let hidden = model
            .forward_cached(model.token_tensor(&rows).unwrap(), cache)
            .unwrap();
        pollster::block_on(read_f32(model.last_logits(hidden).unwrap())).unwrap()
    };
    let worst = common::worst_difference(&next(&mut after_replays), &next(&mut one_by_one));
    assert!(worst < 1e-4, "the step after the replays: {worst}");
    reason
}

#[test]
fn replayed_steps_on_wgpu_are_recorded_and_match_steps_run_one_by_one() {
    if let Some(gpu) = common::wgpu_or_skip() {
        assert_eq!(
            replays_match_steps_one_by_one(&gpu, common::test_model_dir()),
            None
        );
    }
}

/// The blocks' projections with f16 weights (their own kernel, cubek's matmul of two types), where
/// the adapter offers f16.
#[test]
fn replayed_steps_with_f16_weights_match_steps_run_one_by_one() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    if !Precision::f16_offered(&gpu.device) {
        eprintln!("SKIPPED: the adapter offers no f16");
        return;
    }
    let model = load(&gpu, common::test_model_dir())
        .with_precision(Precision::F16)
        .unwrap();
    assert_eq!(replays_match_steps_of(&model), None);
}

#[test]
fn replayed_steps_on_the_cpu_run_one_by_one_and_say_so() {
    assert_eq!(
        replays_match_steps_one_by_one(&cpu_device(), common::test_model_dir()),
        Some(EagerReason::CpuBackend)
    );
}

#[test]
fn replayed_steps_of_rotary_families_on_wgpu_match_steps_run_one_by_one() {
    if let Some(gpu) = common::wgpu_or_skip() {
        for dir in [
            common::test_gpt_neox_model_dir(),
            common::test_llama_model_dir(),
        ] {
            assert_eq!(replays_match_steps_one_by_one(&gpu, dir), None);
        }
    }
}

/// A replayed step refuses what a step run one by one refuses, and a refusal leaves the steps
/// able to go on.
#[test]
fn replayed_steps_refuse_bad_rows_and_a_full_cache() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    let model = load(&gpu, common::test_model_dir());
    let mut cache = model.new_cache(None, 2, 3);
    model
        .forward_cached(
            model.token_tensor(&[vec![464], vec![7454]]).unwrap(),
            &mut cache,
        )
        .unwrap();
    let mut steps = pollster::block_on(model.replayed_steps(cache)).unwrap();
    assert_eq!(steps.eager_reason(), None);
    assert!(matches!(
        steps.step(&[1]),
        Err(ModelError::BatchMismatch {
            got: 1,
            expected: 2
        })
    ));
    let vocab = model.vocab_size as u32;
    assert!(matches!(
        steps.step(&[1, vocab]),
        Err(ModelError::TokenOutOfRange { id, .. }) if id == vocab
    ));
    assert_eq!(steps.len(), 1);
    steps.step(&[1, 2]).unwrap();
    steps.step(&[3, 4]).unwrap();
    assert!(matches!(
        steps.step(&[5, 6]),
        Err(ModelError::CacheFull {
            needed: 4,
            capacity: 3
        })
    ));
    assert_eq!(steps.into_cache().positions(), vec![3, 3]);
}
