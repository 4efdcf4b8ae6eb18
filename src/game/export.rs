//! What a study produces: the long format, the Provo-compatible aggregate, a JSON bundle with a
//! manifest, and the merge of several participants' exports into human distributions.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::passages::Passage;
use super::study::{Plan, StudyConfig};
use crate::data::{DataError, Delimiter, ResponseRecord, write_delimited};

/// Everything needed to interpret an export later.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub app: String,
    pub app_version: String,
    pub model_name: String,
    /// SHA-256 of the weights file, hex.
    pub weight_sha256: String,
    pub tokenizer: String,
    pub backend: String,
    pub adapter: String,
    pub participant: String,
    pub order_seed: u64,
    pub sampling_seed: u64,
    pub study: StudyConfig,
    pub url_ids: BTreeMap<String, String>,
    pub exported_at: String,
}

/// A JSON export: manifest and responses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportBundle {
    pub manifest: Manifest,
    pub responses: Vec<ResponseRecord>,
}

/// The model and device part of a manifest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelInfo {
    pub model_name: String,
    pub weight_sha256: String,
    pub tokenizer: String,
    pub backend: String,
    pub adapter: String,
}

/// Hex SHA-256 of some bytes (the weights' fingerprint in the manifest).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl Manifest {
    pub fn new(model: &ModelInfo, study: &StudyConfig, plan: &Plan, sampling_seed: u64, exported_at: &str) -> Self {
        Self {
            app: "clozelab".into(),
            app_version: env!("CARGO_PKG_VERSION").into(),
            model_name: model.model_name.clone(),
            weight_sha256: model.weight_sha256.clone(),
            tokenizer: model.tokenizer.clone(),
            backend: model.backend.clone(),
            adapter: model.adapter.clone(),
            participant: plan.participant.clone(),
            order_seed: plan.order_seed,
            sampling_seed,
            study: study.clone(),
            url_ids: plan.url_ids.clone(),
            exported_at: exported_at.into(),
        }
    }
}

/// Human distributions per (passage, position): normalised response → count, from any number
/// of exports; a participant's answer to one trial counts once however often it was exported;
/// practice trials are left out.
pub fn merge_responses<'a>(exports: impl IntoIterator<Item = &'a [ResponseRecord]>) -> BTreeMap<(String, u32), BTreeMap<String, u32>> {
    let mut seen = BTreeSet::new();
    let mut out: BTreeMap<(String, u32), BTreeMap<String, u32>> = BTreeMap::new();
    for r in exports.into_iter().flatten() {
        if r.practice || r.normalized.is_empty() || !seen.insert((r.participant.clone(), r.passage.clone(), r.position)) {
            continue;
        }
        *out.entry((r.passage.clone(), r.position)).or_default().entry(r.normalized.clone()).or_default() += 1;
    }
    out
}

/// The Provo-compatible aggregate (Text_ID, Text, Word_Number, Word, Response, Response_Count),
/// one row per context and distinct normalised response.
pub fn provo_aggregate_csv(records: &[ResponseRecord], passages: &[Passage], delimiter: Delimiter) -> String {
    let by_id: BTreeMap<&str, &Passage> = passages.iter().map(|p| (p.id.as_str(), p)).collect();
    let merged = merge_responses([records]);
    let rows = merged.into_iter().flat_map(|((passage, position), responses)| {
        let p = by_id.get(passage.as_str());
        let text = p.map(|p| p.text.clone()).unwrap_or_default();
        let word = p.and_then(|p| p.words().get(position as usize - 1).map(|w| w.to_string())).unwrap_or_default();
        responses.into_iter().map(move |(resp, n)| vec![passage.clone(), text.clone(), position.to_string(), word.clone(), resp, n.to_string()])
    });
    write_delimited(&["Text_ID", "Text", "Word_Number", "Word", "Response", "Response_Count"], rows, delimiter)
}

/// Reads a JSON export (bundle with manifest, or a bare array of responses).
pub fn import_bundle(file: &str, text: &str) -> Result<Vec<ResponseRecord>, DataError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_json::from_str::<ExportBundle>(text) {
        Ok(b) => Ok(b.responses),
        Err(_) => crate::data::import_long_json(file, text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(p: &str, passage: &str, pos: u32, resp: &str, practice: bool) -> ResponseRecord {
        ResponseRecord {
            participant: p.into(),
            passage: passage.into(),
            position: pos,
            response: resp.into(),
            response_time_ms: Some(1.0),
            timestamp: "t".into(),
            normalized: crate::words::normalize(resp),
            first_keystroke_ms: None,
            practice,
        }
    }

    #[test]
    fn merge_counts_each_trial_once_and_skips_practice() {
        let a = vec![rec("p1", "x", 2, "Cat", false), rec("p1", "x", 3, "sat", false), rec("p1", "g", 2, "a", true)];
        let b = vec![rec("p2", "x", 2, "cat", false), rec("p1", "x", 2, "Cat", false)];
        let m = merge_responses([a.as_slice(), b.as_slice()]);
        assert_eq!(m[&("x".to_string(), 2)]["cat"], 2);
        assert!(!m.contains_key(&("g".to_string(), 2)));
        let passages = vec![Passage { id: "x".into(), title: "X".into(), text: "The cat sat".into() }];
        let csv = provo_aggregate_csv(&a, &passages, Delimiter::Comma);
        assert_eq!(csv.lines().nth(1), Some("x,The cat sat,2,cat,cat,1"));
        let (norms_like, _) = crate::data::parse_delimited("agg.csv", &csv, Delimiter::Comma).map(|r| (r, ())).unwrap();
        assert_eq!(norms_like.len(), 3, "header + 2 rows");
    }

    #[test]
    fn bundle_round_trip_and_hash() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        let study = StudyConfig::default_play();
        let plan = study.plan("p1", &BTreeMap::new()).unwrap();
        let bundle = ExportBundle { manifest: Manifest::new(&ModelInfo::default(), &study, &plan, 3, "now"), responses: vec![rec("p1", "x", 2, "<img src=x onerror=alert(1)>", false)] };
        let text = serde_json::to_string(&bundle).unwrap();
        assert_eq!(import_bundle("b.json", &text).unwrap(), bundle.responses);
        assert!(import_bundle("b.json", "{nope").is_err());
    }
}
