//! One participant beside the models: on the contexts they answered, how often they named the
//! word that followed, how probable each system found their words, how often they gave the other
//! people's majority answer, and where they rank among all participants — with the same figures
//! for each system's most probable word and for the others' majority word (the oracle).
//!
//! "The others" are everyone else who answered the context: the norms' people and the other
//! participants (the participant's own answer, merged into the norms by
//! [`Dataset::add_responses`], is taken out again). Contexts nobody else answered are left out:
//! there is no one to compare with.

use std::collections::BTreeMap;

use super::dataset::{Answers, Dataset};
use super::figures::{Figure, participant_histogram};
use super::metrics::{WordDistribution, mean};
use crate::data::provo::{ContextKey, Samples};
use crate::text::words::normalize;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ParticipantError {
    #[error(
        "no participants: add the app's exports (long CSV/JSON or JSON bundles) or your own answers"
    )]
    NoParticipants,
    #[error("no participant {0:?} in the data")]
    UnknownParticipant(String),
    #[error("participant {0:?} answered no context that someone else answered too")]
    NothingToCompare(String),
}

/// One predictor's figures on a participant's contexts.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Score {
    /// The participant's id, the system's name, or "Oracle (others' majority)".
    pub name: String,
    pub contexts: usize,
    /// Share of answers that were the word that followed in the text (normalised).
    pub top1_accuracy: f64,
    /// Per system of the report (in its order): the mean probability the system gave the
    /// answer, by its estimated word distribution, 0 for a word it never produced. `None` where
    /// that system has no samples for these contexts.
    pub system_probs: Vec<Option<f64>>,
    /// Mean share of the other people who gave the same answer.
    pub others_share: f64,
    /// Share of answers that were a most frequent answer of the others (ties all count).
    pub majority_share: f64,
    /// Where this top-1 accuracy ranks among all participants, 1 = best (ties share a rank).
    pub rank: usize,
}

/// A participant, every system's top word and the oracle on the participant's contexts, and the
/// accuracy histogram of all participants with the participant and the systems marked.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParticipantReport {
    pub participant: String,
    /// The data's systems, the order of each score's `system_probs`.
    pub systems: Vec<String>,
    /// Participants ranked (each on their own contexts).
    pub participants: usize,
    /// The participant, each system with samples on these contexts, the oracle.
    pub scores: Vec<Score>,
    pub histogram: Figure,
}

impl ParticipantReport {
    /// The scores as CSV (see [`scores_csv`]).
    pub fn csv(&self) -> String {
        scores_csv(&self.systems, &self.scores, self.participants)
    }
}

/// Scores as tidy CSV: a row per predictor and system, `system_prob` being how probable that
/// system found the predictor's answers (one row with an empty `system` when there is none),
/// with the number of participants ranked. Systems are values, not column names, so any number
/// of them (with any name) reads into R or pandas alike.
pub fn scores_csv(systems: &[String], scores: &[Score], participants: usize) -> String {
    let f = |x: f64| format!("{x:.6}");
    let columns: Vec<(String, Option<usize>)> = if systems.is_empty() {
        vec![(String::new(), None)]
    } else {
        systems.iter().cloned().zip((0..).map(Some)).collect()
    };
    crate::data::write_delimited(
        &[
            "predictor",
            "system",
            "contexts",
            "top1_accuracy",
            "system_prob",
            "others_share",
            "majority_share",
            "rank",
            "participants",
        ],
        scores.iter().flat_map(|s| {
            columns.iter().map(move |(system, i)| {
                vec![
                    s.name.clone(),
                    system.clone(),
                    s.contexts.to_string(),
                    f(s.top1_accuracy),
                    i.and_then(|i| s.system_probs.get(i).copied().flatten())
                        .map(f)
                        .unwrap_or_default(),
                    f(s.others_share),
                    f(s.majority_share),
                    s.rank.to_string(),
                    participants.to_string(),
                ]
            })
        }),
        crate::data::Delimiter::Comma,
    )
}

/// A context as one participant sees it: the others' answers and the word that followed.
struct Seen<'a> {
    key: ContextKey,
    others: WordDistribution,
    original: String,
    /// Each system's samples of this context, in the data's order of systems.
    samples: Vec<Option<&'a Samples>>,
}

impl Seen<'_> {
    fn system(&self, i: usize) -> Option<WordDistribution> {
        let s = self.samples.get(i).copied().flatten()?;
        WordDistribution::from_counts(s.words.iter().map(|(w, c)| (w.as_str(), *c))).ok()
    }

    fn is_majority(&self, word: &str) -> bool {
        let top = self.others.mode().1;
        (self.others.prob(word) - top).abs() < 1e-12
    }
}

