//! Bad input never panics: property tests over every file and parameter a
//! user or a study URL hands the app. Each input kind gets at least 500 generated cases: valid
//! files made by the app's own exporters, then cut, spliced, byte-flipped and salted with
//! hostile text, and arbitrary strings. Each must give a valid result or an error that names
//! the input — never a panic, a hang or an allocation out of proportion to the input.

use clozelab::data::provo::{ContextKey, ProvoContext};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::common;
use clozelab::data::{
    ClozeNorms, Delimiter, ResponseRecord, export_long_csv, export_long_json, import_long_csv,
    import_long_json, import_provo_norms,
};
use clozelab::game::design::study::StudyConfig;
use clozelab::game::readback::imports::import_file;
use clozelab::game::readback::results::StudyResults;
use clozelab::game::run::export::{ExportKind, Manifest, ModelInfo, import_bundle};
use clozelab::game::tokens::records::import_token_records;

/// Counts the largest single allocation made by this thread while `TRACK` is on.
struct Tracking;

thread_local! {
    static TRACK: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // `try_with`: the thread-locals may be gone while a thread is torn down.
        let _ = TRACK.try_with(|t| {
            if t.get() {
                let _ = LARGEST.try_with(|l| l.set(l.get().max(layout.size())));
            }
        });
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = TRACK.try_with(|t| {
            if t.get() {
                let _ = LARGEST.try_with(|l| l.set(l.get().max(new_size)));
            }
        });
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// Generated cases per input kind.
const CASES: u32 = 500;

/// Runs `parse` on the input, checking it neither panics (the runner catches that), nor takes
/// long, nor makes one allocation beyond a generous multiple of the input's size.
fn bounded<T>(input_len: usize, parse: impl FnOnce() -> T) -> T {
    LARGEST.with(|l| l.set(0));
    TRACK.with(|t| t.set(true));
    let started = std::time::Instant::now();
    let out = parse();
    TRACK.with(|t| t.set(false));
    let largest = LARGEST.with(Cell::get);
    // A hang detector, not a speed target: every parser here is linear in its input.
    assert!(
        started.elapsed().as_secs() < 10,
        "took {:?}",
        started.elapsed()
    );
    assert!(
        largest <= 64 * input_len + (1 << 20),
        "one allocation of {largest} bytes for a {input_len}-byte input"
    );
    out
}

/// Hostile and odd text spliced into valid files.
const SALT: &[&str] = &[
    "\"",
    ",",
    "\t",
    "\n",
    "\r\n",
    "\u{feff}",
    "\0",
    "=HYPERLINK(\"http://x\")",
    "<script>alert(1)</script>",
    "\u{202e}evil",
    "e\u{301}",
    "🦀",
    "{",
    "}",
    "[",
    "]",
    "\\",
    "\"responses\":",
    "99999999999999999999",
    "-1",
    "NaN",
    "1e309",
    "\"true_token\"",
    "Response_Count",
];

/// A valid input mutated: cut, spliced with salt or random bytes, a chunk repeated, bytes
/// flipped — or left alone (so valid files are checked to stay valid).
fn mutated(seed: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = seed.len().max(1);
    prop::collection::vec(
        (
            0..5u8,
            0..len,
            0..len,
            prop::sample::select(SALT),
            any::<u8>(),
        ),
        0..4,
    )
    .prop_map(move |edits| {
        let mut bytes = seed.clone();
        for (kind, a, b, salt, byte) in edits {
            let n = bytes.len();
            let (a, b) = (a.min(n), b.min(n));
            let (lo, hi) = (a.min(b), a.max(b));
            match kind {
                0 => bytes.truncate(lo),
                1 => {
                    bytes.splice(lo..lo, salt.bytes());
                }
                2 => {
                    if lo < n {
                        bytes[lo] = byte;
                    }
                }
                3 => {
                    let chunk: Vec<u8> = bytes[lo..hi].to_vec();
                    bytes.splice(hi..hi, chunk);
                }
                _ => {
                    bytes.drain(lo..hi);
                }
            }
        }
        bytes
    })
}

/// Mutations of each seed, and arbitrary text, for `CASES` cases.
fn inputs(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let mutations: Vec<_> = seeds.into_iter().map(mutated).collect();
    prop_oneof![
        4 => prop::strategy::Union::new(mutations),
        1 => any::<String>().prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..200),
    ]
}

