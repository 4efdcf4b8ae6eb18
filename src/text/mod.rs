//! Text: GPT-2's byte-level BPE tokenizer (a GGUF file's vocabulary read as one in
//! [`gguf_vocab`]) and the rules for words (the first complete word of a continuation,
//! normalisation for comparing people's answers with the model's).

pub mod gguf_vocab;
pub mod pos;
pub mod tokenizer;
pub mod words;
