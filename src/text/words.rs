//! Words: cutting the first complete word out of a model continuation, and normalising words
//! the way the Provo norms did, so human responses and model samples compare like for like.
//!
//! One module used everywhere (metrics, estimators, games), so that "a word" means the same
//! thing in every number clozelab reports.

use unicode_normalization::UnicodeNormalization;

/// Characters that stay inside a word when they sit between two letters or digits:
/// apostrophes (`don't`, `don’t`), hyphens (`well-known`) and periods (`U.S.`).
fn is_inner_joiner(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '-' | '\u{2010}' | '\u{2011}' | '.')
}

/// Whether the comma at `chars[k]` separates thousands inside a number ("10,000"): a digit
/// before it, exactly three digits after it.
fn is_thousands_separator(chars: &[(usize, char)], k: usize) -> bool {
    let digit = |j: usize| chars.get(j).is_some_and(|(_, c)| c.is_ascii_digit());
    chars[k].1 == ',' && k > 0 && digit(k - 1) && (k + 1..=k + 3).all(digit) && !digit(k + 4)
}

/// Letters, digits, and combining marks (so a decomposed "é" = "e" + U+0301 stays one word).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || unicode_normalization::char::is_combining_mark(c)
}

/// The first complete word of `text`, as written (case and inner punctuation kept), or
/// `None` when the text holds no word (a failed sample).
///
/// Leading whitespace and punctuation are skipped; the word is the longest run of letters and
/// digits in which an apostrophe, hyphen or period between two letters/digits stays inside;
/// it ends at any other character or at the end of the text.
///
/// ```
/// use clozelab::text::words::first_word;
/// assert_eq!(first_word(" don't go"), Some("don't"));
/// assert_eq!(first_word("\n\n\"Well-known\" facts"), Some("Well-known"));
/// assert_eq!(first_word(" the U.S. economy"), Some("the"));
/// assert_eq!(first_word("U.S. economy"), Some("U.S"));
/// assert_eq!(first_word(" ...!"), None);
/// // Thousands separators stay inside a number (the norms write "10000").
/// assert_eq!(first_word(" 10,000 people"), Some("10,000"));
/// assert_eq!(first_word(" 1,000,000."), Some("1,000,000"));
/// assert_eq!(first_word(" 10, 20"), Some("10"));
/// assert_eq!(first_word(" 10,0000"), Some("10"));
/// ```
pub fn first_word(text: &str) -> Option<&str> {
    let start = text
        .char_indices()
        .find(|(_, c)| is_word_char(*c))
        .map(|(i, _)| i)?;
    let rest = &text[start..];
    let chars: Vec<(usize, char)> = rest.char_indices().collect();
    let mut end = rest.len();
    for (k, &(i, c)) in chars.iter().enumerate() {
        if is_word_char(c) {
            continue;
        }
        let joins = (is_inner_joiner(c)
            && k > 0
            && is_word_char(chars[k - 1].1)
            && chars
                .get(k + 1)
                .is_some_and(|(_, next)| is_word_char(*next)))
            || is_thousands_separator(&chars, k);
        if !joins {
            end = i;
            break;
        }
    }
    Some(&rest[..end])
}

/// Normalises a word as in the Provo norms: Unicode NFC, lower case (Unicode-aware), and every
/// character that is not a letter, digit or combining mark removed (`don't` → `dont`, `U.S.` → `us`).
///
/// ```
/// use clozelab::text::words::normalize;
/// assert_eq!(normalize("Don't"), "dont");
/// assert_eq!(normalize("U.S."), "us");
/// assert_eq!(normalize("ÉCOLE"), "école");
/// ```
pub fn normalize(word: &str) -> String {
    word.nfc()
        .flat_map(char::to_lowercase)
        .filter(|c| is_word_char(*c))
        .collect()
}

/// The normalised first word of a continuation; `None` for a failed sample.
pub fn first_word_normalized(text: &str) -> Option<String> {
    first_word(text).map(normalize).filter(|w| !w.is_empty())
}

