//! Bad configs and checkpoints give typed errors naming the tensor; accepted variants load to
//! the same model.

use crate::common;

use std::collections::BTreeMap;

use burn::tensor::Device;
use clozelab::model::testmodel::{generate_weights, test_config, to_safetensors};
use clozelab::model::{ConfigError, LoadError, TransformerConfig, load_transformer};

/// Tensor name → (values, shape).
type Tensors = BTreeMap<String, (Vec<f32>, Vec<usize>)>;

fn tiny() -> (TransformerConfig, Tensors) {
    let mut config = test_config(1, 8, 2);
    config.vocab_size = 50;
    config.n_positions = 16;
    let weights = generate_weights(&config, 3);
    (config, weights)
}

fn load(config: &TransformerConfig, bytes: &[u8]) -> Result<(), LoadError> {
    load_transformer(&config.to_hf_json(), bytes, &Device::flex()).map(|_| ())
}

/// safetensors bytes with each tensor stored as `dtype` (f16/bf16 conversions).
fn serialize_as(
    tensors: &BTreeMap<String, (Vec<f32>, Vec<usize>)>,
    dtype: safetensors::Dtype,
    prefix: &str,
) -> Vec<u8> {
    let data: Vec<(String, Vec<u8>, Vec<usize>)> = tensors
        .iter()
        .map(|(n, (v, s))| {
            let bytes = match dtype {
                safetensors::Dtype::F16 => v
                    .iter()
                    .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
                    .collect(),
                safetensors::Dtype::BF16 => v
                    .iter()
                    .flat_map(|x| half::bf16::from_f32(*x).to_le_bytes())
                    .collect(),
                _ => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            };
            (format!("{prefix}{n}"), bytes, s.clone())
        })
        .collect();
    let views: Vec<_> = data
        .iter()
        .map(|(n, b, s)| {
            (
                n.clone(),
                safetensors::tensor::TensorView::new(dtype, s.clone(), b).unwrap(),
            )
        })
        .collect();
    safetensors::serialize(views, None).unwrap()
}

#[test]
fn accepts_prefix_f16_bf16_and_ignored_buffers() {
    let (config, weights) = tiny();
    load(&config, &to_safetensors(&weights).unwrap()).unwrap();
    load(
        &config,
        &serialize_as(&weights, safetensors::Dtype::F32, "transformer."),
    )
    .unwrap();
    load(
        &config,
        &serialize_as(&weights, safetensors::Dtype::F16, ""),
    )
    .unwrap();
    load(
        &config,
        &serialize_as(&weights, safetensors::Dtype::BF16, "transformer."),
    )
    .unwrap();
    let mut with_buffers = weights.clone();
    with_buffers.insert(
        "h.0.attn.bias".into(),
        (vec![1.0; 16 * 16], vec![1, 1, 16, 16]),
    );
    with_buffers.insert("lm_head.weight".into(), weights["wte.weight"].clone());
    load(&config, &to_safetensors(&with_buffers).unwrap()).unwrap();
}

/// The logits of `bytes` loaded, for two rows of tokens.
fn logits(config: &TransformerConfig, bytes: &[u8]) -> Vec<f32> {
    let (_, model) = load_transformer(&config.to_hf_json(), bytes, &Device::flex()).unwrap();
    let tokens = model
        .token_tensor(&[vec![1, 7, 19, 3, 42], vec![5, 5, 0, 49, 11]])
        .unwrap();
    model
        .forward(tokens)
        .unwrap()
        .into_data()
        .try_to_vec::<f32>()
        .unwrap()
}

/// Every tensor rounded through `round` and back to f32.
fn rounded(tensors: &Tensors, round: fn(f32) -> f32) -> Tensors {
    tensors
        .iter()
        .map(|(n, (v, s))| {
            (
                n.clone(),
                (v.iter().map(|&x| round(x)).collect(), s.clone()),
            )
        })
        .collect()
}

/// A checkpoint variant: its name, how it stores and names the weights, the rounding that
/// storage applies, and the logits' relative tolerance against the unrounded f32 model.
type Case = (
    &'static str,
    safetensors::Dtype,
    &'static str,
    fn(f32) -> f32,
    f32,
);

