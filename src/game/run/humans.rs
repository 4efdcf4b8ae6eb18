//! People's answers per context, from imported norms and exports: the one type the game's
//! feedback, score and analysis read human distributions from.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::metrics::WordDistribution;
use crate::data::{ClozeNorms, ResponseRecord};

/// (passage id, word position) → normalised response → count.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HumanCounts {
    contexts: BTreeMap<(String, u32), BTreeMap<String, u32>>,
    /// (participant, passage, position) already counted, so one trial counts once however
    /// often it is imported.
    trials: BTreeSet<(String, String, u32)>,
}

impl HumanCounts {
    /// Adds the counts of Provo-style norms (responses normalised as the game's are).
    pub fn add_norms(&mut self, norms: &ClozeNorms) {
        for context in norms.contexts.values() {
            let counts = self
                .contexts
                .entry((context.text_id.to_string(), context.word_num))
                .or_default();
            for (word, n) in &context.human {
                *counts.entry(word.clone()).or_default() += n;
            }
        }
    }

    /// Adds exported responses: practice trials and empty answers are left out, and a
    /// participant's answer to a trial counts once.
    pub fn add_responses<'a>(&mut self, records: impl IntoIterator<Item = &'a ResponseRecord>) {
        for r in records {
            if r.practice
                || r.normalized.is_empty()
                || !self
                    .trials
                    .insert((r.participant.clone(), r.passage.clone(), r.position))
            {
                continue;
            }
            *self
                .contexts
                .entry((r.passage.clone(), r.position))
                .or_default()
                .entry(r.normalized.clone())
                .or_default() += 1;
        }
    }

    /// Counts for one context.
    pub fn counts(&self, passage: &str, position: u32) -> Option<&BTreeMap<String, u32>> {
        self.contexts
            .get(&(passage.to_string(), position))
            .filter(|c| c.values().any(|&n| n > 0))
    }

    /// Responses counted for one context.
    pub fn total(&self, passage: &str, position: u32) -> u32 {
        self.counts(passage, position)
            .map_or(0, |c| c.values().sum())
    }

    /// The human word distribution of one context; `None` without answers.
    pub fn distribution(&self, passage: &str, position: u32) -> Option<WordDistribution> {
        let counts = self.counts(passage, position)?;
        WordDistribution::from_counts(counts.iter().map(|(w, &n)| (w.clone(), n as f64))).ok()
    }

    /// Every context with its counts.
    pub fn contexts(&self) -> impl Iterator<Item = (&(String, u32), &BTreeMap<String, u32>)> {
        self.contexts.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.contexts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::words::normalize;

    fn rec(participant: &str, position: u32, response: &str, practice: bool) -> ResponseRecord {
        ResponseRecord {
            participant: participant.into(),
            passage: "1".into(),
            position,
            response: response.into(),
            response_time_ms: None,
            timestamp: "t".into(),
            normalized: normalize(response),
            first_keystroke_ms: None,
            practice,
            run: String::new(),
        }
    }

    #[test]
    fn norms_and_exports_merge_into_one_count_per_trial() {
        let norms_csv = "Text_ID,Text,Word_Number,Word,Response,Response_Count\n1,The cat sat,2,cat,Cat,3\n1,The cat sat,2,cat,dog,1\n";
        let (norms, _) = crate::data::import_provo_norms("n.csv", norms_csv).unwrap();
        let mut humans = HumanCounts::default();
        humans.add_norms(&norms);
        let export = vec![
            rec("p1", 2, "cat", false),
            rec("p1", 2, "cat", false),
            rec("p2", 2, "Dog", false),
            rec("p3", 2, "bird", true),
        ];
        humans.add_responses(&export);
        humans.add_responses(&export[..1]);
        let counts = humans.counts("1", 2).unwrap();
        assert_eq!(counts.get("cat"), Some(&4), "3 from the norms + p1 once");
        assert_eq!(counts.get("dog"), Some(&2));
        assert_eq!(counts.get("bird"), None, "practice is left out");
        assert_eq!(humans.total("1", 2), 6);
        let dist = humans.distribution("1", 2).unwrap();
        assert!((dist.prob("cat") - 4.0 / 6.0).abs() < 1e-12);
        assert!(humans.distribution("1", 3).is_none() && humans.counts("y", 2).is_none());
    }
}
