//! One participant beside the models: on the contexts they answered, how often they named the
//! word that followed, how probable a system found their words, how often they gave the other
//! people's majority answer, and where they rank among all participants — with the same figures
//! for the system's most probable word and for the others' majority word (the oracle).
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
    #[error("no system {0:?} in the data")]
    UnknownSystem(String),
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
    /// Mean probability the system gave the answer: its estimated word distribution, 0 for a
    /// word it never produced. `None` where the system has no samples for these contexts.
    pub system_prob: Option<f64>,
    /// Mean share of the other people who gave the same answer.
    pub others_share: f64,
    /// Share of answers that were a most frequent answer of the others (ties all count).
    pub majority_share: f64,
    /// Where this top-1 accuracy ranks among all participants, 1 = best (ties share a rank).
    pub rank: usize,
}

/// A participant, the system's top word and the oracle on the participant's contexts, and the
/// accuracy histogram of all participants with the participant and the system marked.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParticipantReport {
    pub participant: String,
    pub system: String,
    /// Participants ranked (each on their own contexts).
    pub participants: usize,
    /// The participant, the system (absent without samples on these contexts), the oracle.
    pub scores: Vec<Score>,
    pub histogram: Figure,
}

impl ParticipantReport {
    /// The scores as CSV.
    pub fn csv(&self) -> String {
        scores_csv(&self.scores, self.participants)
    }
}

/// Scores as CSV, with the number of participants ranked.
pub fn scores_csv(scores: &[Score], participants: usize) -> String {
    let f = |x: f64| format!("{x:.6}");
    crate::data::write_delimited(
        &[
            "predictor",
            "contexts",
            "top1_accuracy",
            "system_prob",
            "others_share",
            "majority_share",
            "rank",
            "participants",
        ],
        scores.iter().map(|s| {
            vec![
                s.name.clone(),
                s.contexts.to_string(),
                f(s.top1_accuracy),
                s.system_prob.map(f).unwrap_or_default(),
                f(s.others_share),
                f(s.majority_share),
                s.rank.to_string(),
                participants.to_string(),
            ]
        }),
        crate::data::Delimiter::Comma,
    )
}

/// A context as one participant sees it: the others' answers and the word that followed.
struct Seen<'a> {
    key: ContextKey,
    others: WordDistribution,
    original: String,
    samples: Option<&'a Samples>,
}

impl Seen<'_> {
    fn system(&self) -> Option<WordDistribution> {
        let s = self.samples?;
        WordDistribution::from_counts(s.words.iter().map(|(w, c)| (w.as_str(), *c))).ok()
    }

    fn is_majority(&self, word: &str) -> bool {
        let top = self.others.mode().1;
        (self.others.prob(word) - top).abs() < 1e-12
    }
}

/// The contexts `answers` covers that someone else answered too.
fn seen<'a>(
    data: &'a Dataset,
    answers: &Answers,
    samples: Option<&'a BTreeMap<ContextKey, Samples>>,
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
                samples: samples.and_then(|s| s.get(&key)),
            })
        })
        .collect()
}

/// Scores `answer(context)` over the contexts (those it answers).
fn score(name: &str, contexts: &[Seen], answer: impl Fn(&Seen) -> Option<String>) -> Score {
    let (mut hits, mut system, mut share, mut majority) = (vec![], vec![], vec![], vec![]);
    for c in contexts {
        let Some(word) = answer(c) else { continue };
        hits.push(f64::from(u8::from(word == c.original)));
        if let Some(d) = c.system() {
            system.push(d.prob(&word));
        }
        share.push(c.others.prob(&word));
        majority.push(f64::from(u8::from(c.is_majority(&word))));
    }
    Score {
        name: name.to_string(),
        contexts: hits.len(),
        top1_accuracy: mean(&hits).unwrap_or(0.0),
        system_prob: mean(&system),
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
            let contexts = seen(data, answers, None);
            let s = score(id, &contexts, |c| answers.get(&c.key).cloned());
            (s.contexts > 0).then(|| (id.clone(), s.contexts, s.top1_accuracy))
        })
        .collect()
}

/// 1 + the number of participants strictly more accurate.
fn rank(accuracy: f64, all: &[(String, usize, f64)]) -> usize {
    1 + all.iter().filter(|(_, _, a)| *a > accuracy + 1e-12).count()
}

/// The report for `participant` against `system` (a name among the dataset's systems).
pub fn report(
    data: &Dataset,
    participant: &str,
    system: &str,
) -> Result<ParticipantReport, ParticipantError> {
    report_among(data, participant, system, &accuracies(data))
}

/// [`report`] with every participant's accuracy already computed (`everyone`).
fn report_among(
    data: &Dataset,
    participant: &str,
    system: &str,
    everyone: &[(String, usize, f64)],
) -> Result<ParticipantReport, ParticipantError> {
    if data.participants.is_empty() {
        return Err(ParticipantError::NoParticipants);
    }
    let answers = data
        .participants
        .get(participant)
        .ok_or_else(|| ParticipantError::UnknownParticipant(participant.to_string()))?;
    let samples = &data
        .systems
        .iter()
        .find(|(name, _)| name == system)
        .ok_or_else(|| ParticipantError::UnknownSystem(system.to_string()))?
        .1;
    let contexts = seen(data, answers, Some(samples));
    if contexts.is_empty() {
        return Err(ParticipantError::NothingToCompare(participant.to_string()));
    }
    let own = score(participant, &contexts, |c| answers.get(&c.key).cloned());
    let model = Some(score(system, &contexts, |c| {
        c.system().map(|d| d.mode().0.to_string())
    }))
    .filter(|m| m.contexts > 0);
    let oracle = score("Oracle (others' majority)", &contexts, |c| {
        Some(c.others.mode().0.to_string())
    });
    // The histogram marks the participant and the system (when it has samples here).
    let marks: Vec<(String, f64)> = std::iter::once(&own)
        .chain(&model)
        .map(|s| (s.name.clone(), s.top1_accuracy))
        .collect();
    let mut scores: Vec<Score> = std::iter::once(own).chain(model).chain([oracle]).collect();
    for s in &mut scores {
        s.rank = rank(s.top1_accuracy, everyone);
    }
    Ok(ParticipantReport {
        participant: participant.to_string(),
        system: system.to_string(),
        participants: everyone.len(),
        histogram: participant_histogram(everyone, &marks),
        scores,
    })
}

/// Every participant's scores against `system` (for `clozelab figures`' participants.csv).
pub fn every_participant(data: &Dataset, system: &str) -> Vec<ParticipantReport> {
    let everyone = accuracies(data);
    data.participants
        .keys()
        .filter_map(|id| report_among(data, id, system, &everyone).ok())
        .collect()
}
