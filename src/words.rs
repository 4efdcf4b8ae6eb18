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
/// use clozelab::words::first_word;
/// assert_eq!(first_word(" don't go"), Some("don't"));
/// assert_eq!(first_word("\n\n\"Well-known\" facts"), Some("Well-known"));
/// assert_eq!(first_word(" the U.S. economy"), Some("the"));
/// assert_eq!(first_word("U.S. economy"), Some("U.S"));
/// assert_eq!(first_word(" ...!"), None);
/// ```
pub fn first_word(text: &str) -> Option<&str> {
    let start = text.char_indices().find(|(_, c)| is_word_char(*c)).map(|(i, _)| i)?;
    let rest = &text[start..];
    let chars: Vec<(usize, char)> = rest.char_indices().collect();
    let mut end = rest.len();
    for (k, &(i, c)) in chars.iter().enumerate() {
        if is_word_char(c) {
            continue;
        }
        let joins = is_inner_joiner(c)
            && k > 0
            && is_word_char(chars[k - 1].1)
            && chars.get(k + 1).is_some_and(|(_, next)| is_word_char(*next));
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
/// use clozelab::words::normalize;
/// assert_eq!(normalize("Don't"), "dont");
/// assert_eq!(normalize("U.S."), "us");
/// assert_eq!(normalize("ÉCOLE"), "école");
/// ```
pub fn normalize(word: &str) -> String {
    word.nfc().flat_map(char::to_lowercase).filter(|c| is_word_char(*c)).collect()
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
/// use clozelab::words::first_word_is_complete;
/// assert!(first_word_is_complete(" cat "));
/// assert!(!first_word_is_complete(" cat"));
/// assert!(!first_word_is_complete(" don'"));
/// assert!(first_word_is_complete(" don't. "));
/// // A period at the very end might still join more letters ("U.S." + "A").
/// assert!(!first_word_is_complete(" don't."));
/// ```
pub fn first_word_is_complete(text: &str) -> bool {
    let Some(word) = first_word(text) else { return false };
    let offset = word.as_ptr() as usize - text.as_ptr() as usize;
    let after = &text[offset + word.len()..];
    let mut chars = after.chars();
    match chars.next() {
        None => false,
        // A joiner at the very end may yet be followed by a letter ("don'" + "t").
        Some(c) if is_inner_joiner(c) => chars.next().is_some(),
        Some(_) => true,
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
        (" 1,000 people", Some("1"), Some("1")),
        (" 24-hour", Some("24-hour"), Some("24hour")),
        (" $100", Some("100"), Some("100")),
        (" (parenthetical)", Some("parenthetical"), Some("parenthetical")),
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
            assert_eq!(first_word_normalized(text).as_deref(), *normal, "normalized({text:?})");
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
    fn normalize_is_idempotent() {
        for (text, _, _) in CASES {
            let once = normalize(text);
            assert_eq!(normalize(&once), once);
        }
    }
}