/// A runner with a fixed seed: the test command sees the same cases on every machine.
fn runner() -> TestRunner {
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

/// Runs `check` (which says whether the input was accepted) on `CASES` inputs; both outcomes
/// must be common, or the generator is not testing what it should.
fn run(seeds: Vec<Vec<u8>>, check: impl Fn(&[u8]) -> Result<bool, TestCaseError>) {
    let mut runner = runner();
    let (cases, accepted) = (Cell::new(0u32), Cell::new(0u32));
    runner
        .run(&inputs(seeds), |bytes| {
            cases.set(cases.get() + 1);
            accepted.set(accepted.get() + u32::from(check(&bytes)?));
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let (cases, accepted) = (cases.get(), accepted.get());
    eprintln!("{cases} cases, {accepted} accepted");
    assert!(cases >= CASES, "{cases} cases");
    assert!(
        accepted >= cases / 20 && cases - accepted >= cases / 20,
        "{accepted} of {cases} accepted: the inputs are too tame or too wild"
    );
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn record(participant: &str, position: u32, response: &str) -> ResponseRecord {
    ResponseRecord {
        participant: participant.into(),
        passage: "1".into(),
        position,
        response: response.into(),
        response_time_ms: Some(1234.5),
        timestamp: "2026-11-22T10:00:00Z".into(),
        normalized: clozelab::text::words::normalize(response),
        first_keystroke_ms: Some(200.0),
        practice: position == 2,
        run: String::new(),
    }
}

fn records() -> Vec<ResponseRecord> {
    vec![
        record("p1", 2, "The"),
        record("p1", 3, "say \"hi\", then"),
        record("p2", 3, "=1+1"),
        record("p2", 4, "café"),
    ]
}

/// Whether the input was accepted; an error must name the file it is about.
fn accepted<T, E: std::fmt::Display>(
    file: &str,
    result: Result<T, E>,
) -> Result<bool, TestCaseError> {
    match result {
        Ok(_) => Ok(true),
        Err(e) => names(file, e).map(|()| false),
    }
}

/// An error must name the file it is about.
fn names(file: &str, error: impl std::fmt::Display) -> Result<(), TestCaseError> {
    let message = error.to_string();
    prop_assert!(message.contains(file), "{message:?} does not name {file}");
    Ok(())
}

#[test]
fn long_format_csv_tsv_and_json() {
    let seeds = vec![
        export_long_csv(&records(), Delimiter::Comma).into_bytes(),
        export_long_csv(&records(), Delimiter::Tab).into_bytes(),
    ];
    run(seeds, |bytes| {
        let t = text(bytes);
        let result = bounded(bytes.len(), || import_long_csv("answers.csv", &t));
        if let Ok(rows) = &result {
            prop_assert!(rows.len() <= t.lines().count());
        }
        accepted("answers.csv", result)
    });
    run(vec![export_long_json(&records()).into_bytes()], |bytes| {
        let t = text(bytes);
        accepted(
            "answers.json",
            bounded(bytes.len(), || import_long_json("answers.json", &t)),
        )
    });
}

#[test]
fn export_bundles() {
    let study = StudyConfig::default_play();
    let plan = study.plan("p1", &BTreeMap::new()).unwrap();
    let manifest = Manifest::new(&ModelInfo::default(), &study, &plan, 7, "now");
    let bundle = ExportKind::Bundle
        .render(&records(), &[], Some(&manifest))
        .unwrap();
    run(vec![bundle.into_bytes()], |bytes| {
        let t = text(bytes);
        accepted(
            "bundle.json",
            bounded(bytes.len(), || import_bundle("bundle.json", &t)),
        )
    });
}

#[test]
fn provo_norms_csv_and_tsv() {
    let mut norms = ClozeNorms::default();
    norms
        .passages
        .insert(1, "There are now rumblings that Apple".into());
    for (word_num, word) in [(2, "are"), (3, "now"), (4, "rumblings")] {
        norms.contexts.insert(
            ContextKey::new(1, word_num),
            ProvoContext {
                text_id: 1,
                word_num,
                context: String::new(),
                original: word.into(),
                // A response with a delimiter and quotes in it, to quote on the way out.
                human: BTreeMap::from([(word.to_string(), 3), ("a, \"b\"".to_string(), 1)]),
                gpt2_logprob_human: None,
                gpt2_logprob_original: None,
            },
        );
    }
    let seeds = vec![
        common::osf_norms_text(&norms, Delimiter::Comma).into_bytes(),
        common::osf_norms_text(&norms, Delimiter::Tab).into_bytes(),
    ];
    run(seeds, |bytes| {
        let t = text(bytes);
        accepted(
            "norms.tsv",
            bounded(bytes.len(), || import_provo_norms("norms.tsv", &t)),
        )
    });
}

#[test]
fn study_configs_and_url_parameters() {
    let ids: Vec<String> = clozelab::game::design::passages::built_in_passages()
        .into_iter()
        .map(|p| p.id)
        .collect();
    let config = serde_json::json!({
        "title": "Cloze study",
        "passages": [ids[0], ids[1], ids[2]],
        "order": "shuffled",
        "passages_per_participant": 2,
        "practice_passage": ids[3],
        "participant_param": "PROLIFIC_PID",
        "submit_url": "/submit",
        "redirect_url": "https://app.prolific.com/submissions/complete?cc=ABC",
        "completion_code": "ABC",
    })
    .to_string();
    let tokens = serde_json::json!({
        "passages": [ids[0]],
        "game": "two_token",
        "positions_per_passage": 3,
        "rounds_per_position": 2,
        "seed": 5,
        "model": "models/gpt2/",
    })
    .to_string();
    run(vec![config.into_bytes(), tokens.into_bytes()], |bytes| {
        // Through the import the page uses (which names the file) and the parser itself.
        let _ = StudyConfig::from_json(&text(bytes));
        accepted(
            "study.json",
            bounded(bytes.len(), || import_file("study.json", bytes)),
        )
    });
    // URL parameters: any names and values, a participant id or a clear refusal, and a plan.
    let study = StudyConfig::default_play();
    let mut runner = runner();
    let params = prop::collection::btree_map(
        prop_oneof![
            Just("PROLIFIC_PID".to_string()),
            Just("participant".to_string()),
            Just("STUDY_ID".to_string()),
            any::<String>(),
        ],
        any::<String>(),
        0..5,
    );
    runner
        .run(&params, |params| {
            let size: usize = params.iter().map(|(k, v)| k.len() + v.len()).sum();
            match bounded(size, || study.participant_id(&params, "fallback-id")) {
                Ok(id) => {
                    prop_assert!(!id.is_empty() && id.chars().count() <= 128);
                    prop_assert!(!id.chars().any(char::is_control));
                    let plan = study.plan(&id, &params);
                    prop_assert!(plan.is_ok(), "{plan:?}");
                }
                Err(e) => prop_assert!(e.to_string().contains("participant id")),
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn next_token_game_answer_files() {
    let top1 = serde_json::json!([{
        "participant": "p1", "passage": "storm", "position": 3, "context": "A storm",
        "true_token": 1625, "true_token_text": " came", "guess": " came", "guess_token": 1625,
        "correct": true, "gpt2_top1": 11, "g_true": 0.01, "g_guess": 0.01, "guess_rank": 40,
        "ms_to_answer": 900.0, "timestamp": "t", "practice": false
    }]);
    let two = serde_json::json!([{
        "participant": "p1", "passage": "storm", "position": 3, "round": 0, "context": "A storm",
        "true_token": 1625, "true_token_text": " came", "other_token": 11, "other_token_text": ",",
        "true_left": true, "button": 70, "p_true": 0.7, "reward": 12.5, "g_true": 0.01,
        "g_other": 0.2, "ms_to_answer": 900.0, "timestamp": "t", "practice": false
    }]);
    let seeds: Vec<Vec<u8>> = [top1, two]
        .iter()
        .flat_map(|j| {
            let records = import_token_records("seed.json", &j.to_string()).unwrap();
            [
                records.to_csv().unwrap().into_bytes(),
                records.to_json().unwrap().into_bytes(),
            ]
        })
        .collect();
    run(seeds, |bytes| {
        let t = text(bytes);
        accepted(
            "tokens.csv",
            bounded(bytes.len(), || import_token_records("tokens.csv", &t)),
        )
    });
}

#[test]
fn model_config_json_and_safetensors_weights() {
    use clozelab::model::TransformerConfig;
    use clozelab::model::loader::load_with_config;
    use clozelab::model::testmodel::{generate_weights, to_safetensors};
    let config = TransformerConfig::new(1, 2, 8, 64, 16, 32);
    let weights = to_safetensors(&generate_weights(&config, 3)).unwrap();
    let device = clozelab::runtime::backend::cpu_device().device;
    run(vec![weights], |bytes| {
        match bounded(bytes.len(), || load_with_config(&config, bytes, &device)) {
            Ok(_) => Ok(true),
            Err(e) => {
                let message = e.to_string();
                prop_assert!(message.contains("weights file"), "{message}");
                Ok(false)
            }
        }
    });
    run(vec![config.to_hf_json().into_bytes()], |bytes| {
        let result = bounded(bytes.len(), || {
            TransformerConfig::from_hf_json(&text(bytes))
        });
        if let Ok(c) = &result {
            // A config that parses describes a model that can be built (no zero sizes).
            prop_assert!(c.n_embd % c.n_head == 0 && c.n_layer > 0, "{c:?}");
        }
        accepted("config.json", result)
    });
}

#[test]
fn tokenizer_files() {
    use clozelab::text::tokenizer::BpeTokenizer;
    let vocab = r#"{"a": 0, "b": 1, "Ġ": 2, "ab": 3, "Ġa": 4, "c": 5, "<|endoftext|>": 6}"#;
    let merges = "#version: 0.2\na b\nĠ a\n";
    // Ids far beyond the vocabulary's size must not make the tokenizer allocate for them.
    let huge = r#"{"a": 0, "b": 4000000000, "ab": 3}"#;
    let seeds = vec![
        format!("{vocab}\u{1}{merges}").into_bytes(),
        format!("{huge}\u{1}{merges}").into_bytes(),
    ];
    run(seeds, |bytes| {
        let t = text(bytes);
        let (v, m) = t.split_once('\u{1}').unwrap_or((&t, ""));
        let built = bounded(bytes.len(), || BpeTokenizer::from_vocab_and_merges(v, m));
        match built {
            Ok(tok) => {
                // A tokenizer that loads encodes and decodes any text without panicking.
                for s in ["ab a", "", "🦀 c\u{0}", m] {
                    if let Ok(ids) = tok.encode(s) {
                        let _ = tok.decode(&ids);
                    }
                }
                Ok(true)
            }
            Err(e) => {
                let message = e.to_string();
                prop_assert!(
                    ["vocab.json", "merges.txt", "tokenizer.json"]
                        .iter()
                        .any(|f| message.contains(f)),
                    "{message}"
                );
                Ok(false)
            }
        }
    });
}

#[test]
fn tokenizer_json() {
    use clozelab::text::tokenizer::BpeTokenizer;
    let json = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [{"id": 6, "content": "<|endoftext|>", "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": true, "special": true}],
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
            "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false,
            "vocab": {"a": 0, "b": 1, "Ġ": 2, "ab": 3, "Ġa": 4, "c": 5, "<|endoftext|>": 6},
            "merges": ["a b", "Ġ a"]}
    });
    run(vec![json.to_string().into_bytes()], |bytes| {
        match bounded(bytes.len(), || BpeTokenizer::from_tokenizer_json(bytes)) {
            Ok(tok) => {
                if let Ok(ids) = tok.encode("ab a 🦀") {
                    let _ = tok.decode(&ids);
                }
                Ok(true)
            }
            Err(e) => names("tokenizer.json", e).map(|()| false),
        }
    });
}

#[test]
#[should_panic(expected = "one allocation of")]
fn the_allocation_guard_catches_an_allocation_out_of_proportion() {
    bounded(10, || vec![0u8; 8 << 20].len());
}

#[test]
fn study_results_archives_and_texts() {
    use std::io::Write;
    let study = StudyConfig::default_play();
    let bundle = |participant: &str| {
        let plan = study.plan(participant, &BTreeMap::new()).unwrap();
        let manifest = Manifest::new(&ModelInfo::default(), &study, &plan, 7, "now");
        ExportKind::Bundle
            .render(&records(), &[], Some(&manifest))
            .unwrap()
    };
    let metadata = r#"{"data": [{"studyResults": [{"id": 1, "studyState": "ABORTED",
        "urlQueryParameters": {"PROLIFIC_PID": "x"}}]}]}"#;
    let mut archive = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, text) in [
        ("study_result_1/comp-result_1/data.txt", bundle("p1")),
        ("study_result_2/comp-result_2/data.txt", bundle("p2")),
        ("metadata.json", metadata.to_string()),
    ] {
        archive
            .start_file(path, zip::write::FileOptions::default())
            .unwrap();
        archive.write_all(text.as_bytes()).unwrap();
    }
    let archive = archive.finish().unwrap().into_inner();
    let lines = format!(
        "{}\n{}",
        bundle("p1").replace('\n', ""),
        bundle("p2").replace('\n', "")
    );
    run(vec![archive, lines.into_bytes()], |bytes| {
        accepted(
            "results.zip",
            bounded(bytes.len(), || {
                StudyResults::read(vec![("results.zip".into(), bytes.to_vec())])
            }),
        )
    });
}

/// A result read back that holds NaN is refused (the worker then leaves the GPU); infinities,
/// which a log-probability may be, pass.
#[test]
fn a_nan_read_back_is_refused_and_numbers_are_not() {
    use clozelab::model::ModelError;
    use clozelab::model::readback::read_f32;
    let device = burn::tensor::Device::flex();
    let read = |values: [f32; 3]| {
        pollster::block_on(read_f32(burn::tensor::Tensor::<1>::from_floats(
            values, &device,
        )))
    };
    assert_eq!(read([1.0, f32::NEG_INFINITY, -2.5]).unwrap()[2], -2.5);
    assert!(matches!(
        read([1.0, f32::NAN, 0.0]),
        Err(ModelError::NotANumber(_))
    ));
}