/// f16, bf16 and prefixed checkpoints compute what the f32 model computes: exactly the f32
/// model of the same weights rounded to that format (the loader converts without loss), and
/// the unrounded model's logits within the format's precision.
#[test]
fn half_and_prefixed_checkpoints_give_the_f32_models_logits() {
    let mut config = test_config(2, 32, 4);
    config.vocab_size = 50;
    config.n_positions = 16;
    let weights = generate_weights(&config, 5);
    let reference = logits(&config, &to_safetensors(&weights).unwrap());
    let scale = reference.iter().fold(0f32, |m, x| m.max(x.abs()));
    let cases: [Case; 4] = [
        (
            "f32, prefixed",
            safetensors::Dtype::F32,
            "transformer.",
            |x| x,
            0.0,
        ),
        (
            "f16",
            safetensors::Dtype::F16,
            "",
            |x| half::f16::from_f32(x).to_f32(),
            2e-3,
        ),
        (
            "bf16",
            safetensors::Dtype::BF16,
            "",
            |x| half::bf16::from_f32(x).to_f32(),
            2e-2,
        ),
        (
            "bf16, prefixed",
            safetensors::Dtype::BF16,
            "transformer.",
            |x| half::bf16::from_f32(x).to_f32(),
            2e-2,
        ),
    ];
    for (name, dtype, prefix, round, precision) in cases {
        let got = logits(&config, &serialize_as(&weights, dtype, prefix));
        let same_weights = logits(&config, &to_safetensors(&rounded(&weights, round)).unwrap());
        assert_eq!(
            got, same_weights,
            "{name}: not the f32 model of the rounded weights"
        );
        let worst = got
            .iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(
            worst <= precision * scale.max(1.0),
            "{name}: logits differ by {worst} (scale {scale})"
        );
        if precision > 0.0 {
            assert!(worst > 0.0, "{name}: the weights were not rounded at all");
        }
    }
}

#[test]
fn typed_errors_name_the_tensor() {
    let (config, weights) = tiny();
    let mut missing = weights.clone();
    missing.remove("h.0.mlp.c_fc.bias");
    assert_eq!(
        load(&config, &to_safetensors(&missing).unwrap()),
        Err(LoadError::MissingTensor("h.0.mlp.c_fc.bias".into()))
    );

    let mut extra = weights.clone();
    extra.insert("h.7.attn.c_attn.weight".into(), (vec![0.0; 4], vec![2, 2]));
    assert_eq!(
        load(&config, &to_safetensors(&extra).unwrap()),
        Err(LoadError::UnexpectedTensor("h.7.attn.c_attn.weight".into()))
    );

    // c_proj is square: a transposed copy has the same shape, so only a non-square one shows.
    let mut transposed = weights.clone();
    let (v, _) = transposed["h.0.mlp.c_fc.weight"].clone();
    transposed.insert("h.0.mlp.c_fc.weight".into(), (v, vec![32, 8]));
    match load(&config, &to_safetensors(&transposed).unwrap()) {
        Err(LoadError::ShapeMismatch {
            name,
            expected,
            found,
        }) => {
            assert_eq!(
                (name.as_str(), expected, found),
                ("h.0.mlp.c_fc.weight", vec![8, 32], vec![32, 8])
            );
        }
        other => panic!("{other:?}"),
    }

    let ints: Vec<(String, Vec<u8>, Vec<usize>)> =
        vec![("wte.weight".into(), vec![0u8; 50 * 8 * 4], vec![50, 8])];
    let views: Vec<_> = ints
        .iter()
        .map(|(n, b, s)| {
            (
                n.clone(),
                safetensors::tensor::TensorView::new(safetensors::Dtype::I32, s.clone(), b)
                    .unwrap(),
            )
        })
        .collect();
    let bytes = safetensors::serialize(views, None).unwrap();
    assert!(
        matches!(load(&config, &bytes), Err(LoadError::UnsupportedDtype { name, .. }) if name == "wte.weight")
    );

    let mut nan = weights.clone();
    nan.get_mut("ln_f.bias").unwrap().0[0] = f32::NAN;
    assert_eq!(
        load(&config, &to_safetensors(&nan).unwrap()),
        Err(LoadError::NonFinite("ln_f.bias".into()))
    );
}

#[test]
fn corrupt_and_truncated_files_never_panic() {
    let (config, weights) = tiny();
    let good = to_safetensors(&weights).unwrap();
    assert!(matches!(
        load(&config, b""),
        Err(LoadError::Truncated(_) | LoadError::NotSafetensors(_))
    ));
    assert!(matches!(
        load(&config, b"PK\x03\x04 this is a zip"),
        Err(LoadError::NotSafetensors(_) | LoadError::Truncated(_))
    ));
    for cut in [1, 7, 8, 100, good.len() / 2, good.len() - 1] {
        let err = load(&config, &good[..cut]).unwrap_err();
        assert!(
            matches!(err, LoadError::Truncated(_) | LoadError::NotSafetensors(_)),
            "cut at {cut}: {err:?}"
        );
    }
    // Flipping bytes anywhere must give an error or a finite model, never a panic.
    for i in (0..good.len()).step_by(good.len() / 97 + 1) {
        let mut bad = good.clone();
        bad[i] ^= 0xA5;
        let _ = load(&config, &bad);
    }
}