/// Whether a word that `text` starts has certainly ended: some character after the first word
/// is neither a letter/digit nor an inner joiner followed by one. At the end of the text the
/// word may still continue (more tokens may extend it), so this is `false` there.
///
/// ```
/// use clozelab::text::words::first_word_is_complete;
/// assert!(first_word_is_complete(" cat "));
/// assert!(!first_word_is_complete(" cat"));
/// assert!(!first_word_is_complete(" don'"));
/// assert!(first_word_is_complete(" don't. "));
/// // A period at the very end might still join more letters ("U.S." + "A").
/// assert!(!first_word_is_complete(" don't."));
/// // A comma after digits may still be a thousands separator.
/// assert!(!first_word_is_complete(" 10,00"));
/// assert!(first_word_is_complete(" 10, "));
/// assert!(first_word_is_complete(" cat,"));
/// ```
pub fn first_word_is_complete(text: &str) -> bool {
    let Some(word) = first_word(text) else {
        return false;
    };
    let offset = word.as_ptr() as usize - text.as_ptr() as usize;
    let after = &text[offset + word.len()..];
    let mut chars = after.chars();
    match chars.next() {
        None => false,
        // A joiner at the very end may yet be followed by a letter ("don'" + "t").
        Some(c) if is_inner_joiner(c) => chars.next().is_some(),
        // "10," or "10,00" may yet become "10,000".
        Some(',') if word.ends_with(|c: char| c.is_ascii_digit()) => {
            let rest = &after[1..];
            !(rest.len() < 3 && rest.chars().all(|c| c.is_ascii_digit()))
        }
        Some(_) => true,
    }
}

/// What a model continuation, as raw bytes, says about its first word so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContinuationStatus {
    /// The first word has ended; the word as written.
    Complete(String),
    /// No word yet, or the first word may still grow.
    Pending,
    /// The continuation ended (`<|endoftext|>`) before any word.
    NoWord,
}

/// Splits off an incomplete UTF-8 sequence at the end of `bytes` (a token may hold part of a
/// character; the next token completes it). Returns the bytes before it and whether one was cut.
pub fn split_incomplete_utf8_tail(bytes: &[u8]) -> (&[u8], bool) {
    for back in 1..=bytes.len().min(3) {
        let start = bytes.len() - back;
        let b = bytes[start];
        if b < 0x80 {
            break;
        }
        if b >= 0xC0 {
            let needed = if b >= 0xF0 {
                4
            } else if b >= 0xE0 {
                3
            } else {
                2
            };
            return if needed > back {
                (&bytes[..start], true)
            } else {
                (bytes, false)
            };
        }
    }
    (bytes, false)
}

