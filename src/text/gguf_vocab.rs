//! A GGUF file's tokenizer (its `tokenizer.ggml.*` metadata: the token list, their types,
//! the merges and the pre-tokenizer's name) as the Hugging Face `tokenizer.json` it was
//! converted from, so that [`super::tokenizer::BpeTokenizer`] reads it as it reads any other.
//! Byte-level BPE only (`tokenizer.ggml.model = "gpt2"`, as GPT-2, Pythia and SmolLM2 have it);
//! the pre-tokenizers are those llama.cpp names for these models (`llama-vocab.cpp`).

use std::collections::HashMap;

use super::tokenizer::{TokenizerError, byte_level_bpe_json};

/// llama.cpp's token types (`llama_token_type`) that Hugging Face lists as added special
/// tokens: control tokens (3) and user-defined ones (4).
const SPECIAL_TYPES: [i64; 2] = [3, 4];

/// The pre-tokenizer llama.cpp's name stands for, in `tokenizer.json`'s terms.
fn pre_tokenizer(pre: &str) -> Result<serde_json::Value, TokenizerError> {
    let byte_level = serde_json::json!({
        "type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true
    });
    match pre {
        // GPT-2's regex, and the models that kept it (Pythia's "pythia", OLMo's).
        "default" | "gpt2" | "gpt-2" | "pythia" | "olmo" => Ok(byte_level),
        // SmolLM2: every digit on its own, then GPT-2's regex (its tokenizer.json's Sequence).
        "smollm" => Ok(serde_json::json!({
            "type": "Sequence",
            "pretokenizers": [{"type": "Digits", "individual_digits": true}, byte_level]
        })),
        other => Err(TokenizerError::TokenizerJson(format!(
            "the GGUF tokenizer's pre-tokenizer {other:?} is not one clozelab knows \
             (gpt2, pythia, olmo, smollm)"
        ))),
    }
}

/// `tokenizer.json` for a byte-level BPE vocabulary given as a GGUF file lists it: `tokens` by
/// id, each one's `token_types` where given, `merges` as "a b" lines and the pre-tokenizer's
/// name `pre`.
///
/// ```
/// use clozelab::text::gguf_vocab::tokenizer_json;
/// use clozelab::text::tokenizer::BpeTokenizer;
/// let tokens = ["<|endoftext|>", "a", "b", "ab"];
/// let json = tokenizer_json("gpt2", &tokens, Some(&[3, 1, 1, 1]), &["a b"], "gpt2").unwrap();
/// let tokenizer = BpeTokenizer::from_tokenizer_json(&json).unwrap();
/// assert_eq!(tokenizer.encode("ab<|endoftext|>").unwrap(), vec![3, 0]);
/// ```
pub fn tokenizer_json(
    model: &str,
    tokens: &[&str],
    token_types: Option<&[i64]>,
    merges: &[&str],
    pre: &str,
) -> Result<Vec<u8>, TokenizerError> {
    if model != "gpt2" {
        return Err(TokenizerError::TokenizerJson(format!(
            "the GGUF tokenizer is {model:?}; clozelab reads byte-level BPE (\"gpt2\") only"
        )));
    }
    if let Some(types) = token_types
        && types.len() != tokens.len()
    {
        return Err(TokenizerError::TokenizerJson(format!(
            "the GGUF tokenizer lists {} tokens but {} token types",
            tokens.len(),
            types.len()
        )));
    }
    let mut vocab = HashMap::with_capacity(tokens.len());
    for (id, token) in tokens.iter().enumerate() {
        if vocab.insert(*token, id).is_some() {
            return Err(TokenizerError::Vocab(format!(
                "the GGUF tokenizer lists {token:?} twice (again as id {id})"
            )));
        }
    }
    for (index, merge) in merges.iter().enumerate() {
        let mut parts = merge.split(' ');
        let ok = matches!((parts.next(), parts.next(), parts.next()),
            (Some(a), Some(b), None) if !a.is_empty() && !b.is_empty());
        if !ok {
            return Err(TokenizerError::Merges {
                line: index + 1,
                text: merge.chars().take(80).collect(),
            });
        }
    }
    let added: Vec<serde_json::Value> = tokens
        .iter()
        .enumerate()
        .filter(|(id, _)| token_types.is_some_and(|t| SPECIAL_TYPES.contains(&t[*id])))
        .map(|(id, content)| {
            serde_json::json!({
                "id": id, "content": content, "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true
            })
        })
        .collect();
    byte_level_bpe_json(added, pre_tokenizer(pre)?, serde_json::json!(vocab), merges)
}

/// A byte-level BPE vocabulary as a GGUF file lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct VocabParts {
    /// Every token by id.
    pub tokens: Vec<String>,
    /// llama.cpp's type of each: 1 normal, 3 control (Hugging Face's special added tokens).
    pub token_types: Vec<i64>,
    /// "a b" per merge, in rank order.
    pub merges: Vec<String>,
    /// llama.cpp's name of the pre-tokenizer.
    pub pre: &'static str,
}

/// The vocabulary of a `tokenizer.json` as a GGUF file lists it: the inverse of
/// [`tokenizer_json`] for the tokenizers it writes.
pub fn vocab_parts(tokenizer_json: &[u8]) -> Result<VocabParts, TokenizerError> {
    let bad = |m: String| TokenizerError::TokenizerJson(m);
    let json: serde_json::Value =
        serde_json::from_slice(tokenizer_json).map_err(|e| bad(e.to_string()))?;
    let model = &json["model"];
    if model["type"] != "BPE" {
        return Err(bad(format!("the model is {}, not BPE", model["type"])));
    }
    let mut by_id: std::collections::BTreeMap<u64, (String, i64)> = Default::default();
    for (token, id) in model["vocab"].as_object().into_iter().flatten() {
        let id = id
            .as_u64()
            .ok_or_else(|| bad(format!("{token:?} has no id")))?;
        by_id.insert(id, (token.clone(), 1));
    }
    for added in json["added_tokens"].as_array().into_iter().flatten() {
        let (Some(id), Some(content)) = (added["id"].as_u64(), added["content"].as_str()) else {
            return Err(bad("an added token without id or content".into()));
        };
        let kind = if added["special"] == true { 3 } else { 4 };
        by_id.insert(id, (content.to_string(), kind));
    }
    if let Some((gap, _)) = by_id.keys().enumerate().find(|(i, id)| *i as u64 != **id) {
        return Err(bad(format!("no token has id {gap}")));
    }
    let merges = model["merges"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| match m {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(pair) => match &pair[..] {
                [serde_json::Value::String(a), serde_json::Value::String(b)] => {
                    Some(format!("{a} {b}"))
                }
                _ => None,
            },
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("a merge that is not two symbols".into()))?;
    let pre_tokenizers = &json["pre_tokenizer"];
    let digits = pre_tokenizers["pretokenizers"].as_array().is_some_and(|p| {
        p.iter()
            .any(|p| p["type"] == "Digits" && p["individual_digits"] == true)
    });
    let (tokens, token_types) = by_id.into_values().unzip();
    Ok(VocabParts {
        tokens,
        token_types,
        merges,
        pre: if digits { "smollm" } else { "gpt2" },
    })
}
