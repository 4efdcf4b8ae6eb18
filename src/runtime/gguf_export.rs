//! A Hugging Face model written as a GGUF file, laid out as llama.cpp's converter
//! (`convert_hf_to_gguf.py`) writes one: its metadata keys, its tensor names and layouts (GPT-2's
//! `Conv1D` weights transposed, Llama's query and key rows reordered), the vocabulary as
//! `tokenizer.ggml.*`, and each matrix in the chosen type (norms and biases stay F32, as
//! llama.cpp keeps them). Read back by [`super::gguf_model`].

use crate::model::gguf::writer::{GgufWriter, WriteError};
use crate::model::gguf::{GgmlType, GgufError, Value, hf};
use crate::model::loader::checkpoint_tensors;
use crate::model::{Family, LoadError, TransformerConfig};
use crate::text::gguf_vocab::vocab_parts;
use crate::text::tokenizer::{BpeTokenizer, TokenizerError};

#[derive(Debug, PartialEq, thiserror::Error)]
pub enum GgufExportError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Gguf(#[from] GgufError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("the tokenizer: {0}")]
    Tokenizer(#[from] TokenizerError),
}

/// llama.cpp's `general.file_type` for a model whose matrices are `t` (`llama_ftype`).
fn file_type(t: GgmlType) -> u64 {
    match t {
        GgmlType::F32 => 0,
        GgmlType::F16 => 1,
        GgmlType::Q4_0 => 2,
        GgmlType::Q4_1 => 3,
        GgmlType::Q8_0 => 7,
        GgmlType::Q4K => 15,
        GgmlType::Q5K => 17,
        GgmlType::Q6K => 18,
        GgmlType::BF16 => 32,
    }
}

fn uint(n: usize) -> Value {
    Value::Uint(n as u64)
}

/// The metadata llama.cpp's converter writes for `config`'s architecture.
fn architecture_metadata(config: &TransformerConfig) -> (&'static str, Vec<(String, Value)>) {
    let (arch, mut keys) = match &config.family {
        Family::Gpt2 => ("gpt2", vec![]),
        Family::GptNeox {
            rotary_dims,
            rotary_base,
            parallel_residual,
        } => (
            "gptneox",
            vec![
                ("rope.dimension_count", uint(*rotary_dims)),
                ("rope.freq_base", Value::Float(*rotary_base)),
                ("use_parallel_residual", Value::Bool(*parallel_residual)),
            ],
        ),
        Family::Llama {
            rotary_dims,
            rotary_base,
            kv_heads,
            ..
        } => (
            "llama",
            vec![
                ("rope.dimension_count", uint(*rotary_dims)),
                ("rope.freq_base", Value::Float(*rotary_base)),
                ("attention.head_count_kv", uint(*kv_heads)),
                ("vocab_size", uint(config.vocab_size)),
            ],
        ),
    };
    let epsilon = match config.family {
        Family::Llama { .. } => "attention.layer_norm_rms_epsilon",
        _ => "attention.layer_norm_epsilon",
    };
    keys.extend([
        ("context_length", uint(config.n_positions)),
        ("embedding_length", uint(config.n_embd)),
        ("feed_forward_length", uint(config.n_inner)),
        ("block_count", uint(config.n_layer)),
        ("attention.head_count", uint(config.n_head)),
        (epsilon, Value::Float(config.layer_norm_epsilon)),
    ]);
    let keys = keys
        .into_iter()
        .map(|(k, v)| (format!("{arch}.{k}"), v))
        .collect();
    (arch, keys)
}

/// The GGUF file of the model `config_json` + `safetensors` with `tokenizer`, its matrices
/// stored as `matrices` (where their rows are whole blocks of it; other tensors as F32).
pub fn gguf_bytes(
    name: &str,
    config_json: &str,
    safetensors: &[u8],
    tokenizer: &BpeTokenizer,
    matrices: GgmlType,
) -> Result<Vec<u8>, GgufExportError> {
    let config = TransformerConfig::from_hf_json(config_json).map_err(LoadError::from)?;
    let (arch, keys) = architecture_metadata(&config);
    let vocab = vocab_parts(tokenizer.to_tokenizer_json()?.as_bytes())?;
    let mut w = GgufWriter::new();
    w.metadata("general.architecture", Value::Str(arch.into()))
        .metadata("general.name", Value::Str(name.into()))
        .metadata("general.file_type", Value::Uint(file_type(matrices)))
        .metadata("general.quantization_version", Value::Uint(2));
    for (k, v) in keys {
        w.metadata(&k, v);
    }
    let eot = u64::from(tokenizer.end_of_text_id());
    w.metadata("tokenizer.ggml.model", Value::Str("gpt2".into()))
        .metadata("tokenizer.ggml.pre", Value::Str(vocab.pre.into()))
        .metadata(
            "tokenizer.ggml.tokens",
            Value::Array(vocab.tokens.into_iter().map(Value::Str).collect()),
        )
        .metadata(
            "tokenizer.ggml.token_type",
            Value::Array(vocab.token_types.into_iter().map(Value::Int).collect()),
        )
        .metadata(
            "tokenizer.ggml.merges",
            Value::Array(vocab.merges.into_iter().map(Value::Str).collect()),
        )
        .metadata(
            "tokenizer.ggml.bos_token_id",
            Value::Uint(u64::from(tokenizer.begin_of_text_id())),
        )
        .metadata("tokenizer.ggml.eos_token_id", Value::Uint(eot));
    let heads = (config.n_head, config.family.kv_heads(config.n_head));
    let tensors = checkpoint_tensors(&config, safetensors)?;
    let mut embedding = None;
    for tensor in tensors {
        let (gguf, shape, values) = hf::to_gguf(arch, heads, tensor)?;
        let row = shape[shape.len() - 1];
        let t = match shape.len() == 2 && row.is_multiple_of(matrices.block_values()) {
            true => matrices,
            false => GgmlType::F32,
        };
        if arch == "gpt2" && gguf == "token_embd.weight" {
            embedding = Some((shape.clone(), values.clone(), t));
        }
        w.tensor(&gguf, &shape, &values, t)?;
    }
    // GPT-2's head is its embedding; llama.cpp's converter stores it again as `output`.
    if let Some((shape, values, t)) = embedding {
        w.tensor("output.weight", &shape, &values, t)?;
    }
    Ok(w.to_bytes())
}
