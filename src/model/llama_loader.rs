//! Llama's (SmolLM2's) checkpoint keys, and its modules made from them: the same blocks as
//! GPT-2's ([`super::block`]) with RMS norms, its separate query, key and value projections
//! (`nn.Linear`, `[out, in]`, no biases) stacked into the one fused projection the attention op
//! splits, and the SiLU gate's `gate_proj` and `up_proj` stacked likewise. Hugging Face's
//! checkpoints already order each head's values for `rotate_half`, so nothing is reordered.

use burn::tensor::Device;

use super::block::{Block, Projections};
use super::checkpoint::{Checkpoint, LoadError};
use super::config::TransformerConfig;
use super::ops::backend::Backend;
use super::ops::embedding::TokenEmbedding;
use super::transformer::Transformer;

/// Expected keys (without `model.`) and shapes, in module order; `lm_head.weight` (stored
/// without the prefix) only where the head is not tied.
pub(super) fn expected_tensors(config: &TransformerConfig) -> Vec<(String, Vec<usize>)> {
    let (e, inner, vocab) = (config.n_embd, config.n_inner, config.vocab_size);
    let kv = config.family.kv_heads(config.n_head) * config.head_dim();
    let mut keys = vec![("embed_tokens.weight".to_string(), vec![vocab, e])];
    for i in 0..config.n_layer {
        let p = format!("layers.{i}.");
        for (suffix, shape) in [
            ("input_layernorm.weight", vec![e]),
            ("self_attn.q_proj.weight", vec![e, e]),
            ("self_attn.k_proj.weight", vec![kv, e]),
            ("self_attn.v_proj.weight", vec![kv, e]),
            ("self_attn.o_proj.weight", vec![e, e]),
            ("post_attention_layernorm.weight", vec![e]),
            ("mlp.gate_proj.weight", vec![inner, e]),
            ("mlp.up_proj.weight", vec![inner, e]),
            ("mlp.down_proj.weight", vec![e, inner]),
        ] {
            keys.push((format!("{p}{suffix}"), shape));
        }
    }
    keys.push(("norm.weight".to_string(), vec![e]));
    if !config.family.tied_head() {
        keys.push(("lm_head.weight".to_string(), vec![vocab, e]));
    }
    keys
}

/// The rotary frequencies that older exports store as buffers.
pub(super) fn is_ignorable(key: &str) -> bool {
    key.starts_with("layers.") && key.ends_with(".self_attn.rotary_emb.inv_freq")
}

/// As [`is_ignorable`], and a copy of the tied head that some exports store.
pub(super) fn is_ignorable_tied(key: &str) -> bool {
    key == "lm_head.weight" || is_ignorable(key)
}

/// The model from a parsed Llama checkpoint.
pub(super) fn assemble(
    ckpt: &mut Checkpoint,
    config: &TransformerConfig,
    backend: Backend,
    device: &Device,
) -> Result<Transformer, LoadError> {
    let eps = config.layer_norm_epsilon;
    let (e, inner) = (config.n_embd, config.n_inner);
    let rotary = config
        .family
        .rotary()
        .map_err(|e| LoadError::Model(e.into()))?;
    let mut h = Vec::with_capacity(config.n_layer);
    for i in 0..config.n_layer {
        let p = format!("layers.{i}");
        let mut linear = |names: &[&str], n_in: usize| {
            let names: Vec<String> = names.iter().map(|n| format!("{p}.{n}")).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            ckpt.linear(&names, n_in, false, None, backend, device)
        };
        let projections = Projections {
            c_attn: linear(
                &["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"],
                e,
            )?,
            attn_proj: linear(&["self_attn.o_proj"], e)?,
            c_fc: linear(&["mlp.gate_proj", "mlp.up_proj"], e)?,
            mlp_proj: linear(&["mlp.down_proj"], inner)?,
        };
        let norms = [
            ckpt.rms_norm(&format!("{p}.input_layernorm"), eps, device)?,
            ckpt.rms_norm(&format!("{p}.post_attention_layernorm"), eps, device)?,
        ];
        h.push(Block::new(
            &config.family,
            config.n_head,
            rotary.clone(),
            norms,
            projections,
        ));
    }
    let table =
        |values: Vec<f32>| TokenEmbedding::from_rows(backend, values, config.vocab_size, e, device);
    let lm_head = match config.family.tied_head() {
        true => None,
        false => Some(table(ckpt.values("lm_head.weight")?)?),
    };
    Ok(Transformer {
        wte: table(ckpt.values("embed_tokens.weight")?)?,
        wpe: None,
        h,
        ln_f: ckpt.rms_norm("norm", eps, device)?,
        lm_head,
        vocab_size: config.vocab_size,
        n_positions: config.n_positions,
        backend,
    })
}
