//! GPT-NeoX (Pythia's architecture: rotary embeddings on a quarter of each head, the exact GELU,
//! attention and MLP side by side, an untied head) against Hugging Face `transformers`
//! (tests/fixtures/golden_gpt_neox.json, written by scripts/reference_golden.py from the
//! deterministic GPT-NeoX test model): full passes, one token at a time through the cache, and
//! continuations of a shared prefix, on the CPU backend, the browser's CPU bodies (weights packed)
//! and wgpu.

use clozelab::model::{Family, Transformer, load_transformer};
use clozelab::runtime::backend::{ComputeDevice, cpu_device};
use clozelab::runtime::modeldir::read_model_dir;
use clozelab::text::tokenizer::BpeTokenizer;

use crate::common;
use crate::model_golden::{Fixture, check_model_against, fixture_named};

fn fixture() -> Fixture {
    let f = fixture_named("golden_gpt_neox.json");
    assert_eq!(f.model(), ("gpt_neox", 0, 2, 64, 2), "the fixture's model");
    f
}

fn load(compute: &ComputeDevice) -> (Transformer, BpeTokenizer) {
    let files = read_model_dir(common::test_gpt_neox_model_dir()).unwrap();
    let (config, model) =
        load_transformer(&files.config_json, &files.weights, &compute.device).unwrap();
    assert!(matches!(
        config.family,
        Family::GptNeox { rotary_dims: 8, .. }
    ));
    assert!(model.wpe.is_none() && model.lm_head.is_some());
    (model, files.tokenizer)
}

#[test]
fn gpt_neox_on_the_cpu_matches_hugging_face() {
    let (model, tokenizer) = load(&cpu_device());
    check_model_against(&fixture(), &model, &tokenizer, "cpu");
}

#[test]
fn gpt_neox_on_the_browsers_cpu_bodies_matches_hugging_face() {
    let (model, tokenizer) = load(&cpu_device());
    let packed = model.with_panel_weights().unwrap();
    assert!(packed.lm_head.as_ref().is_some_and(|h| h.panels.is_some()));
    check_model_against(&fixture(), &packed, &tokenizer, "browser's cpu bodies");
}

#[test]
fn gpt_neox_on_wgpu_matches_hugging_face() {
    if let Some(device) = common::wgpu_or_skip() {
        let (model, tokenizer) = load(&device);
        check_model_against(&fixture(), &model, &tokenizer, "wgpu");
    }
}

/// Pythia-70M's `config.json` as the hub serves it.
const PYTHIA_70M_CONFIG: &str = r#"{"architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0,
  "eos_token_id": 0, "hidden_act": "gelu", "hidden_size": 512, "initializer_range": 0.02,
  "intermediate_size": 2048, "layer_norm_eps": 1e-05, "max_position_embeddings": 2048,
  "model_type": "gpt_neox", "num_attention_heads": 8, "num_hidden_layers": 6,
  "rotary_emb_base": 10000, "rotary_pct": 0.25, "tie_word_embeddings": false,
  "torch_dtype": "float16", "transformers_version": "4.24.0", "use_cache": true,
  "use_parallel_residual": true, "vocab_size": 50304}"#;

#[test]
fn pythias_config_is_read_and_what_it_does_not_follow_is_refused_by_name() {
    use clozelab::model::{ConfigError, TransformerConfig};
    let config = TransformerConfig::from_hf_json(PYTHIA_70M_CONFIG).unwrap();
    assert_eq!(
        (config.n_layer, config.n_head, config.n_embd, config.n_inner),
        (6, 8, 512, 2048)
    );
    assert_eq!((config.vocab_size, config.n_positions), (50304, 2048));
    assert_eq!(
        config.family,
        Family::GptNeox {
            rotary_dims: 16,
            rotary_base: 10_000.0,
            parallel_residual: true
        }
    );
    // Its own config.json round-trips.
    assert_eq!(
        TransformerConfig::from_hf_json(&config.to_hf_json()).unwrap(),
        config
    );
    let changed = |from: &str, to: &str| {
        assert!(PYTHIA_70M_CONFIG.contains(from), "{from}");
        TransformerConfig::from_hf_json(&PYTHIA_70M_CONFIG.replace(from, to)).unwrap_err()
    };
    assert_eq!(
        changed(r#""hidden_act": "gelu""#, r#""hidden_act": "relu""#),
        ConfigError::UnsupportedActivation("relu".into())
    );
    assert_eq!(
        changed(
            r#""tie_word_embeddings": false"#,
            r#""tie_word_embeddings": true"#
        ),
        ConfigError::UnsupportedOption("tie_word_embeddings")
    );
    assert!(matches!(
        changed(r#""rotary_pct": 0.25"#, r#""rotary_pct": 0.3"#),
        ConfigError::Invalid {
            field: "rotary_pct",
            ..
        }
    ));
    assert_eq!(
        changed(
            r#""use_cache": true"#,
            r#""rope_scaling": {"type": "linear", "factor": 2.0}"#
        ),
        ConfigError::UnsupportedOption("rope_scaling")
    );
    assert!(matches!(
        changed(r#""num_hidden_layers": 6"#, r#""num_hidden_layers": 0"#),
        ConfigError::Invalid {
            field: "num_hidden_layers",
            ..
        }
    ));
    let other = changed(r#""model_type": "gpt_neox""#, r#""model_type": "opt""#);
    assert!(other.to_string().contains("\"opt\""), "{other}");
}