/// The contexts `answers` covers that someone else answered too, with `systems`' samples.
fn seen<'a>(
    data: &'a Dataset,
    answers: &Answers,
    systems: &[&'a BTreeMap<ContextKey, Samples>],
) -> Vec<Seen<'a>> {
    data.norms
        .iter()
        .filter_map(|c| {
            let key = c.key();
            let own = answers.get(&key)?;
            let others = c.human.iter().map(|(w, &n)| {
                let n = if w == own { n.saturating_sub(1) } else { n };
                (w.as_str(), f64::from(n))
            });
            Some(Seen {
                key,
                others: WordDistribution::from_counts(others).ok()?,
                original: normalize(&c.original),
                samples: systems.iter().map(|s| s.get(&key)).collect(),
            })
        })
        .collect()
}

/// Scores `answer(context)` over the contexts (those it answers), with the probability each of
/// `systems` systems gives the answers.
fn score(
    name: &str,
    contexts: &[Seen],
    systems: usize,
    answer: impl Fn(&Seen) -> Option<String>,
) -> Score {
    let (mut hits, mut share, mut majority) = (vec![], vec![], vec![]);
    let mut probs = vec![vec![]; systems];
    for c in contexts {
        let Some(word) = answer(c) else { continue };
        hits.push(f64::from(u8::from(word == c.original)));
        for (i, p) in probs.iter_mut().enumerate() {
            if let Some(d) = c.system(i) {
                p.push(d.prob(&word));
            }
        }
        share.push(c.others.prob(&word));
        majority.push(f64::from(u8::from(c.is_majority(&word))));
    }
    Score {
        name: name.to_string(),
        contexts: hits.len(),
        top1_accuracy: mean(&hits).unwrap_or(0.0),
        system_probs: probs.iter().map(|p| mean(p)).collect(),
        others_share: mean(&share).unwrap_or(0.0),
        majority_share: mean(&majority).unwrap_or(0.0),
        rank: 0,
    }
}

/// Top-1 accuracy of every participant on their own contexts (those someone else answered).
pub fn accuracies(data: &Dataset) -> Vec<(String, usize, f64)> {
    data.participants
        .iter()
        .filter_map(|(id, answers)| {
            let contexts = seen(data, answers, &[]);
            let s = score(id, &contexts, 0, |c| answers.get(&c.key).cloned());
            (s.contexts > 0).then(|| (id.clone(), s.contexts, s.top1_accuracy))
        })
        .collect()
}

/// 1 + the number of participants strictly more accurate.
fn rank(accuracy: f64, all: &[(String, usize, f64)]) -> usize {
    1 + all.iter().filter(|(_, _, a)| *a > accuracy + 1e-12).count()
}

/// The report for `participant` against every system of the data.
pub fn report(data: &Dataset, participant: &str) -> Result<ParticipantReport, ParticipantError> {
    report_among(data, participant, &accuracies(data))
}

/// [`report`] with every participant's accuracy already computed (`everyone`).
fn report_among(
    data: &Dataset,
    participant: &str,
    everyone: &[(String, usize, f64)],
) -> Result<ParticipantReport, ParticipantError> {
    if data.participants.is_empty() {
        return Err(ParticipantError::NoParticipants);
    }
    let answers = data
        .participants
        .get(participant)
        .ok_or_else(|| ParticipantError::UnknownParticipant(participant.to_string()))?;
    let samples: Vec<_> = data.systems.iter().map(|(_, s)| s).collect();
    let n = samples.len();
    let contexts = seen(data, answers, &samples);
    if contexts.is_empty() {
        return Err(ParticipantError::NothingToCompare(participant.to_string()));
    }
    let own = score(participant, &contexts, n, |c| answers.get(&c.key).cloned());
    let models: Vec<Score> = data
        .systems
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            score(name, &contexts, n, |c| {
                c.system(i).map(|d| d.mode().0.to_string())
            })
        })
        .filter(|m| m.contexts > 0)
        .collect();
    let oracle = score("Oracle (others' majority)", &contexts, n, |c| {
        Some(c.others.mode().0.to_string())
    });
    // The histogram marks the participant and each system with samples here.
    let marks: Vec<(String, f64)> = std::iter::once(&own)
        .chain(&models)
        .map(|s| (s.name.clone(), s.top1_accuracy))
        .collect();
    let mut scores: Vec<Score> = std::iter::once(own).chain(models).chain([oracle]).collect();
    for s in &mut scores {
        s.rank = rank(s.top1_accuracy, everyone);
    }
    Ok(ParticipantReport {
        participant: participant.to_string(),
        systems: data.systems.iter().map(|(name, _)| name.clone()).collect(),
        participants: everyone.len(),
        histogram: participant_histogram(everyone, &marks),
        scores,
    })
}

/// Every participant's scores against every system (for `clozelab figures`' participants.csv).
pub fn every_participant(data: &Dataset) -> Vec<ParticipantReport> {
    let everyone = accuracies(data);
    data.participants
        .keys()
        .filter_map(|id| report_among(data, id, &everyone).ok())
        .collect()
}
