//! GPT-2 in burn against Hugging Face `transformers` (tests/fixtures/golden_tiny.json, written
//! by scripts/reference_golden.py from the deterministic test model), on the CPU backend and
//! on wgpu; and wgpu against the CPU on GPT-2-small-shaped random weights.

use crate::common;

use burn::tensor::Tensor;
use burn::tensor::activation::log_softmax;
use clozelab::model::{Transformer, TransformerConfig, load_transformer};
use clozelab::runtime::backend::{ComputeDevice, cpu_device};
use clozelab::runtime::distributions::read_f32;
use clozelab::runtime::modeldir::read_model_dir;
use common::LOGPROB_TOLERANCE;
use serde::Deserialize;

#[derive(Deserialize)]
pub(crate) struct Fixture {
    model: FixtureModel,
    probe_ids: Vec<u32>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct FixtureModel {
    #[serde(default = "gpt2")]
    family: String,
    seed: u64,
    layers: usize,
    dim: usize,
    heads: usize,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    kind: String,
    text: String,
    ids: Vec<u32>,
    #[serde(default)]
    positions: Vec<Position>,
    prefix_last: Option<Position>,
    #[serde(default)]
    continuations: Vec<Continuation>,
}

#[derive(Deserialize)]
struct Continuation {
    ids: Vec<u32>,
    positions: Vec<Position>,
}

#[derive(Deserialize)]
struct Position {
    top: Vec<(u32, f64)>,
    probe: Vec<f64>,
}

fn gpt2() -> String {
    "gpt2".into()
}

/// A golden fixture of tests/fixtures/.
pub(crate) fn fixture_named(name: &str) -> Fixture {
    let text =
        std::fs::read_to_string(common::repo_root().join("tests/fixtures").join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn fixture() -> Fixture {
    fixture_named("golden_tiny.json")
}

impl Fixture {
    /// The family, seed, blocks, width and heads of the model it was made from.
    pub(crate) fn model(&self) -> (&str, u64, usize, usize, usize) {
        let m = &self.model;
        (&m.family, m.seed, m.layers, m.dim, m.heads)
    }
}

/// Loads the test model onto `device`, checking the fixture was made from the same one.
fn load_test_model(
    compute: &ComputeDevice,
) -> (Transformer, clozelab::text::tokenizer::BpeTokenizer) {
    let f = fixture();
    assert_eq!(
        (f.model.seed, f.model.layers, f.model.dim, f.model.heads),
        (0, 2, 64, 4)
    );
    let files = read_model_dir(common::test_model_dir()).unwrap();
    let (_, model) = load_transformer(&files.config_json, &files.weights, &compute.device).unwrap();
    (model, files.tokenizer)
}

/// Compares one row of log-probs (length vocab) with a golden position; returns the max error.
fn compare(label: &str, row: &[f32], golden: &Position, probe_ids: &[u32]) -> f32 {
    let mut worst = 0f32;
    let pairs = golden
        .top
        .iter()
        .copied()
        .chain(probe_ids.iter().copied().zip(golden.probe.iter().copied()));
    for (id, expected) in pairs {
        let err = (row[id as usize] - expected as f32).abs();
        worst = worst.max(err);
        assert!(
            err <= LOGPROB_TOLERANCE,
            "{label}: token {id}: got {}, Hugging Face {expected}, |diff| {err} > {LOGPROB_TOLERANCE}",
            row[id as usize]
        );
    }
    worst
}

fn rows(flat: &[f32], vocab: usize) -> Vec<&[f32]> {
    flat.chunks(vocab).collect()
}

async fn logprobs_3d(logits: Tensor<3>) -> Vec<f32> {
    read_f32(log_softmax(logits, 2)).await.unwrap()
}

fn check_against_golden(compute: &ComputeDevice) {
    let (model, tokenizer) = load_test_model(compute);
    check_model_against(&fixture(), &model, &tokenizer, compute.kind.name());
}

/// Every case of `f` (full passes, one token at a time through the cache, continuations of a
/// shared prefix) on `model`, whose body runs as `backend` says.
pub(crate) fn check_model_against(
    f: &Fixture,
    model: &Transformer,
    tokenizer: &clozelab::text::tokenizer::BpeTokenizer,
    backend: &str,
) {
    let vocab = model.vocab_size;
    let mut worst = 0f32;
    for case in &f.cases {
        // The tokenizer must reproduce Hugging Face's ids for the same text.
        assert_eq!(
            tokenizer.encode(&case.text).unwrap(),
            case.ids,
            "tokenizer ids for {:?}",
            case.text
        );
        match case.kind.as_str() {
            "full" => {
                let tokens = model.token_tensor(std::slice::from_ref(&case.ids)).unwrap();
                let lp = pollster::block_on(logprobs_3d(model.forward(tokens).unwrap()));
                for (t, row) in rows(&lp, vocab).iter().enumerate() {
                    worst = worst.max(compare(
                        &format!("{backend} full {} @{t}", case.name),
                        row,
                        &case.positions[t],
                        &f.probe_ids,
                    ));
                }
            }
            "incremental" => {
                let mut cache = model.new_cache(None, 1, case.ids.len());
                for (t, &id) in case.ids.iter().enumerate() {
                    let hidden = model
                        .forward_cached(model.token_tensor(&[vec![id]]).unwrap(), &mut cache)
                        .unwrap();
                    let lp = pollster::block_on(read_f32(log_softmax(
                        model.last_logits(hidden).unwrap(),
                        1,
                    )))
                    .unwrap();
                    worst = worst.max(compare(
                        &format!("{backend} incremental {} @{t}", case.name),
                        &lp,
                        &case.positions[t],
                        &f.probe_ids,
                    ));
                }
            }
            "shared_prefix" => {
                let mut prefix_cache = model.new_cache(None, 1, case.ids.len());
                let hidden = model
                    .forward_cached(
                        model.token_tensor(std::slice::from_ref(&case.ids)).unwrap(),
                        &mut prefix_cache,
                    )
                    .unwrap();
                let lp = pollster::block_on(read_f32(log_softmax(
                    model.last_logits(hidden).unwrap(),
                    1,
                )))
                .unwrap();
                worst = worst.max(compare(
                    &format!("{backend} prefix"),
                    &lp,
                    case.prefix_last.as_ref().unwrap(),
                    &f.probe_ids,
                ));
                let prefix = prefix_cache.into_shared_prefix().unwrap();
                // Different-length continuations in one batch, right-padded with token 0.
                let longest = case
                    .continuations
                    .iter()
                    .map(|c| c.ids.len())
                    .max()
                    .unwrap();
                let padded: Vec<Vec<u32>> = case
                    .continuations
                    .iter()
                    .map(|c| {
                        c.ids
                            .iter()
                            .copied()
                            .chain(std::iter::repeat(0))
                            .take(longest)
                            .collect()
                    })
                    .collect();
                let mut cache = model.new_cache(Some(prefix), padded.len(), longest);
                let hidden = model
                    .forward_cached(model.token_tensor(&padded).unwrap(), &mut cache)
                    .unwrap();
                let lp = pollster::block_on(logprobs_3d(model.logits(hidden).unwrap()));
                for (b, cont) in case.continuations.iter().enumerate() {
                    for t in 0..cont.ids.len() {
                        let start = (b * longest + t) * vocab;
                        worst = worst.max(compare(
                            &format!("{backend} shared prefix row {b} @{t}"),
                            &lp[start..start + vocab],
                            &cont.positions[t],
                            &f.probe_ids,
                        ));
                    }
                }
            }
            other => panic!("unknown case kind {other}"),
        }
    }
    eprintln!("{backend}: worst |log-prob − Hugging Face| = {worst:e}");
}

/// GPT-2's tanh GELU, whichever form each backend computes it in, against the formula in f64
/// from deep in the negative tail (where `1 + tanh` cancels) to large inputs.
fn check_gelu(compute: &ComputeDevice) {
    let xs: Vec<f32> = (-400..=400).map(|i| i as f32 * 0.03).collect();
    let y = Tensor::<1>::from_floats(xs.as_slice(), &compute.device);
    let backend = clozelab::model::ops::backend::Backend::of(&compute.device);
    let y = backend
        .run(clozelab::model::ops::gelu::GeluNew(y))
        .into_data()
        .try_to_vec::<f32>()
        .unwrap();
    for (&x, &got) in xs.iter().zip(&y) {
        let x = f64::from(x);
        let u = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3));
        let want = 0.5 * x * (1.0 + u.tanh());
        let err = (f64::from(got) - want).abs();
        assert!(
            err <= 1e-6 + 1e-6 * want.abs(),
            "{}: gelu({x}) = {got}, want {want}",
            compute.adapter
        );
    }
}

#[test]
fn gelu_matches_the_formula_on_every_backend() {
    check_gelu(&cpu_device());
    if let Some(device) = common::wgpu_or_skip() {
        check_gelu(&device);
    }
}

#[test]
fn cpu_matches_hugging_face() {
    check_against_golden(&cpu_device());
}

/// Natively the CPU backend runs gemm (above 192³ multiply-adds), its element-wise kernels and
/// the split products of one-row steps (`threaded_product`: the incremental cases) on rayon's
/// threads. The test command gives each test one rayon thread
/// (two test threads already share the two cores), so this test hands the model a pool of two.
#[test]
fn cpu_on_two_threads_matches_hugging_face() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| check_against_golden(&cpu_device()));
}

