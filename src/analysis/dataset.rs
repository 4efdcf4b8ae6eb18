//! What the analyses run on: cloze norms (people's next words per context) and the word samples
//! of each system, from ../shared/provo or from files a user drops on the Analysis page.

use std::collections::BTreeMap;
use std::path::Path;

use crate::data::provo::{
    ContextKey, ProvoContext, ProvoError, SystemSamples, norms_from_osf, parse_jsonl,
    parse_sample_file, read_continuations, read_counted_samples, read_norms, read_word_lists,
};
use crate::data::{DataError, import_provo_norms};

/// Norms and the systems compared with them.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    pub norms: Vec<ProvoContext>,
    /// (system name, its samples per context), in the order shown.
    pub systems: Vec<SystemSamples>,
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
        })
    }

    /// From files as a user gives them, each (name, text): norms as the OSF CSV/TSV or as
    /// JSON Lines with a `human` field, and any number of sample files (see
    /// [`parse_sample_file`]). Later norms files add contexts (a context given twice keeps the
    /// first).
    pub fn from_files(files: &[(String, String)]) -> Result<Self, DatasetError> {
        let mut norms: BTreeMap<ContextKey, ProvoContext> = BTreeMap::new();
        let mut systems = Vec::new();
        for (name, text) in files {
            let body = text.strip_prefix('\u{feff}').unwrap_or(text);
            let first_line = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let contexts = if first_line.trim_start().starts_with('{') {
                if first_line.contains("\"human\"") {
                    parse_jsonl::<ProvoContext>(name, body)?
                } else {
                    systems.extend(parse_sample_file(name, body)?);
                    continue;
                }
            } else {
                let (osf, _skipped) = import_provo_norms(name, body)?;
                norms_from_osf(&osf)
            };
            for c in contexts {
                norms.entry((c.text_id, c.word_num)).or_insert(c);
            }
        }
        if norms.is_empty() {
            return Err(DatasetError::NoNorms);
        }
        Ok(Self {
            norms: norms.into_values().collect(),
            systems,
        })
    }
}