#[test]
fn config_errors() {
    let base = serde_json::json!({"n_layer": 2, "n_head": 4, "n_embd": 64, "vocab_size": 50257,
        "n_positions": 1024, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"});
    assert!(TransformerConfig::from_hf_json(&base.to_string()).is_ok());
    let with = |k: &str, v: serde_json::Value| {
        let mut c = base.clone();
        c[k] = v;
        TransformerConfig::from_hf_json(&c.to_string())
    };
    let without = |k: &str| {
        let mut c = base.clone();
        c.as_object_mut().unwrap().remove(k);
        TransformerConfig::from_hf_json(&c.to_string())
    };
    assert_eq!(
        with("activation_function", "relu".into()),
        Err(ConfigError::UnsupportedActivation("relu".into()))
    );
    assert_eq!(without("n_head"), Err(ConfigError::MissingField("n_head")));
    assert_eq!(
        without("layer_norm_epsilon"),
        Err(ConfigError::MissingField("layer_norm_epsilon"))
    );
    assert!(matches!(
        with("n_head", 5.into()),
        Err(ConfigError::Invalid {
            field: "n_head",
            ..
        })
    ));
    assert!(matches!(
        with("n_layer", 0.into()),
        Err(ConfigError::Invalid {
            field: "n_layer",
            ..
        })
    ));
    assert!(matches!(
        with("n_layer", "two".into()),
        Err(ConfigError::Json(_))
    ));
    assert!(matches!(
        with("model_type", "opt".into()),
        Err(ConfigError::Invalid {
            field: "model_type",
            ..
        })
    ));
    assert!(TransformerConfig::from_hf_json("").is_err());
    assert_eq!(without("activation_function").unwrap().n_inner, 256);
}

#[test]
fn reads_real_gpt2_configs() {
    if let Some(shared) = common::shared_dir() {
        let text = std::fs::read_to_string(shared.join("gpt2/config.json")).unwrap();
        assert_eq!(
            TransformerConfig::from_hf_json(&text).unwrap(),
            TransformerConfig::gpt2_small()
        );
    } else {
        eprintln!("SKIPPED: ../shared absent (real GPT-2 config.json)");
    }
    for config in [
        TransformerConfig::gpt2_small(),
        // GPT-2 medium (355M).
        TransformerConfig::new(24, 16, 1024, 50257, 1024, 4096),
        // distilgpt2 (82M): GPT-2 small with 6 blocks.
        TransformerConfig::new(6, 12, 768, 50257, 1024, 3072),
    ] {
        assert_eq!(
            TransformerConfig::from_hf_json(&config.to_hf_json()).unwrap(),
            config
        );
    }
    assert_eq!(TransformerConfig::gpt2_small().num_params(), 124_439_808);
}

#[test]
fn model_rejects_bad_token_input() {
    use clozelab::model::ModelError;
    let (config, weights) = tiny();
    let (_, model) = load_transformer(
        &config.to_hf_json(),
        &to_safetensors(&weights).unwrap(),
        &Device::flex(),
    )
    .unwrap();
    assert_eq!(
        model.token_tensor(&[vec![]]).unwrap_err(),
        ModelError::EmptyInput
    );
    assert_eq!(
        model.token_tensor(&[vec![50]]).unwrap_err(),
        ModelError::TokenOutOfRange {
            id: 50,
            vocab_size: 50
        }
    );
    assert_eq!(
        model.token_tensor(&[vec![1, 2], vec![1]]).unwrap_err(),
        ModelError::RaggedBatch
    );
    let too_long = model.token_tensor(&[vec![1; 17]]).unwrap();
    assert_eq!(
        model.forward(too_long).unwrap_err(),
        ModelError::ContextTooLong {
            needed: 17,
            max: 16
        }
    );
    let mut cache = model.new_cache(None, 1, 2);
    let err = model
        .forward_cached(model.token_tensor(&[vec![1, 2, 3]]).unwrap(), &mut cache)
        .unwrap_err();
    assert_eq!(
        err,
        ModelError::CacheFull {
            needed: 3,
            capacity: 2
        }
    );
}