#[test]
fn wgpu_matches_hugging_face() {
    if let Some(device) = common::wgpu_or_skip() {
        check_against_golden(&device);
    }
}

/// Tolerance between two f32 backends on a 12-layer, 768-wide model: accumulation order differs.
const CROSS_BACKEND_TOLERANCE: f32 = 2e-3;

#[test]
fn wgpu_matches_cpu_on_gpt2_small_shape() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    let config = TransformerConfig::gpt2_small();
    let weights = clozelab::model::testmodel::to_safetensors(
        &clozelab::model::testmodel::generate_weights(&config, 7),
    )
    .unwrap();
    let cpu = cpu_device();
    let ids: Vec<u32> = vec![464, 2068, 7586, 21831, 18045, 625, 262, 16931];
    let run = |compute: &ComputeDevice| {
        let model =
            clozelab::model::loader::load_with_config(&config, &weights, &compute.device).unwrap();
        let tokens = model.token_tensor(std::slice::from_ref(&ids)).unwrap();
        pollster::block_on(logprobs_3d(model.forward(tokens).unwrap()))
    };
    let on_cpu = run(&cpu);
    let on_gpu = run(&gpu);
    assert_eq!(on_cpu.len(), on_gpu.len());
    let worst = on_cpu
        .iter()
        .zip(&on_gpu)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    eprintln!("GPT-2-small shape: worst |wgpu − cpu| log-prob = {worst:e}");
    assert!(
        worst <= CROSS_BACKEND_TOLERANCE,
        "wgpu differs from cpu by {worst}"
    );
    assert!(on_gpu.iter().all(|v| v.is_finite()));
}

