//! A GGUF model as the Hugging Face checkpoint it was converted from: the `config.json` its
//! metadata implies, and its tensors under transformers' names, decoded to f32 and put back as
//! transformers stores them. llama.cpp's converter (`convert_hf_to_gguf.py`) renames every
//! tensor, transposes GPT-2's `Conv1D` weights into `[out, in]`, and reorders each Llama head's
//! query and key rows for its own rotary layout (pairs of neighbours instead of halves); each
//! is undone here, so the loaders see the checkpoint they already read.

use super::container::{GgufError, GgufFile, TensorInfo};

/// A tensor under its transformers name (without the base model's prefix): the name, its
/// PyTorch shape and its values.
pub type NamedTensor = (String, Vec<usize>, Vec<f32>);

/// The architectures read, by `general.architecture`.
pub const ARCHITECTURES: &str = "llama, gpt2, gptneox";

fn arch(file: &GgufFile) -> Result<&str, GgufError> {
    let arch = file.string("general.architecture")?;
    match arch {
        "llama" | "gpt2" | "gptneox" => Ok(arch),
        other => Err(GgufError::Metadata {
            key: "general.architecture".into(),
            reason: format!("{other:?} is not one clozelab runs ({ARCHITECTURES})"),
        }),
    }
}

/// The vocabulary's size: the token list's length (llama.cpp writes `{arch}.vocab_size` only
/// sometimes), which must equal the embedding's rows.
fn vocab_size(file: &GgufFile) -> Result<usize, GgufError> {
    let tokens = file.strings("tokenizer.ggml.tokens")?.len();
    if let Some(stated) = file.usize_or(&format!("{}.vocab_size", arch(file)?), None)?
        && stated != tokens
    {
        return Err(GgufError::Metadata {
            key: format!("{}.vocab_size", arch(file)?),
            reason: format!("{stated}, but tokenizer.ggml.tokens lists {tokens}"),
        });
    }
    Ok(tokens)
}

/// The Hugging Face `config.json` of the model, from the metadata llama.cpp's converter
/// writes (`{arch}.block_count`, `.embedding_length`, …). Keys the loaders refuse by name
/// (scaled rotary embeddings) are carried over so that they are refused, not dropped.
pub fn config_json(file: &GgufFile) -> Result<String, GgufError> {
    let arch = arch(file)?;
    let key = |k: &str| format!("{arch}.{k}");
    let n_embd = file.usize(&key("embedding_length"))?;
    let n_layer = file.usize(&key("block_count"))?;
    let n_head = file.usize(&key("attention.head_count"))?;
    let n_inner = file.usize(&key("feed_forward_length"))?;
    let n_positions = file.usize(&key("context_length"))?;
    let vocab = vocab_size(file)?;
    let value = match arch {
        "llama" => {
            if file.metadata.contains_key(&key("rope.scaling.type"))
                || file.tensor("rope_freqs.weight").is_some()
            {
                return Err(GgufError::Metadata {
                    key: key("rope.scaling.type"),
                    reason: "scaled rotary embeddings are not supported".into(),
                });
            }
            let head_dim = n_embd / n_head.max(1);
            let rotary = file.usize_or(&key("rope.dimension_count"), Some(head_dim))?;
            if rotary != Some(head_dim) {
                return Err(GgufError::Metadata {
                    key: key("rope.dimension_count"),
                    reason: format!(
                        "{rotary:?}: rotary embeddings on part of a head are not supported"
                    ),
                });
            }
            serde_json::json!({
                "model_type": "llama",
                "hidden_size": n_embd,
                "num_hidden_layers": n_layer,
                "num_attention_heads": n_head,
                "num_key_value_heads": file.usize_or(&key("attention.head_count_kv"), Some(n_head))?,
                "intermediate_size": n_inner,
                "max_position_embeddings": n_positions,
                "vocab_size": vocab,
                "rms_norm_eps": file.float(&key("attention.layer_norm_rms_epsilon"))?.unwrap_or(1e-5),
                "rope_theta": file.float(&key("rope.freq_base"))?.unwrap_or(10_000.0),
                "tie_word_embeddings": file.tensor("output.weight").is_none(),
            })
        }
        "gpt2" => serde_json::json!({
            "model_type": "gpt2",
            "n_embd": n_embd,
            "n_layer": n_layer,
            "n_head": n_head,
            "n_inner": n_inner,
            "n_positions": n_positions,
            "vocab_size": vocab,
            "layer_norm_epsilon": file.float(&key("attention.layer_norm_epsilon"))?.unwrap_or(1e-5),
        }),
        _ => {
            let head_dim = n_embd / n_head.max(1);
            let rotary = file.usize_or(&key("rope.dimension_count"), Some(head_dim))?;
            serde_json::json!({
                "model_type": "gpt_neox",
                "hidden_size": n_embd,
                "num_hidden_layers": n_layer,
                "num_attention_heads": n_head,
                "intermediate_size": n_inner,
                "max_position_embeddings": n_positions,
                "vocab_size": vocab,
                "layer_norm_eps": file.float(&key("attention.layer_norm_epsilon"))?.unwrap_or(1e-5),
                "rotary_pct": rotary.unwrap_or(head_dim) as f64 / head_dim.max(1) as f64,
                "rotary_emb_base": file.float(&key("rope.freq_base"))?.unwrap_or(10_000.0),
                "use_parallel_residual": match file.metadata.get(&key("use_parallel_residual")) {
                    Some(super::container::Value::Bool(b)) => *b,
                    _ => true,
                },
                "tie_word_embeddings": false,
            })
        }
    };
    let mut value = value;
    // The token texts are read after, as transformers' GGUF reader puts it into the config.
    if let Some(bos) = file.usize_or("tokenizer.ggml.bos_token_id", None)? {
        value["bos_token_id"] = serde_json::json!(bos);
    }
    Ok(serde_json::to_string(&value).unwrap_or_default())
}

