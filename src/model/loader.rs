//! Loads Hugging Face checkpoints (`config.json` + `model.safetensors` bytes) of GPT-2, of
//! GPT-NeoX through `gpt_neox_loader` and of Llama through `llama_loader`, the family chosen by
//! the config; the safetensors file is read by [`super::checkpoint`].
//!
//! Accepts keys with or without the base model's prefix (`transformer.` for GPT-2, `gpt_neox.`,
//! `model.`: `…LMHeadModel`/`…ForCausalLM` vs base-model saves), f32/f16/bf16 storage, and
//! ignores the causal-mask buffers older exports carry (`attn.bias`, `attn.masked_bias`), a tied
//! `lm_head.weight` and stored rotary frequencies. Everything else that does not
//! match the config is an error naming the tensor. Bytes come from anywhere (file, fetch, Cache
//! Storage), so nothing here touches the file system.

use burn::tensor::Device;

use super::block::{Block, Projections};
pub use super::checkpoint::LoadError;
use super::checkpoint::{Checkpoint, CheckpointRules};
use super::config::TransformerConfig;
use super::family::Family;
use super::gpt_neox_loader;
use super::llama_loader;
use super::ops::backend::Backend;
use super::ops::embedding::TokenEmbedding;
use super::transformer::Transformer;

/// Expected checkpoint keys (without the base model's prefix) and shapes for `config`, in
/// module order.
pub fn expected_tensors(config: &TransformerConfig) -> Vec<(String, Vec<usize>)> {
    match config.family {
        Family::Gpt2 => gpt2_tensors(config),
        Family::GptNeox { .. } => gpt_neox_loader::expected_tensors(config),
        Family::Llama { .. } => llama_loader::expected_tensors(config),
    }
}

fn gpt2_tensors(config: &TransformerConfig) -> Vec<(String, Vec<usize>)> {
    let (e, inner) = (config.n_embd, config.n_inner);
    let mut keys = vec![
        ("wte.weight".to_string(), vec![config.vocab_size, e]),
        ("wpe.weight".to_string(), vec![config.n_positions, e]),
    ];
    for i in 0..config.n_layer {
        let p = format!("h.{i}.");
        for (suffix, shape) in [
            ("ln_1.weight", vec![e]),
            ("ln_1.bias", vec![e]),
            ("attn.c_attn.weight", vec![e, 3 * e]),
            ("attn.c_attn.bias", vec![3 * e]),
            ("attn.c_proj.weight", vec![e, e]),
            ("attn.c_proj.bias", vec![e]),
            ("ln_2.weight", vec![e]),
            ("ln_2.bias", vec![e]),
            ("mlp.c_fc.weight", vec![e, inner]),
            ("mlp.c_fc.bias", vec![inner]),
            ("mlp.c_proj.weight", vec![inner, e]),
            ("mlp.c_proj.bias", vec![e]),
        ] {
            keys.push((format!("{p}{suffix}"), shape));
        }
    }
    keys.push(("ln_f.weight".to_string(), vec![e]));
    keys.push(("ln_f.bias".to_string(), vec![e]));
    keys
}

/// What `config`'s checkpoint must and may hold.
fn rules(config: &TransformerConfig) -> CheckpointRules {
    match config.family {
        Family::Gpt2 => CheckpointRules {
            prefix: "transformer.",
            expected: gpt2_tensors(config),
            ignorable: gpt2_is_ignorable,
            ignored_but_checked: Some(("lm_head.weight", vec![config.vocab_size, config.n_embd])),
        },
        Family::GptNeox { .. } => CheckpointRules {
            prefix: "gpt_neox.",
            expected: gpt_neox_loader::expected_tensors(config),
            ignorable: gpt_neox_loader::is_ignorable,
            ignored_but_checked: None,
        },
        Family::Llama { tied_head, .. } => CheckpointRules {
            prefix: "model.",
            expected: llama_loader::expected_tensors(config),
            ignorable: match tied_head {
                true => llama_loader::is_ignorable_tied,
                false => llama_loader::is_ignorable,
            },
            ignored_but_checked: tied_head
                .then(|| ("lm_head.weight", vec![config.vocab_size, config.n_embd])),
        },
    }
}