/// The status of the first word of a continuation given as bytes; `ended` when the last token
/// was `<|endoftext|>` (whose own text is not part of the continuation). The one rule that the
/// Monte Carlo sampler and the exact word probabilities share.
///
/// ```
/// use clozelab::text::words::{continuation_status, ContinuationStatus::*};
/// assert_eq!(continuation_status(b" cat", false), Pending);
/// assert_eq!(continuation_status(b" cat.", false), Pending);
/// assert_eq!(continuation_status(b" cat\n", false), Complete("cat".into()));
/// assert_eq!(continuation_status(b" cat", true), Complete("cat".into()));
/// assert_eq!(continuation_status(b"\n\n", true), NoWord);
/// // The first byte of a curly apostrophe: the word may go on ("don’t").
/// assert_eq!(continuation_status(b" don\xE2", false), Pending);
/// ```
pub fn continuation_status(bytes: &[u8], ended: bool) -> ContinuationStatus {
    if ended {
        let text = String::from_utf8_lossy(bytes);
        return match first_word(&text) {
            Some(word) => ContinuationStatus::Complete(word.to_string()),
            None => ContinuationStatus::NoWord,
        };
    }
    let (head, _) = split_incomplete_utf8_tail(bytes);
    let text = String::from_utf8_lossy(head);
    if first_word_is_complete(&text) {
        first_word(&text).map_or(ContinuationStatus::Pending, |w| {
            ContinuationStatus::Complete(w.to_string())
        })
    } else {
        ContinuationStatus::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (continuation, expected first word as written, expected normalised word)
    const CASES: &[(&str, Option<&str>, Option<&str>)] = &[
        (" the", Some("the"), Some("the")),
        ("the", Some("the"), Some("the")),
        (" The cat", Some("The"), Some("the")),
        ("\nthe", Some("the"), Some("the")),
        ("\n\n  \tthe end", Some("the"), Some("the")),
        ("   ", None, None),
        ("", None, None),
        ("...", None, None),
        (" —", None, None),
        (" don't", Some("don't"), Some("dont")),
        (" don’t", Some("don’t"), Some("dont")),
        (" 'quoted'", Some("quoted"), Some("quoted")),
        (" ‘curly’ quotes", Some("curly"), Some("curly")),
        (" “Hello,” she said", Some("Hello"), Some("hello")),
        (" well-known", Some("well-known"), Some("wellknown")),
        (" well—known", Some("well"), Some("well")),
        (" well–known", Some("well"), Some("well")),
        (" U.S. policy", Some("U.S"), Some("us")),
        (" e.g. this", Some("e.g"), Some("eg")),
        (" end.", Some("end"), Some("end")),
        (" end. Next", Some("end"), Some("end")),
        (" 1999", Some("1999"), Some("1999")),
        (" 3.14 is pi", Some("3.14"), Some("314")),
        (" 1,000 people", Some("1,000"), Some("1000")),
        (" 1, 2", Some("1"), Some("1")),
        (" 24-hour", Some("24-hour"), Some("24hour")),
        (" $100", Some("100"), Some("100")),
        (
            " (parenthetical)",
            Some("parenthetical"),
            Some("parenthetical"),
        ),
        (" rock'n'roll", Some("rock'n'roll"), Some("rocknroll")),
        (" trailing-", Some("trailing"), Some("trailing")),
        (" -leading", Some("leading"), Some("leading")),
        (" it's.", Some("it's"), Some("its")),
        (" o'clock", Some("o'clock"), Some("oclock")),
        (" naïve", Some("naïve"), Some("naïve")),
        (" CAFÉ", Some("CAFÉ"), Some("café")),
        (" cafe\u{301}", Some("cafe\u{301}"), Some("café")),
        (" नमस्ते दुनिया", Some("नमस्ते"), Some("नमस्ते")),
        (" Ärger", Some("Ärger"), Some("ärger")),
        (" Straße", Some("Straße"), Some("straße")),
        (" 東京は", Some("東京は"), Some("東京は")),
        (" Москва", Some("Москва"), Some("москва")),
        (" ΣΟΦΙΑ", Some("ΣΟΦΙΑ"), Some("σοφια")),
        (" 🚀 rocket", Some("rocket"), Some("rocket")),
        (" word🚀", Some("word"), Some("word")),
        (" <img src=x onerror=alert(1)>", Some("img"), Some("img")),
        ("\u{feff}bom", Some("bom"), Some("bom")),
        (" zero\u{200b}width", Some("zero"), Some("zero")),
        (" tab\tafter", Some("tab"), Some("tab")),
        (" a", Some("a"), Some("a")),
        (" I", Some("I"), Some("i")),
        ("'", None, None),
        (" x-ray's", Some("x-ray's"), Some("xrays")),
    ];

    #[test]
    fn extraction_and_normalisation_table() {
        assert!(CASES.len() >= 40);
        for (text, word, normal) in CASES {
            assert_eq!(first_word(text), *word, "first_word({text:?})");
            assert_eq!(
                first_word_normalized(text).as_deref(),
                *normal,
                "normalized({text:?})"
            );
        }
    }

    #[test]
    fn completeness() {
        for (text, complete) in [
            (" cat", false),
            (" cat ", true),
            (" cat,", true),
            (" cat\n", true),
            (" U.S", false),
            (" U.S.", false),
            (" U.S. ", true),
            (" well-", false),
            (" well-k", false),
            (" well- ", true),
            ("", false),
            ("  ", false),
        ] {
            assert_eq!(first_word_is_complete(text), complete, "{text:?}");
        }
    }

    #[test]
    fn continuation_status_cases() {
        use ContinuationStatus::*;
        let cases: &[(&[u8], bool, ContinuationStatus)] = &[
            (b"", false, Pending),
            (b"", true, NoWord),
            (b" the", false, Pending),
            (b" the end", false, Complete("the".into())),
            (b" don't", false, Pending),
            (b" don't!", false, Complete("don't".into())),
            (b" cat's", false, Pending),
            (b" U.S.", false, Pending),
            (b" U.S. ", false, Complete("U.S".into())),
            (b"\n\n\"", false, Pending),
            // "don’t" split inside the curly apostrophe's bytes.
            (b" don\xE2\x80", false, Pending),
            (b" don\xE2\x80\x99", false, Pending),
            (
                b" don\xE2\x80\x99t ",
                false,
                Complete("don\u{2019}t".into()),
            ),
            // An em dash ends the word.
            (b" cat\xE2\x80\x94", false, Complete("cat".into())),
            // A stray continuation byte is invalid UTF-8: it ends the word.
            (b" cat\x80", false, Complete("cat".into())),
            (b" caf\xC3", false, Pending),
            (b" caf\xC3\xA9 ", false, Complete("caf\u{e9}".into())),
            (b" caf\xC3", true, Complete("caf".into())),
        ];
        for (bytes, ended, want) in cases {
            assert_eq!(
                &continuation_status(bytes, *ended),
                want,
                "{:?} ended={ended}",
                String::from_utf8_lossy(bytes)
            );
        }
        assert_eq!(
            split_incomplete_utf8_tail(b"ab\xF0\x9F\x98"),
            (&b"ab"[..], true)
        );
        assert_eq!(
            split_incomplete_utf8_tail(b"ab\xF0\x9F\x98\x80"),
            (&b"ab\xF0\x9F\x98\x80"[..], false)
        );
    }

    #[test]
    fn normalize_is_idempotent() {
        for (text, _, _) in CASES {
            let once = normalize(text);
            assert_eq!(normalize(&once), once);
        }
    }
}
