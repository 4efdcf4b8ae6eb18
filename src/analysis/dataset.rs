//! What the analyses run on: cloze norms (people's next words per context) and the word samples
//! of each system, from ../shared/provo or from files a user drops on the Analysis page.

use std::collections::BTreeMap;
use std::path::Path;

use crate::data::provo::{
    ContextKey, ProvoContext, ProvoError, SystemSamples, parse_jsonl, parse_sample_file,
    read_continuations, read_counted_samples, read_norms, read_word_lists,
};
use crate::data::{
    DataError, ResponseRecord, import_long_csv, import_long_json, import_provo_norms,
};

/// One participant's answers: context → their normalised word (the first answer per trial).
pub type Answers = BTreeMap<ContextKey, String>;

/// Text ids of passages that are not Provo texts (the app's built-in passages): the k-th
/// passage given to [`Dataset::add_responses`] (from 0) is text `OTHER_PASSAGES_FROM + k`, far
/// above Provo's 1–55.
pub const OTHER_PASSAGES_FROM: u32 = 1001;

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
    /// bundle: merged with [`Dataset::add_responses`], `passages` giving the texts of non-Provo
    /// passages), and any number of sample files (see [`parse_sample_file`]). Later norms files
    /// add contexts (a context given twice keeps the first). `more_responses` (read elsewhere,
    /// e.g. a study's results) are merged like the exports'. Empty files are noted and left out.
    pub fn from_files(
        files: &[(String, String)],
        passages: &[(String, String)],
        more_responses: &[ResponseRecord],
    ) -> Result<Self, DatasetError> {
        let mut norms: BTreeMap<ContextKey, ProvoContext> = BTreeMap::new();
        let mut systems = Vec::new();
        let mut responses = Vec::new();
        let mut notes = Vec::new();
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
                    systems.extend(parse_sample_file(name, body)?);
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
        data.add_responses(&responses, passages);
        if data.norms.is_empty() {
            return Err(DatasetError::NoNorms);
        }
        Ok(data)
    }

    /// Merges the app's exported responses into the norms: each participant's first answer to
    /// a context counts once (however often it is imported), practice trials and empty answers
    /// are left out. A response belongs to a Provo context when its passage id is the norms'
    /// text id; otherwise to the passage of that id among `passages` (id, text) — built in or
    /// the study's — which then gets its own contexts. Responses on passages of unknown text
    /// are left out and counted in [`Dataset::notes`].
    pub fn add_responses(&mut self, records: &[ResponseRecord], passages: &[(String, String)]) {
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
            let provo = r
                .passage
                .parse::<u32>()
                .ok()
                .map(|id| ContextKey::new(id, r.position));
            let key = match provo.filter(|k| index.contains_key(k)) {
                Some(k) => k,
                None => {
                    let Some(k) = self.passage_context(&mut index, passages, r) else {
                        unplaced += 1;
                        continue;
                    };
                    k
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

    /// The context an answer to `passage` at `position` was placed in by
    /// [`Dataset::add_responses`] (`passages` as given to it); `None` when the dataset has none.
    pub fn context_of(
        &self,
        passage: &str,
        position: u32,
        passages: &[(String, String)],
    ) -> Option<&ProvoContext> {
        let provo = passage
            .parse::<u32>()
            .ok()
            .map(|id| ContextKey::new(id, position));
        let other = passages
            .iter()
            .position(|(id, _)| id == passage)
            .and_then(|k| OTHER_PASSAGES_FROM.checked_add(u32::try_from(k).ok()?))
            .map(|id| ContextKey::new(id, position));
        let find = |key: ContextKey| {
            self.norms
                .binary_search_by_key(&key, ProvoContext::key)
                .ok()
                .map(|i| &self.norms[i])
        };
        provo.and_then(find).or_else(|| other.and_then(find))
    }

    /// The context of a response on a non-Provo passage, created (without answers yet) on
    /// first use; `None` when the passage or the position is unknown.
    fn passage_context(
        &mut self,
        index: &mut BTreeMap<ContextKey, usize>,
        passages: &[(String, String)],
        r: &ResponseRecord,
    ) -> Option<ContextKey> {
        let k = passages.iter().position(|(id, _)| id == &r.passage)?;
        let words: Vec<&str> = passages[k].1.split_whitespace().collect();
        let position = r.position as usize;
        if position < 2 || position > words.len() {
            return None;
        }
        let key = ContextKey::new(
            OTHER_PASSAGES_FROM.checked_add(u32::try_from(k).ok()?)?,
            r.position,
        );
        if let std::collections::btree_map::Entry::Vacant(slot) = index.entry(key) {
            slot.insert(self.norms.len());
            self.norms.push(ProvoContext {
                text_id: key.text_id,
                word_num: key.word_num,
                context: words[..position - 1].join(" "),
                original: words[position - 1].to_string(),
                human: BTreeMap::new(),
                gpt2_logprob_human: None,
                gpt2_logprob_original: None,
            });
        }
        Some(key)
    }
}