/// GGUF's names of the tensors outside the blocks and transformers' (without the base
/// model's prefix), per architecture.
fn global_names(arch: &str) -> [(&'static str, &'static str); 5] {
    match arch {
        "llama" => [
            ("token_embd.weight", "embed_tokens.weight"),
            ("output.weight", "lm_head.weight"),
            ("output_norm.weight", "norm.weight"),
            ("", ""),
            ("", ""),
        ],
        "gpt2" => [
            ("token_embd.weight", "wte.weight"),
            ("position_embd.weight", "wpe.weight"),
            ("output.weight", "lm_head.weight"),
            ("output_norm.weight", "ln_f.weight"),
            ("output_norm.bias", "ln_f.bias"),
        ],
        _ => [
            ("token_embd.weight", "embed_in.weight"),
            ("output.weight", "embed_out.weight"),
            ("output_norm.weight", "final_layer_norm.weight"),
            ("output_norm.bias", "final_layer_norm.bias"),
            ("", ""),
        ],
    }
}

/// GGUF's module names inside a block, transformers' and what llama.cpp's converter did to
/// the weight, per architecture (`heads` = query and key/value heads, for Llama's reorder).
fn block_modules(arch: &str, heads: (usize, usize)) -> Vec<(&'static str, &'static str, Fix)> {
    match arch {
        "llama" => vec![
            ("attn_norm", "input_layernorm", Fix::None),
            ("attn_q", "self_attn.q_proj", Fix::Rotary(heads.0)),
            ("attn_k", "self_attn.k_proj", Fix::Rotary(heads.1)),
            ("attn_v", "self_attn.v_proj", Fix::None),
            ("attn_output", "self_attn.o_proj", Fix::None),
            ("ffn_norm", "post_attention_layernorm", Fix::None),
            ("ffn_gate", "mlp.gate_proj", Fix::None),
            ("ffn_up", "mlp.up_proj", Fix::None),
            ("ffn_down", "mlp.down_proj", Fix::None),
        ],
        "gpt2" => vec![
            ("attn_norm", "ln_1", Fix::None),
            ("attn_qkv", "attn.c_attn", Fix::Conv1D),
            ("attn_output", "attn.c_proj", Fix::Conv1D),
            ("ffn_norm", "ln_2", Fix::None),
            ("ffn_up", "mlp.c_fc", Fix::Conv1D),
            ("ffn_down", "mlp.c_proj", Fix::Conv1D),
        ],
        _ => vec![
            ("attn_norm", "input_layernorm", Fix::None),
            ("attn_qkv", "attention.query_key_value", Fix::None),
            ("attn_output", "attention.dense", Fix::None),
            ("ffn_norm", "post_attention_layernorm", Fix::None),
            ("ffn_up", "mlp.dense_h_to_4h", Fix::None),
            ("ffn_down", "mlp.dense_4h_to_h", Fix::None),
        ],
    }
}