/// Following branches with `select_rows` gives the same numbers as running each branch alone.
#[test]
fn selected_cache_rows_continue_like_separate_runs() {
    let cpu = cpu_device();
    let (model, _) = load_test_model(&cpu);
    let prefix_ids = vec![464u32, 2068, 7586];
    let mut prefix_cache = model.new_cache(None, 1, prefix_ids.len());
    model
        .forward_cached(
            model
                .token_tensor(std::slice::from_ref(&prefix_ids))
                .unwrap(),
            &mut prefix_cache,
        )
        .unwrap();
    let prefix = prefix_cache.into_shared_prefix().unwrap();
    // Two rows, then branch: row 1 twice and row 0 once.
    let mut cache = model.new_cache(Some(prefix), 2, 3);
    model
        .forward_cached(
            model.token_tensor(&[vec![21831], vec![3290]]).unwrap(),
            &mut cache,
        )
        .unwrap();
    let mut branched = cache.select_rows(&[1, 1, 0]).unwrap();
    let hidden = model
        .forward_cached(
            model
                .token_tensor(&[vec![18045], vec![625], vec![262]])
                .unwrap(),
            &mut branched,
        )
        .unwrap();
    let got =
        pollster::block_on(read_f32(log_softmax(model.last_logits(hidden).unwrap(), 1))).unwrap();
    let vocab = model.vocab_size;
    for (row, path) in [
        (0, vec![464u32, 2068, 7586, 3290, 18045]),
        (1, vec![464, 2068, 7586, 3290, 625]),
        (2, vec![464, 2068, 7586, 21831, 262]),
    ] {
        let full = pollster::block_on(logprobs_3d(
            model
                .forward(model.token_tensor(std::slice::from_ref(&path)).unwrap())
                .unwrap(),
        ));
        let last = &full[(path.len() - 1) * vocab..path.len() * vocab];
        let worst = last
            .iter()
            .zip(&got[row * vocab..(row + 1) * vocab])
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-4, "row {row}: {worst}");
    }
    assert!(cache.select_rows(&[2]).is_err());
    assert!(cache.select_rows(&[]).is_err());
}
