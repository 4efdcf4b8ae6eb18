//! What the analyses run on: cloze norms (people's next words per context) and the word samples
//! of each system, from ../shared/provo or from files a user drops on the Analysis page.

use std::collections::BTreeMap;
use std::path::Path;

use super::passage_texts::{OWN_TEXTS_FROM, PassageTexts, own_text_id};
use crate::data::provo::{
    ContextKey, ProvoContext, ProvoError, SystemSamples, parse_jsonl, parse_sample_file,
    read_continuations, read_counted_samples, read_norms, read_word_lists,
};
use crate::data::{
    DataError, ResponseRecord, import_long_csv, import_long_json, import_provo_norms,
};

/// One participant's answers: context → their normalised word (the first answer per trial).
pub type Answers = BTreeMap<ContextKey, String>;

/// Where an answer belongs: a context of the norms (Provo's by number), or one of a passage's
/// own text (created on first use).
enum Place {
    Norms(ContextKey),
    Own {
        key: ContextKey,
        context: String,
        original: String,
    },
}

/// Norms and the systems compared with them.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    pub norms: Vec<ProvoContext>,
    /// (system name, its samples per context), in the order shown.
    pub systems: Vec<SystemSamples>,
    /// Participants of the app's exports, whose answers are merged into `norms`.
    pub participants: BTreeMap<String, Answers>,
    /// Participants of study results (JATOS's export, a study server's bundles) with their
    /// state; their answers are in `participants`.
    pub runs: Vec<crate::data::participant_run::ParticipantRun>,
    /// What was left out of the data and why, one sentence each, to show beside the results.
    pub notes: Vec<String>,
    /// Models' surprisal of each context's target word, in the order given.
    pub predictors: Vec<crate::analysis::predictors::ModelPredictors>,
}

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error(transparent)]
    Provo(#[from] ProvoError),
    #[error(transparent)]
    Data(#[from] DataError),
    #[error("no cloze norms: add the Provo norms (the OSF CSV, or provo_cloze.jsonl)")]
    NoNorms,
}

impl Dataset {
    /// Every word in the data: people's and every system's (what semantic TVD embeds).
    pub fn words(&self) -> std::collections::BTreeSet<&str> {
        let people = self.norms.iter().flat_map(|c| c.human.keys());
        let systems = self
            .systems
            .iter()
            .flat_map(|(_, samples)| samples.values().flat_map(|s| s.words.keys()));
        people.chain(systems).map(String::as_str).collect()
    }

    /// The norms and the paper's published samples in a directory laid out like ../shared/provo.
    pub fn from_shared_dir(dir: &Path) -> Result<Self, ProvoError> {
        let norms = read_norms(dir)?;
        let chatgpt = dir.join("samples_chatgpt_words.jsonl");
        Ok(Self {
            norms,
            systems: vec![
                (
                    "GPT-2".into(),
                    read_counted_samples(&dir.join("samples_gpt2_ancestral_n1000.jsonl"))?,
                ),
                (
                    "GPT-2 (T=0.5)".into(),
                    read_counted_samples(&dir.join("samples_gpt2_temp0.5_n40.jsonl"))?,
                ),
                (
                    "BLOOM".into(),
                    read_continuations(&dir.join("samples_bloom176b_raw_continuations.jsonl"))?,
                ),
                (
                    "ChatGPT".into(),
                    read_word_lists(&chatgpt, "single_prompt_temp1")?,
                ),
                (
                    "ChatGPT (list)".into(),
                    read_word_lists(&chatgpt, "list_prompt")?,
                ),
            ],
            ..Self::default()
        })
    }

    /// From files as a user gives them, each (name, text): norms as the OSF CSV/TSV or as
    /// JSON Lines with a `human` field, the app's exports (long CSV/TSV, long JSON or a JSON
    /// bundle: merged with [`Dataset::add_responses`], `texts` giving the texts of non-Provo
    /// passages), and any number of sample files (see [`parse_sample_file`]). Later norms files
    /// add contexts (a context given twice keeps the first). `more_responses` (read elsewhere,
    /// e.g. a study's results) are merged like the exports'. Empty files are noted and left out,
    /// and so are samples of contexts the data does not have (counted in the notes).
    pub fn from_files(
        files: &[(String, String)],
        texts: &PassageTexts,
        more_responses: &[ResponseRecord],
    ) -> Result<Self, DatasetError> {
        let mut norms: BTreeMap<ContextKey, ProvoContext> = BTreeMap::new();
        let mut systems = Vec::new();
        let mut responses = Vec::new();
        let mut notes = Vec::new();
        // (system, the file it came from), for the notes on contexts no passage has.
        let mut sample_files: Vec<(String, String)> = Vec::new();
        for (name, text) in files {
            let body = text.strip_prefix('\u{feff}').unwrap_or(text);
            if body.trim().is_empty() {
                notes.push(format!("{name}: empty, left out"));
                continue;
            }

            let first_line = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let head: String = body.chars().take(4000).collect();
            let json = first_line.trim_start().starts_with(['{', '[']);
            let contexts = if json
                && (head.contains("\"responses\"") || first_line.trim_start().starts_with('['))
            {
                responses.extend(import_long_json(name, body)?);
                continue;
            } else if json {
                if first_line.contains("\"human\"") {
                    parse_jsonl::<ProvoContext>(name, body)?
                } else {
                    let parsed = parse_sample_file(name, body)?;
                    sample_files.extend(
                        parsed
                            .iter()
                            .map(|(system, _)| (system.clone(), name.clone())),
                    );
                    systems.extend(parsed);
                    continue;
                }
            } else if !first_line.contains("Response_Count")
                && first_line
                    .split([',', '\t'])
                    .any(|c| c.trim() == "participant")
            {
                responses.extend(import_long_csv(name, body)?);
                continue;
            } else {
                let (osf, skipped) = import_provo_norms(name, body)?;
                if !skipped.is_empty() {
                    notes.push(format!(
                        "{name}: {} rows left out (empty responses, zero counts, or responses \
                         with no letter or digit)",
                        skipped.len()
                    ));
                }
                osf.contexts.into_values().collect()
            };
            for c in contexts {
                norms.entry(c.key()).or_insert(c);
            }
        }
        responses.extend_from_slice(more_responses);
        let mut data = Self {
            norms: norms.into_values().collect(),
            systems,
            notes,
            ..Self::default()
        };
        data.add_responses(&responses, texts);
        if data.norms.is_empty() {
            return Err(DatasetError::NoNorms);
        }
        data.note_samples_without_context(&sample_files);
        Ok(data)
    }

    /// Notes, per sample file, the contexts it names that no passage of the data has (a
    /// samples file of another study, or of passages whose text has changed): they are left
    /// out of every comparison.
    fn note_samples_without_context(&mut self, sample_files: &[(String, String)]) {
        let known: std::collections::BTreeSet<ContextKey> =
            self.norms.iter().map(ProvoContext::key).collect();
        for (system, samples) in &self.systems {
            let unknown: Vec<&ContextKey> = samples.keys().filter(|k| !known.contains(k)).collect();
            if unknown.is_empty() {
                continue;
            }
            let file = sample_files
                .iter()
                .find(|(s, _)| s == system)
                .map_or(system.as_str(), |(_, f)| f.as_str());
            let own = unknown
                .iter()
                .filter(|k| k.text_id >= OWN_TEXTS_FROM)
                .count();
            let shown: Vec<String> = unknown.iter().take(3).map(|k| k.to_string()).collect();
            let more = if unknown.len() > 3 { ", …" } else { "" };
            self.notes.push(format!(
                "{file}: {} of its {} contexts ({}{more}) are in no passage of these data{}: \
                 left out",
                unknown.len(),
                samples.len(),
                shown.join(", "),
                if own > 0 {
                    " (samples of another study's passages, or of a passage whose text has changed)"
                } else {
                    ""
                }
            ));
        }
    }

    /// Merges the app's exported responses into the norms: each participant's first answer to
    /// a context counts once (however often it is imported), practice trials and empty answers
    /// are left out. A response belongs to the text its run saw (see [`PassageTexts`]): its
    /// study's own passage of that id, else a shared one, which then get their own contexts
    /// (keyed by [`own_text_id`]); a study's copy of a Provo text, or a number with no text
    /// given, belongs to the Provo context of that number. Responses on passages of unknown
    /// text are left out and counted in [`Dataset::notes`].
    pub fn add_responses(&mut self, records: &[ResponseRecord], texts: &PassageTexts) {
        let mut index: BTreeMap<ContextKey, usize> = self
            .norms
            .iter()
            .enumerate()
            .map(|(i, c)| (c.key(), i))
            .collect();
        let (mut unplaced, mut repeated) = (0usize, 0usize);
        for r in records.iter().filter(|r| !r.practice) {
            let word = if r.normalized.is_empty() {
                crate::text::words::normalize(&r.response)
            } else {
                r.normalized.clone()
            };
            if word.is_empty() {
                continue;
            }
            let key = match self.place(&index, texts, r) {
                Some(Place::Norms(key)) => key,
                Some(Place::Own {
                    key,
                    context,
                    original,
                }) => {
                    if let std::collections::btree_map::Entry::Vacant(slot) = index.entry(key) {
                        slot.insert(self.norms.len());
                        self.norms.push(ProvoContext {
                            text_id: key.text_id,
                            word_num: key.word_num,
                            context,
                            original,
                            human: BTreeMap::new(),
                            gpt2_logprob_human: None,
                            gpt2_logprob_original: None,
                        });
                    }
                    key
                }
                None => {
                    unplaced += 1;
                    continue;
                }
            };
            let answers = self.participants.entry(r.participant.clone()).or_default();
            if answers.contains_key(&key) {
                repeated += 1;
                continue;
            }
            answers.insert(key, word.clone());
            if let Some(&i) = index.get(&key) {
                *self.norms[i].human.entry(word).or_default() += 1;
            }
        }
        self.norms.sort_by_key(|c| c.key());
        if unplaced > 0 {
            self.notes.push(format!(
                "{unplaced} responses were left out: their passage is neither in the norms nor a passage clozelab knows, so their context is unknown"
            ));
        }
        if repeated > 0 {
            self.notes.push(format!(
                "{repeated} responses repeated a participant's earlier answer to the same context and were counted once"
            ));
        }
    }

    /// The context `response` belongs to by the rules of [`Dataset::add_responses`] (`texts`
    /// as given to it), whether or not the dataset holds it (a practice trial's is not);
    /// `None` when its passage's text is unknown.
    pub fn key_of(&self, response: &ResponseRecord, texts: &PassageTexts) -> Option<ContextKey> {
        match Self::place_in(&|k| self.context(k), texts, response)? {
            Place::Norms(key) | Place::Own { key, .. } => Some(key),
        }
    }

    /// The context `response` was placed in by [`Dataset::add_responses`] (`texts` as given
    /// to it); `None` when the dataset has none.
    pub fn context_of(
        &self,
        response: &ResponseRecord,
        texts: &PassageTexts,
    ) -> Option<&ProvoContext> {
        self.context(self.key_of(response, texts)?)
    }

    /// The dataset's context of `key`, if it holds one.
    pub fn context(&self, key: ContextKey) -> Option<&ProvoContext> {
        self.norms
            .binary_search_by_key(&key, ProvoContext::key)
            .ok()
            .map(|i| &self.norms[i])
    }

    fn place(
        &self,
        index: &BTreeMap<ContextKey, usize>,
        texts: &PassageTexts,
        r: &ResponseRecord,
    ) -> Option<Place> {
        Self::place_in(&|k| index.get(&k).map(|&i| &self.norms[i]), texts, r)
    }

    /// Where `r` belongs (see [`Dataset::add_responses`]); `norms(key)` finds a context of
    /// the norms.
    fn place_in<'a>(
        norms: &dyn Fn(ContextKey) -> Option<&'a ProvoContext>,
        texts: &PassageTexts,
        r: &ResponseRecord,
    ) -> Option<Place> {
        let provo = r
            .passage
            .parse::<u32>()
            .ok()
            .filter(|id| *id < OWN_TEXTS_FROM)
            .map(|id| ContextKey::new(id, r.position))
            .filter(|k| norms(*k).is_some());
        let Some(text) = texts.text_of(&r.participant, &r.run, &r.passage) else {
            return provo.map(Place::Norms);
        };
        let words: Vec<&str> = text.split_whitespace().collect();
        let position = r.position as usize;
        if position < 2 || position > words.len() {
            return None;
        }
        let context = words[..position - 1].join(" ");
        let original = words[position - 1].to_string();
        // A study's copy of a Provo text is that Provo text; any other text under its number
        // is a passage of its own.
        if let Some(key) = provo
            && norms(key).is_some_and(|c| {
                c.original == original
                    && c.context.split_whitespace().eq(context.split_whitespace())
            })
        {
            return Some(Place::Norms(key));
        }
        Some(Place::Own {
            key: ContextKey::new(own_text_id(&r.passage, text), r.position),
            context,
            original,
        })
    }
}