fn block_prefix(arch: &str) -> &'static str {
    match arch {
        "gpt2" => "h",
        _ => "layers",
    }
}

/// transformers' name for a GGUF tensor of `arch` and what to undo of its conversion, or
/// `None` for a tensor the architecture does not have. Only weights are reordered or
/// transposed: a bias is one value per output either way.
fn hf_name(arch: &str, name: &str, heads: (usize, usize)) -> Option<(String, Fix)> {
    if let Some((_, hf)) = global_names(arch)
        .iter()
        .find(|(g, _)| !g.is_empty() && *g == name)
    {
        return Some((hf.to_string(), Fix::None));
    }
    let (layer, rest) = name.strip_prefix("blk.")?.split_once('.')?;
    let layer: usize = layer.parse().ok()?;
    let (module, part) = rest.rsplit_once('.')?;
    let (_, hf, fix) = block_modules(arch, heads)
        .into_iter()
        .find(|(g, _, _)| *g == module)?;
    let fix = if part == "weight" { fix } else { Fix::None };
    Some((format!("{}.{layer}.{hf}.{part}", block_prefix(arch)), fix))
}

/// The GGUF name of transformers' tensor `name` (without the base model's prefix) and what
/// llama.cpp's converter does to it: the inverse of [`hf_name`].
fn gguf_name(arch: &str, name: &str, heads: (usize, usize)) -> Option<(String, Fix)> {
    if let Some((g, _)) = global_names(arch)
        .iter()
        .find(|(g, hf)| !g.is_empty() && *hf == name)
    {
        return Some((g.to_string(), Fix::None));
    }
    let rest = name.strip_prefix(block_prefix(arch))?.strip_prefix('.')?;
    let (layer, rest) = rest.split_once('.')?;
    let layer: usize = layer.parse().ok()?;
    let (module, part) = rest.rsplit_once('.')?;
    let (g, _, fix) = block_modules(arch, heads)
        .into_iter()
        .find(|(_, hf, _)| *hf == module)?;
    let fix = if part == "weight" { fix } else { Fix::None };
    Some((format!("blk.{layer}.{g}.{part}"), fix))
}

/// A transformers tensor as llama.cpp's converter stores it for `arch`: its GGUF name, its
/// PyTorch shape and its values, reordered or transposed as the converter does.
pub fn to_gguf(
    arch: &str,
    heads: (usize, usize),
    (name, shape, values): NamedTensor,
) -> Result<NamedTensor, GgufError> {
    let (gguf, fix) = gguf_name(arch, &name, heads).ok_or_else(|| {
        GgufError::Malformed(format!(
            "tensor `{name}` has no GGUF name in a {arch} model"
        ))
    })?;
    let (shape, values) = match (fix, &shape[..]) {
        (Fix::Conv1D, &[rows, cols]) => (vec![cols, rows], transpose(&values, rows, cols)),
        (Fix::Rotary(heads), &[rows, cols]) if heads > 0 && (rows / heads).is_multiple_of(2) => (
            shape.clone(),
            permute_rows(&values, heads, rows / heads, cols),
        ),
        (Fix::None, _) => (shape, values),
        _ => {
            return Err(GgufError::Malformed(format!(
                "tensor `{name}` has shape {shape:?}, which a {arch} model's does not"
            )));
        }
    };
    Ok((gguf, shape, values))
}

fn transpose(values: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0f32; values.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = values[r * cols + c];
        }
    }
    out
}

/// What to undo of llama.cpp's conversion.
#[derive(Clone, Copy)]
enum Fix {
    None,
    /// Llama's query or key rows, for this many heads.
    Rotary(usize),
    /// GPT-2's `Conv1D` weight, stored transposed.
    Conv1D,
}