/// Keys that carry no learned state clozelab needs: the causal masks of old exports and the
/// LM head, which GPT-2 ties to `wte`.
fn gpt2_is_ignorable(key: &str) -> bool {
    key == "lm_head.weight"
        || (key.starts_with("h.")
            && (key.ends_with(".attn.bias") || key.ends_with(".attn.masked_bias")))
}

/// Loads GPT-2 from `config.json` text and `model.safetensors` bytes onto `device`.
pub fn load_transformer(
    config_json: &str,
    safetensors: &[u8],
    device: &Device,
) -> Result<(TransformerConfig, Transformer), LoadError> {
    let config = TransformerConfig::from_hf_json(config_json)?;
    let model = load_with_config(&config, safetensors, device)?;
    Ok((config, model))
}

/// Loads weights for an already parsed config.
pub fn load_with_config(
    config: &TransformerConfig,
    safetensors: &[u8],
    device: &Device,
) -> Result<Transformer, LoadError> {
    let mut ckpt = Checkpoint::parse(rules(config), safetensors)?;
    let backend = Backend::of(device);
    match config.family {
        Family::Gpt2 => gpt2(&mut ckpt, config, backend, device),
        Family::GptNeox { .. } => gpt_neox_loader::assemble(&mut ckpt, config, backend, device),
        Family::Llama { .. } => llama_loader::assemble(&mut ckpt, config, backend, device),
    }
}

/// The checkpoint's tensors for `config`, checked as loading checks them and decoded to f32,
/// under their names without the base model's prefix (what a GGUF file is written from).
pub fn checkpoint_tensors(
    config: &TransformerConfig,
    bytes: &[u8],
) -> Result<Vec<super::gguf::hf::NamedTensor>, LoadError> {
    Ok(Checkpoint::parse(rules(config), bytes)?.into_tensors())
}

/// GPT-2's modules from its checkpoint's tensors.
fn gpt2(
    ckpt: &mut Checkpoint,
    config: &TransformerConfig,
    backend: Backend,
    device: &Device,
) -> Result<Transformer, LoadError> {
    let eps = config.layer_norm_epsilon;
    let (e, inner) = (config.n_embd, config.n_inner);
    let mut h = Vec::with_capacity(config.n_layer);
    for i in 0..config.n_layer {
        let p = format!("h.{i}");
        let norms = [
            ckpt.layer_norm(&format!("{p}.ln_1"), eps, device)?,
            ckpt.layer_norm(&format!("{p}.ln_2"), eps, device)?,
        ];
        let projections = Projections {
            c_attn: ckpt.conv1d(&format!("{p}.attn.c_attn"), [e, 3 * e], backend, device)?,
            attn_proj: ckpt.conv1d(&format!("{p}.attn.c_proj"), [e, e], backend, device)?,
            c_fc: ckpt.conv1d(&format!("{p}.mlp.c_fc"), [e, inner], backend, device)?,
            mlp_proj: ckpt.conv1d(&format!("{p}.mlp.c_proj"), [inner, e], backend, device)?,
        };
        h.push(Block::new(
            &config.family,
            config.n_head,
            None,
            norms,
            projections,
        ));
    }
    let wte = ckpt.values("wte.weight")?;
    Ok(Transformer {
        wte: TokenEmbedding::from_rows(backend, wte, config.vocab_size, config.n_embd, device)?,
        wpe: Some(ckpt.take("wpe.weight", device)?),
        h,
        ln_f: ckpt.layer_norm("ln_f", eps, device)?,
        lm_head: None,
        vocab_size: config.vocab_size,
        n_positions: config.n_positions,
        backend,
    })
}
