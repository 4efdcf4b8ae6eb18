//! Which text an answer was given on. A passage is known by its study, its id and its text:
//! answers of a run are placed on the text its own study gave that id (the study's config
//! travels in every bundle's manifest), else on the passage every study may use by that id (the
//! app's built-ins), else — for a number — on the Provo text of that number. Contexts of a
//! passage that is not Provo's are keyed by a text id derived from the passage's id and text
//! ([`own_text_id`]), never by a position in a list: the same id with the same text is one
//! passage in every study and every file, and the same id with another text is another.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

/// Text ids from here up are passages' own texts ([`own_text_id`]); below are Provo's (1–55)
/// and any other norms' own numbers.
pub const OWN_TEXTS_FROM: u32 = 1 << 31;

/// The text with its white space made single spaces (how passages are split into words).
fn words_of(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A text's fingerprint: the first 8 hex digits of SHA-256 of its words (white space made
/// single spaces), so that a passage's text can be named in a table and compared by eye.
///
/// ```
/// use clozelab::analysis::passage_texts::text_fingerprint;
/// assert_eq!(text_fingerprint("The  cat\nsat."), text_fingerprint("The cat sat."));
/// assert_ne!(text_fingerprint("The cat sat."), text_fingerprint("The dog sat."));
/// assert_eq!(text_fingerprint("The cat sat.").len(), 8);
/// ```
pub fn text_fingerprint(text: &str) -> String {
    Sha256::digest(words_of(text).as_bytes())[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The text id of the passage `passage_id` with `text`: SHA-256 of both (the text's white
/// space made single spaces), its first 31 bits, from [`OWN_TEXTS_FROM`] up. The same id and
/// text give the same number in every study, file and session.
///
/// ```
/// use clozelab::analysis::passage_texts::{OWN_TEXTS_FROM, own_text_id};
/// let pilot = own_text_id("p1", "The baker made bread.");
/// assert!(pilot >= OWN_TEXTS_FROM);
/// assert_eq!(pilot, own_text_id("p1", "The  baker made\nbread."));
/// assert_ne!(pilot, own_text_id("p1", "The river ran dry."));
/// assert_ne!(pilot, own_text_id("p2", "The baker made bread."));
/// ```
pub fn own_text_id(passage_id: &str, text: &str) -> u32 {
    let mut hash = Sha256::new();
    hash.update(passage_id.as_bytes());
    hash.update([0]);
    hash.update(words_of(text).as_bytes());
    let digest = hash.finalize();
    OWN_TEXTS_FROM | (u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]) >> 1)
}

/// The texts answers are placed by (see the module's doc).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassageTexts {
    /// Passages every study may use, by id (the app's built-ins).
    shared: BTreeMap<String, String>,
    /// Each study's own passages: study id → passage id → text.
    studies: BTreeMap<String, BTreeMap<String, String>>,
    /// The study each run belongs to: (participant, run) → study id.
    runs: BTreeMap<(String, String), String>,
}

impl PassageTexts {
    /// Texts of passages every study may use, (id, text) each; a repeated id keeps the first.
    pub fn shared(passages: &[(String, String)]) -> Self {
        let mut shared = BTreeMap::new();
        for (id, text) in passages {
            shared.entry(id.clone()).or_insert_with(|| text.clone());
        }
        Self {
            shared,
            ..Self::default()
        }
    }

    /// A study's own passages, (id, text) each; a repeated id keeps the first.
    pub fn add_study(
        &mut self,
        study_id: &str,
        passages: impl IntoIterator<Item = (String, String)>,
    ) {
        let own = self.studies.entry(study_id.to_string()).or_default();
        for (id, text) in passages {
            own.entry(id).or_insert(text);
        }
    }

    /// That `participant`'s `run` belongs to the study `study_id`.
    pub fn add_run(&mut self, participant: &str, run: &str, study_id: &str) {
        self.runs.insert(
            (participant.to_string(), run.to_string()),
            study_id.to_string(),
        );
    }

    /// The study a run belongs to: the one its bundles named, else — a run known only from a
    /// long-format download, which names no study — the only study of the results.
    pub fn study_of(&self, participant: &str, run: &str) -> Option<&str> {
        self.runs
            .get(&(participant.to_string(), run.to_string()))
            .map(String::as_str)
            .filter(|study| self.studies.contains_key(*study))
            .or_else(|| {
                let mut studies = self.studies.keys();
                match (studies.next(), studies.next()) {
                    (Some(only), None) => Some(only.as_str()),
                    _ => None,
                }
            })
    }

    /// The text of `passage` as `participant`'s `run` saw it: its study's own text of that id,
    /// else the shared passage of that id. A run of no known study reads the text every study
    /// that has the id gives it, when they agree; where they differ it reads none (it is never
    /// guessed). `None` when nothing is known (a Provo text by number, or an unknown passage).
    pub fn text_of(&self, participant: &str, run: &str, passage: &str) -> Option<&str> {
        let own = match self.study_of(participant, run) {
            Some(study) => self.studies.get(study).and_then(|own| own.get(passage)),
            None => {
                let mut texts = self.studies.values().filter_map(|own| own.get(passage));
                let first = texts.next();
                if texts.any(|t| Some(t) != first) {
                    return None;
                }
                first
            }
        };
        own.or_else(|| self.shared.get(passage)).map(String::as_str)
    }

    /// One sentence per passage id that stands for more than one text across the studies
    /// (each text's fingerprint and studies): their answers are kept apart.
    pub fn clashes(&self) -> Vec<String> {
        let mut texts: BTreeMap<&str, BTreeMap<String, BTreeSet<&str>>> = BTreeMap::new();
        for (study, own) in &self.studies {
            for (id, text) in own {
                texts
                    .entry(id)
                    .or_default()
                    .entry(text_fingerprint(text))
                    .or_default()
                    .insert(study);
            }
        }
        for (id, text) in &self.shared {
            if let Some(by_text) = texts.get_mut(id.as_str()) {
                by_text
                    .entry(text_fingerprint(text))
                    .or_default()
                    .insert("built in");
            }
        }
        texts
            .into_iter()
            .filter(|(_, by_text)| by_text.len() > 1)
            .map(|(id, by_text)| {
                let each: Vec<String> = by_text
                    .iter()
                    .map(|(fingerprint, studies)| {
                        let studies: Vec<&str> = studies.iter().copied().collect();
                        format!("{fingerprint} ({})", studies.join(", "))
                    })
                    .collect();
                format!(
                    "passage {id:?} has {} different texts, kept apart as different passages: {}",
                    by_text.len(),
                    each.join("; ")
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts() -> PassageTexts {
        let mut texts = PassageTexts::shared(&[
            ("kitchen".into(), "Every Sunday we bake.".into()),
            ("p1".into(), "Built in text.".into()),
        ]);
        texts.add_study("pilot", [("p1".into(), "The baker made bread.".into())]);
        texts.add_study("main", [("p1".into(), "The river ran dry.".into())]);
        texts.add_study("third", [("p1".into(), "The baker made  bread.".into())]);
        texts.add_run("A", "run-1", "pilot");
        texts.add_run("A", "run-2", "main");
        texts.add_run("B", "run-3", "third");
        texts
    }

    #[test]
    fn a_run_reads_its_own_studys_text() {
        let texts = texts();
        assert_eq!(
            texts.text_of("A", "run-1", "p1"),
            Some("The baker made bread.")
        );
        assert_eq!(
            texts.text_of("A", "run-2", "p1"),
            Some("The river ran dry.")
        );
        // A passage its study does not have is the built-in of that id.
        assert_eq!(
            texts.text_of("A", "run-2", "kitchen"),
            Some("Every Sunday we bake.")
        );
        // A run of no known study (a long-format download) reads a text only where the
        // studies agree on it: p1 has three, so none.
        assert_eq!(texts.text_of("Z", "run-9", "p1"), None);
        assert_eq!(
            texts.text_of("Z", "run-9", "kitchen"),
            Some("Every Sunday we bake.")
        );
        assert_eq!(texts.text_of("Z", "run-9", "3"), None);
        // With one study in the results, such a run is that study's.
        let mut one = PassageTexts::shared(&[]);
        one.add_study("pilot", [("p1".into(), "The baker made bread.".into())]);
        assert_eq!(one.study_of("Z", "run-9"), Some("pilot"));
        assert_eq!(
            one.text_of("Z", "run-9", "p1"),
            Some("The baker made bread.")
        );
    }

    #[test]
    fn the_same_text_is_one_passage_another_text_another() {
        let texts = texts();
        let id = |p: &str, r: &str| own_text_id("p1", texts.text_of(p, r, "p1").unwrap());
        assert_eq!(id("A", "run-1"), id("B", "run-3"));
        assert_ne!(id("A", "run-1"), id("A", "run-2"));
    }

    #[test]
    fn clashes_name_each_text_and_its_studies() {
        let clashes = texts().clashes();
        assert_eq!(clashes.len(), 1, "{clashes:?}");
        assert!(
            clashes[0].starts_with("passage \"p1\" has 3 different texts"),
            "{}",
            clashes[0]
        );
        assert!(clashes[0].contains("pilot, third"), "{}", clashes[0]);
        assert!(clashes[0].contains("built in"), "{}", clashes[0]);
    }
}