/// Every tensor of the file under its transformers name, decoded and restored to
/// transformers' layout.
pub fn tensors(file: &GgufFile, bytes: &[u8]) -> Result<Vec<NamedTensor>, GgufError> {
    let arch = arch(file)?;
    let n_head = file.usize(&format!("{arch}.attention.head_count"))?;
    let kv_heads = file.usize_or(&format!("{arch}.attention.head_count_kv"), Some(n_head))?;
    let heads = (n_head, kv_heads.unwrap_or(n_head));
    file.tensors
        .iter()
        .map(|info| {
            let (name, fix) = hf_name(arch, &info.name, heads).ok_or_else(|| {
                GgufError::Malformed(format!(
                    "tensor `{}` is not one a {arch} model has",
                    info.name
                ))
            })?;
            let shape = info.torch_shape();
            let values = info.decode(bytes);
            let (shape, values) = restore(info, fix, shape, values)?;
            Ok((name, shape, values))
        })
        .collect()
}

fn restore(
    info: &TensorInfo,
    fix: Fix,
    shape: Vec<usize>,
    values: Vec<f32>,
) -> Result<(Vec<usize>, Vec<f32>), GgufError> {
    let [rows, cols] = match shape[..] {
        [rows, cols] => [rows, cols],
        _ if matches!(fix, Fix::None) => return Ok((shape, values)),
        _ => {
            return Err(GgufError::Malformed(format!(
                "tensor `{}` has shape {shape:?}, not a matrix",
                info.name
            )));
        }
    };
    match fix {
        Fix::None => Ok((shape, values)),
        Fix::Conv1D => Ok((vec![cols, rows], transpose(&values, rows, cols))),
        Fix::Rotary(heads) => {
            let head_rows = rows / heads.max(1);
            if heads == 0 || !rows.is_multiple_of(heads) || !head_rows.is_multiple_of(2) {
                return Err(GgufError::Malformed(format!(
                    "tensor `{}` has {rows} rows, not {heads} heads of an even width",
                    info.name
                )));
            }
            Ok((shape, unpermute_rows(&values, heads, head_rows, cols)))
        }
    }
}

/// Undoes llama.cpp's `permute` of a head's rows: it stores HF's row `half·w/2 + i` (the two
/// halves `rotate_half` pairs) at `2i + half` (neighbours, as its rotary kernel pairs them).
///
/// ```
/// use clozelab::model::gguf::hf::unpermute_rows;
/// // One head of 4 rows (1 column): llama.cpp stores HF's rows 0, 2, 1, 3.
/// assert_eq!(unpermute_rows(&[0.0, 2.0, 1.0, 3.0], 1, 4, 1), vec![0.0, 1.0, 2.0, 3.0]);
/// ```
pub fn unpermute_rows(values: &[f32], heads: usize, head_rows: usize, cols: usize) -> Vec<f32> {
    reorder_rows(values, heads, head_rows, cols, false)
}

/// Moves each head's rows between transformers' order and llama.cpp's (`to_stored`: into
/// llama.cpp's).
fn reorder_rows(
    values: &[f32],
    heads: usize,
    head_rows: usize,
    cols: usize,
    to_stored: bool,
) -> Vec<f32> {
    let half = head_rows / 2;
    let mut out = vec![0f32; values.len()];
    for h in 0..heads {
        for which in 0..2 {
            for i in 0..half {
                let hf = (h * head_rows + which * half + i) * cols;
                let stored = (h * head_rows + 2 * i + which) * cols;
                let (from, to) = if to_stored {
                    (hf, stored)
                } else {
                    (stored, hf)
                };
                out[to..to + cols].copy_from_slice(&values[from..from + cols]);
            }
        }
    }
    out
}

/// llama.cpp's `permute` of a head's rows, the inverse of [`unpermute_rows`].
///
/// ```
/// use clozelab::model::gguf::hf::{permute_rows, unpermute_rows};
/// let rows: Vec<f32> = (0..12).map(|v| v as f32).collect();
/// let stored = permute_rows(&rows, 2, 6, 1);
/// assert_eq!(stored[..6], [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
/// assert_eq!(unpermute_rows(&stored, 2, 6, 1), rows);
/// ```
pub fn permute_rows(values: &[f32], heads: usize, head_rows: usize, cols: usize) -> Vec<f32> {
    reorder_rows(values, heads, head_rows, cols, true)
}
