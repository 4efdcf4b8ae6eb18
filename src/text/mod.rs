//! Text: GPT-2's byte-level BPE tokenizer and the rules for words (the first complete word of a
//! continuation, normalisation for comparing people's answers with the model's).

pub mod pos;
pub mod tokenizer;
pub mod words;
