//! GPT-NeoX's (Pythia's) checkpoint keys, and its modules made from them: the same blocks as
//! GPT-2's ([`super::block`]), its `nn.Linear` weights (`[out, in]`) transposed into the
//! projections' `[in, out]`, and its fused query/key/value projection (each head's query, key
//! and value side by side) reordered into the queries' heads, then the keys', then the values',
//! as the attention op splits them.

use burn::tensor::Device;

use super::block::{Block, Projections};
use super::checkpoint::{Checkpoint, LoadError};
use super::config::TransformerConfig;
use super::ops::backend::Backend;
use super::ops::embedding::TokenEmbedding;
use super::transformer::Transformer;

/// Expected keys (without `gpt_neox.`) and shapes, in module order.
pub(super) fn expected_tensors(config: &TransformerConfig) -> Vec<(String, Vec<usize>)> {
    let (e, inner, vocab) = (config.n_embd, config.n_inner, config.vocab_size);
    let mut keys = vec![("embed_in.weight".to_string(), vec![vocab, e])];
    for i in 0..config.n_layer {
        let p = format!("layers.{i}.");
        for (suffix, shape) in [
            ("input_layernorm.weight", vec![e]),
            ("input_layernorm.bias", vec![e]),
            ("post_attention_layernorm.weight", vec![e]),
            ("post_attention_layernorm.bias", vec![e]),
            ("attention.query_key_value.weight", vec![3 * e, e]),
            ("attention.query_key_value.bias", vec![3 * e]),
            ("attention.dense.weight", vec![e, e]),
            ("attention.dense.bias", vec![e]),
            ("mlp.dense_h_to_4h.weight", vec![inner, e]),
            ("mlp.dense_h_to_4h.bias", vec![inner]),
            ("mlp.dense_4h_to_h.weight", vec![e, inner]),
            ("mlp.dense_4h_to_h.bias", vec![e]),
        ] {
            keys.push((format!("{p}{suffix}"), shape));
        }
    }
    keys.push(("final_layer_norm.weight".to_string(), vec![e]));
    keys.push(("final_layer_norm.bias".to_string(), vec![e]));
    keys.push(("embed_out.weight".to_string(), vec![vocab, e]));
    keys
}

/// The causal masks and rotary frequencies that older exports store as buffers.
pub(super) fn is_ignorable(key: &str) -> bool {
    key.starts_with("layers.")
        && (key.ends_with(".attention.bias")
            || key.ends_with(".attention.masked_bias")
            || key.ends_with(".attention.rotary_emb.inv_freq"))
}

/// The model from a parsed GPT-NeoX checkpoint.
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
    let head_dim = config.head_dim();
    let heads_first = fused_heads_order(config.n_head, head_dim);
    let mut h = Vec::with_capacity(config.n_layer);
    for i in 0..config.n_layer {
        let p = format!("layers.{i}");
        let mut linear = |name: &str, n_in: usize, order: Option<&[usize]>| {
            ckpt.linear(
                &[&format!("{p}.{name}")],
                n_in,
                true,
                order,
                backend,
                device,
            )
        };
        let projections = Projections {
            c_attn: linear("attention.query_key_value", e, Some(&heads_first))?,
            attn_proj: linear("attention.dense", e, None)?,
            c_fc: linear("mlp.dense_h_to_4h", e, None)?,
            mlp_proj: linear("mlp.dense_4h_to_h", inner, None)?,
        };
        let norms = [
            ckpt.layer_norm(&format!("{p}.input_layernorm"), eps, device)?,
            ckpt.layer_norm(&format!("{p}.post_attention_layernorm"), eps, device)?,
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
    Ok(Transformer {
        wte: table(ckpt.values("embed_in.weight")?)?,
        wpe: None,
        h,
        ln_f: ckpt.layer_norm("final_layer_norm", eps, device)?,
        lm_head: Some(table(ckpt.values("embed_out.weight")?)?),
        vocab_size: config.vocab_size,
        n_positions: config.n_positions,
        backend,
    })
}

/// For each output of the reordered fused projection (the queries' heads, then the keys', then
/// the values'), the output of GPT-NeoX's (head by head: query, key, value) it takes.
fn fused_heads_order(n_head: usize, head_dim: usize) -> Vec<usize> {
    (0..3)
        .flat_map(|part| {
            (0..n_head).flat_map(move |head| {
                (0..head_dim).map(move |d| head * 3 * head_dim + part * head_dim + d)
            })
        })
        .collect()
}
