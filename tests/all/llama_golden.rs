//! Llama (SmolLM2's architecture: RMS norms, the SiLU-gated MLP, rotary embeddings on every value
//! of each head, 6 query heads sharing 2 key/value heads, the head tied to the embedding) against
//! Hugging Face `transformers` (tests/fixtures/golden_llama.json, written by
//! scripts/reference_golden.py from the deterministic Llama test model): full passes, one token at
//! a time through the cache, and continuations of a shared prefix, on the CPU backend, the
//! browser's CPU bodies (weights packed) and wgpu.

use clozelab::model::{ConfigError, Family, Transformer, TransformerConfig, load_transformer};
use clozelab::runtime::backend::{ComputeDevice, cpu_device};
use clozelab::runtime::modeldir::read_model_dir;
use clozelab::text::tokenizer::BpeTokenizer;

use crate::common;
use crate::model_golden::{Fixture, check_model_against, fixture_named};

fn fixture() -> Fixture {
    let f = fixture_named("golden_llama.json");
    assert_eq!(f.model(), ("llama", 0, 2, 96, 6), "the fixture's model");
    f
}

fn load(compute: &ComputeDevice) -> (Transformer, BpeTokenizer) {
    let files = read_model_dir(common::test_llama_model_dir()).unwrap();
    let (config, model) =
        load_transformer(&files.config_json, &files.weights, &compute.device).unwrap();
    assert!(matches!(
        config.family,
        Family::Llama {
            rotary_dims: 16,
            kv_heads: 2,
            tied_head: true,
            ..
        }
    ));
    assert!(model.wpe.is_none() && model.lm_head.is_none());
    assert!(
        model
            .h
            .iter()
            .all(|b| b.ln_1.bias.is_none() && b.attn.kv_heads == 2)
    );
    (model, files.tokenizer)
}

#[test]
fn llama_on_the_cpu_matches_hugging_face() {
    let (model, tokenizer) = load(&cpu_device());
    check_model_against(&fixture(), &model, &tokenizer, "cpu");
}

#[test]
fn llama_on_the_browsers_cpu_bodies_matches_hugging_face() {
    let (model, tokenizer) = load(&cpu_device());
    let packed = model.with_panel_weights().unwrap();
    assert!(packed.wte.panels.is_some());
    check_model_against(&fixture(), &packed, &tokenizer, "browser's cpu bodies");
}

#[test]
fn llama_on_wgpu_matches_hugging_face() {
    if let Some(device) = common::wgpu_or_skip() {
        let (model, tokenizer) = load(&device);
        check_model_against(&fixture(), &model, &tokenizer, "wgpu");
    }
}

/// SmolLM2-135M's `config.json` as the hub serves it.
const SMOLLM2_135M_CONFIG: &str = r#"{"architectures": ["LlamaForCausalLM"],
  "attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 0,
  "hidden_act": "silu", "hidden_size": 576, "initializer_range": 0.041666666666666664,
  "intermediate_size": 1536, "is_llama_config": true, "max_position_embeddings": 8192,
  "model_type": "llama", "num_attention_heads": 9, "num_hidden_layers": 30,
  "num_key_value_heads": 3, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_interleaved": false, "rope_scaling": null, "rope_theta": 100000,
  "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.42.3",
  "use_cache": true, "vocab_size": 49152}"#;

#[test]
fn smollm2s_config_is_read_and_what_it_does_not_follow_is_refused_by_name() {
    let config = TransformerConfig::from_hf_json(SMOLLM2_135M_CONFIG).unwrap();
    assert_eq!(
        (config.n_layer, config.n_head, config.n_embd, config.n_inner),
        (30, 9, 576, 1536)
    );
    assert_eq!((config.vocab_size, config.n_positions), (49152, 8192));
    assert_eq!(
        config.family,
        Family::Llama {
            rotary_dims: 64,
            rotary_base: 100_000.0,
            kv_heads: 3,
            tied_head: true,
        }
    );
    // SmolLM2-135M is 134,515,008 parameters (its model card's 135M).
    assert_eq!(config.num_params(), 134_515_008);
    assert_eq!(
        TransformerConfig::from_hf_json(&config.to_hf_json()).unwrap(),
        config
    );
    let changed = |from: &str, to: &str| {
        assert!(SMOLLM2_135M_CONFIG.contains(from), "{from}");
        TransformerConfig::from_hf_json(&SMOLLM2_135M_CONFIG.replace(from, to)).unwrap_err()
    };
    assert_eq!(
        changed(r#""hidden_act": "silu""#, r#""hidden_act": "gelu""#),
        ConfigError::UnsupportedActivation("gelu".into())
    );
    assert_eq!(
        changed(r#""attention_bias": false"#, r#""attention_bias": true"#),
        ConfigError::UnsupportedOption("attention_bias")
    );
    assert_eq!(
        changed(
            r#""rope_scaling": null"#,
            r#""rope_scaling": {"rope_type": "llama3", "factor": 8.0}"#
        ),
        ConfigError::UnsupportedOption("rope_scaling")
    );
    // Newer saves name the scaling inside `rope_parameters`; its default type is allowed.
    assert_eq!(
        changed(
            r#""rope_scaling": null"#,
            r#""rope_parameters": {"rope_type": "yarn", "rope_theta": 100000, "factor": 4.0}"#
        ),
        ConfigError::UnsupportedOption("rope_scaling")
    );
    let default_type = SMOLLM2_135M_CONFIG.replace(
        r#""rope_scaling": null"#,
        r#""rope_parameters": {"rope_type": "default", "rope_theta": 100000}"#,
    );
    assert!(TransformerConfig::from_hf_json(&default_type).is_ok());
    assert_eq!(
        changed(
            r#""rope_interleaved": false"#,
            r#""rope_interleaved": true"#
        ),
        ConfigError::UnsupportedOption("rope_interleaved")
    );
    for (from, to, field) in [
        (
            r#""num_key_value_heads": 3"#,
            r#""num_key_value_heads": 2"#,
            "num_key_value_heads",
        ),
        (r#""use_cache": true"#, r#""head_dim": 128"#, "head_dim"),
        (
            r#""rms_norm_eps": 1e-05"#,
            r#""rms_norm_eps": -1"#,
            "rms_norm_eps",
        ),
    ] {
        let refused = changed(from, to);
        assert!(
            matches!(&refused, ConfigError::Invalid { field: f, .. } if *f == field),
            "{refused}"
        );
    }
}
