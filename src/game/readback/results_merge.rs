//! Bundles merged into runs, for the results reader ([`super::results`]): each answer once
//! per idempotency key (participant, run, passage, position; /round in the two-token game),
//! each participant's run with its plan, list, attention checks and state, withdrawals applied,
//! and every run whose data does not add up flagged with why (more answers than its plan, two
//! different answers under one key).

use std::collections::BTreeMap;

use serde_json::Value;

use super::jatos_export::{JatosState, JatosStudyRun, study_result_id};
use crate::data::participant_run::{ParticipantRun, RunState};
use crate::data::{DataError, ResponseRecord};
use crate::game::design::attention::{AttentionResult, tally};
use crate::game::design::lists::AssignedList;
use crate::game::design::passages::Passage;
use crate::game::design::run_scope::response_key_in;
use crate::game::run::export::Manifest;
use crate::game::tokens::records::TokenRecords;
use crate::game::tokens::top1::Top1Record;
use crate::game::tokens::two_token::TwoTokenRecord;

/// Results merged from any number of files (read by [`super::results`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StudyResults {
    /// The next-word game's answers, each idempotency key once.
    pub responses: Vec<ResponseRecord>,
    pub top1: Vec<Top1Record>,
    pub two_token: Vec<TwoTokenRecord>,
    /// One row per participant's run (and per JATOS run withdrawn without data), by id.
    pub participants: Vec<ParticipantRun>,
    /// Bundles read, repeats included.
    pub bundles: usize,
    /// Answers that arrived again and were counted once.
    pub repeats: usize,
    /// Files that were not results, with why (shown; the others are kept).
    pub skipped: Vec<String>,
    /// Files read with a caveat (shown beside the results), e.g. a `data.txt` that JATOS wrote
    /// in Latin-1 rather than UTF-8.
    pub warnings: Vec<String>,
    /// The studies' own passages (`texts` of the manifests' study configs), by id.
    pub passages: Vec<Passage>,
    /// The studies' configs by study id, as their bundles' manifests carry them (their
    /// questions, lists and Latin square name the trial table's columns).
    pub studies: BTreeMap<String, crate::game::design::study::StudyConfig>,
}

/// A run of one participant: (participant, run).
pub(super) type RunKey = (String, String);

/// The bundles read so far.
#[derive(Default)]
pub(super) struct Merging {
    responses: BTreeMap<String, ResponseRecord>,
    top1: BTreeMap<String, Top1Record>,
    two_token: BTreeMap<String, TwoTokenRecord>,
    people: BTreeMap<RunKey, Person>,
    bundles: usize,
    repeats: usize,
    /// Runs withdrawn (a study server's withdrawal notices) → study title; an empty run stands
    /// for every run of the participant.
    pub(super) withdrawn: BTreeMap<RunKey, String>,
    passages: BTreeMap<String, Passage>,
    /// Attention-check answers by (participant, run, check): the latest bundle's hold them all.
    attention: BTreeMap<(String, String, String), AttentionResult>,
    /// The studies' configs by study id (the first bundle's).
    studies: BTreeMap<String, crate::game::design::study::StudyConfig>,
}

/// What the bundles say of one participant's run.
#[derive(Default)]
struct Person {
    study: String,
    planned: Option<usize>,
    /// Bundles that carried their answers.
    bundles: usize,
    /// JATOS study results their bundles came from.
    run_ids: Vec<u64>,
    list: Option<AssignedList>,
    pilot: bool,
    /// Keys under which two bundles held different answers.
    conflicts: Vec<String>,
    study_id: String,
    worker_type: Option<String>,
    consent_at: Option<String>,
    device: Option<crate::game::run::export::DeviceInfo>,
    screened_out: bool,
    /// Answers to the study's questions by id (a later bundle's answer replaces an earlier).
    questions: BTreeMap<String, String>,
    /// The study link's ids (Prolific's `STUDY_ID`, `SESSION_ID`).
    url_ids: BTreeMap<String, String>,
}

/// Puts `record` under `key`; a repeat counts once. `true` when the repeat differs (a
/// conflict: the first answer stays).
fn merge_one<T: PartialEq>(
    map: &mut BTreeMap<String, T>,
    key: String,
    record: T,
    repeats: &mut usize,
) -> bool {
    match map.get(&key) {
        Some(kept) => {
            *repeats += 1;
            *kept != record
        }
        None => {
            map.insert(key, record);
            false
        }
    }
}

impl Merging {
    fn withdrawn(&self, participant: &str, run: &str) -> bool {
        self.withdrawn
            .contains_key(&(participant.to_string(), run.to_string()))
            || self
                .withdrawn
                .contains_key(&(participant.to_string(), String::new()))
    }

    /// Answers in the long format (no manifest): each counted once by its key, their runs
    /// known by participant and run alone (their plan unknown, so never complete).
    pub(super) fn add_plain(&mut self, records: Vec<ResponseRecord>) {
        let runs: std::collections::BTreeSet<RunKey> = records
            .iter()
            .map(|r| (r.participant.clone(), r.run.clone()))
            .collect();
        for run in runs {
            self.people.entry(run).or_default().bundles += 1;
        }
        for r in records {
            let person = self
                .people
                .entry((r.participant.clone(), r.run.clone()))
                .or_default();
            let key = response_key_in(&r.participant, &r.run, &r.passage, r.position);
            let label = format!("{} word {}", r.passage, r.position);
            let answer = (r.response.clone(), r.practice);
            match self.responses.get(&key) {
                Some(kept) => {
                    self.repeats += 1;
                    if (kept.response.clone(), kept.practice) != answer {
                        person.conflicts.push(label);
                    }
                }
                None => {
                    self.responses.insert(key, r);
                }
            }
        }
    }

    pub(super) fn add_bundle(&mut self, path: &str, value: Value) -> Result<(), DataError> {
        let manifest: Manifest =
            serde_json::from_value(value.get("manifest").cloned().unwrap_or(Value::Null))
                .map_err(|e| invalid(path, &format!("its manifest: {e}")))?;
        let run = manifest.run.clone();
        let mut participants = Vec::new();
        let mut conflicts: Vec<(String, String)> = Vec::new();
        if value.get("responses").is_some() {
            let records: Vec<ResponseRecord> =
                serde_json::from_value(value["responses"].clone())
                    .map_err(|e| invalid(path, &format!("its responses: {e}")))?;
            for mut r in records {
                if r.normalized.is_empty() {
                    r.normalized = crate::text::words::normalize(&r.response);
                }
                if r.run.is_empty() {
                    r.run = run.clone();
                }
                participants.push(r.participant.clone());
                let key = response_key_in(&r.participant, &r.run, &r.passage, r.position);
                // A resend is the same answer, perhaps with another timestamp: only what was
                // answered counts.
                let answer = |r: &ResponseRecord| (r.response.clone(), r.practice);
                if let Some(kept) = self.responses.get(&key) {
                    self.repeats += 1;
                    if answer(kept) != answer(&r) {
                        let label = format!("{} word {}", r.passage, r.position);
                        conflicts.push((r.participant.clone(), label));
                    }
                } else {
                    self.responses.insert(key, r);
                }
            }
        } else {
            let records: TokenRecords = serde_json::from_value(value)
                .map_err(|e| invalid(path, &format!("its records: {e}")))?;
            match records {
                TokenRecords::Top1(rows) => {
                    for mut r in rows {
                        if r.run.is_empty() {
                            r.run = run.clone();
                        }
                        participants.push(r.participant.clone());
                        let key = response_key_in(&r.participant, &r.run, &r.passage, r.position);
                        let label = format!("{} token {}", r.passage, r.position);
                        let who = r.participant.clone();
                        if merge_one(&mut self.top1, key, r, &mut self.repeats) {
                            conflicts.push((who, label));
                        }
                    }
                }
                TokenRecords::TwoToken(rows) => {
                    for mut r in rows {
                        if r.run.is_empty() {
                            r.run = run.clone();
                        }
                        participants.push(r.participant.clone());
                        let key = format!(
                            "{}/{}",
                            response_key_in(&r.participant, &r.run, &r.passage, r.position),
                            r.round
                        );
                        let label = format!("{} token {} round {}", r.passage, r.position, r.round);
                        let who = r.participant.clone();
                        if merge_one(&mut self.two_token, key, r, &mut self.repeats) {
                            conflicts.push((who, label));
                        }
                    }
                }
            }
        }
        for result in &manifest.attention_checks {
            self.attention.insert(
                (
                    result.participant.clone(),
                    run.clone(),
                    result.check.clone(),
                ),
                result.clone(),
            );
        }
        if !manifest.study_id.is_empty() {
            self.studies
                .entry(manifest.study_id.clone())
                .or_insert_with(|| manifest.study.clone());
        }
        for passage in &manifest.study.texts {
            self.passages
                .entry(passage.id.clone())
                .or_insert_with(|| passage.clone());
        }
        participants.push(manifest.participant.clone());
        participants.sort();
        participants.dedup();
        for participant in participants {
            let person = self
                .people
                .entry((participant.clone(), run.clone()))
                .or_default();
            person.study = manifest.study.title.clone();
            person.planned = manifest.planned_answers.or(person.planned);
            person.bundles += 1;
            person.run_ids.extend(study_result_id(path));
            if let Some(list) = &manifest.list {
                person.list = Some(list.clone());
            }
            person.pilot |= manifest.pilot;
            person.study_id.clone_from(&manifest.study_id);
            person.worker_type = manifest.worker_type.clone().or(person.worker_type.take());
            person.consent_at = manifest.consent_at.clone().or(person.consent_at.take());
            person.device = manifest.device.clone().or(person.device.take());
            person.screened_out |= manifest.screened_out;
            person.url_ids.extend(manifest.url_ids.clone());
            for answer in &manifest.questions {
                person
                    .questions
                    .insert(answer.question.clone(), answer.answer.clone());
            }
            person.conflicts.extend(
                conflicts
                    .iter()
                    .filter(|(who, _)| *who == participant)
                    .map(|(_, key)| key.clone()),
            );
        }
        self.bundles += 1;
        Ok(())
    }

    pub(super) fn finish(
        mut self,
        runs: &[JatosStudyRun],
        skipped: Vec<String>,
        warnings: Vec<String>,
    ) -> StudyResults {
        // A withdrawal asks for the participant's answers to be deleted: none are kept.
        let gone: std::collections::BTreeSet<RunKey> = self
            .people
            .keys()
            .filter(|(p, r)| self.withdrawn(p, r))
            .cloned()
            .collect();
        let gone_run = |p: &str, r: &str| gone.contains(&(p.to_string(), r.to_string()));
        self.responses
            .retain(|_, r| !gone_run(&r.participant, &r.run));
        self.top1.retain(|_, r| !gone_run(&r.participant, &r.run));
        self.two_token
            .retain(|_, r| !gone_run(&r.participant, &r.run));
        self.attention.retain(|(p, r, _), _| !gone_run(p, r));
        for ((participant, run), study) in &self.withdrawn {
            let known = self.people.keys().any(|(p, _)| p == participant);
            if !known || !run.is_empty() {
                let person = self
                    .people
                    .entry((participant.clone(), run.clone()))
                    .or_default();
                if person.study.is_empty() {
                    person.study = study.clone();
                }
            }
        }
        let mut answered: BTreeMap<RunKey, usize> = BTreeMap::new();
        for r in self.responses.values() {
            *answered
                .entry((r.participant.clone(), r.run.clone()))
                .or_default() += 1;
        }
        let runs_answered = self
            .top1
            .values()
            .map(|r| (&r.participant, &r.run))
            .chain(self.two_token.values().map(|r| (&r.participant, &r.run)));
        for (participant, run) in runs_answered {
            *answered
                .entry((participant.clone(), run.clone()))
                .or_default() += 1;
        }
        let mut times: BTreeMap<RunKey, Vec<f64>> = BTreeMap::new();
        for r in self.responses.values().filter(|r| !r.practice) {
            if let Some(ms) = r.response_time_ms {
                times
                    .entry((r.participant.clone(), r.run.clone()))
                    .or_default()
                    .push(ms);
            }
        }
        let state_of = |id: &u64| runs.iter().find(|r| r.study_result_id == *id);
        let mut participants: Vec<ParticipantRun> = self
            .people
            .iter()
            .map(|((participant, run), person)| {
                let key = (participant.clone(), run.clone());
                let count = answered.get(&key).copied().unwrap_or(0);
                let finished = person
                    .run_ids
                    .iter()
                    .filter_map(state_of)
                    .any(|r| r.state == JatosState::Finished);
                let all_there = person.planned.is_some_and(|n| count >= n);
                let checks: Vec<AttentionResult> = self
                    .attention
                    .iter()
                    .filter(|((p, r, _), _)| p == participant && r == run)
                    .map(|(_, result)| result.clone())
                    .collect();
                let (attention_passed, attention_failed) = tally(&checks);
                let withdrawn = gone.contains(&key) || self.withdrawn(participant, run);
                let mut warnings = Vec::new();
                if let Some(planned) = person.planned.filter(|&n| count > n && !withdrawn) {
                    warnings.push(format!(
                        "{count} answers where the plan has {planned}: answers of another \
                         run may be mixed in"
                    ));
                }
                if !person.conflicts.is_empty() {
                    let mut places = person.conflicts.clone();
                    places.sort();
                    places.dedup();
                    let shown: Vec<&str> = places.iter().take(3).map(String::as_str).collect();
                    let more = if places.len() > 3 { ", …" } else { "" };
                    warnings.push(format!(
                        "{} arrived again with another response (the first is kept): {}{more}",
                        counted(places.len(), "answer"),
                        shown.join(", ")
                    ));
                }
                let device = person.device.as_ref();
                // The link's ids: the manifest's, else those JATOS kept of the study link.
                let url_id = |name: &str| {
                    person.url_ids.get(name).cloned().or_else(|| {
                        person
                            .run_ids
                            .iter()
                            .filter_map(state_of)
                            .find_map(|r| r.url_parameters.get(name).cloned())
                    })
                };
                let worker_type = person.worker_type.clone().or_else(|| {
                    person
                        .run_ids
                        .iter()
                        .filter_map(state_of)
                        .find_map(|r| r.worker_type.clone())
                });
                ParticipantRun {
                    participant: participant.clone(),
                    run: run.clone(),
                    study: person.study.clone(),
                    list: person.list.as_ref().map(|list| list.name.clone()),
                    list_chosen_by: person.list.as_ref().map(|list| list.how.label().into()),
                    list_reason: person.list.as_ref().and_then(|list| list.reason.clone()),
                    pilot: person.pilot,
                    answered: count,
                    planned: person.planned,
                    state: if withdrawn {
                        RunState::Withdrawn
                    } else if person.screened_out {
                        RunState::ScreenedOut
                    } else if finished || all_there {
                        RunState::Complete
                    } else {
                        RunState::Incomplete
                    },
                    bundles: person.bundles,
                    attention_passed,
                    attention_failed,
                    warnings,
                    study_id: person.study_id.clone(),
                    worker_type,
                    consent_at: person.consent_at.clone(),
                    user_agent: device.map(|d| d.user_agent.clone()),
                    screen: device.map(|d| format!("{}x{}", d.screen_width, d.screen_height)),
                    touch: device.map(|d| d.touch),
                    questions: person.questions.clone().into_iter().collect(),
                    median_response_ms: times.get_mut(&key).and_then(|t| median(t)),
                    prolific_study_id: url_id("STUDY_ID"),
                    prolific_session_id: url_id("SESSION_ID"),
                }
            })
            .collect();
        // A withdrawn JATOS run left no data: JATOS deleted it. Its URL parameters still name
        // the participant (Prolific's id, when the study link carried it).
        for run in runs.iter().filter(|r| r.state == JatosState::Aborted) {
            let participant = ["PROLIFIC_PID", "participant", "workerId"]
                .iter()
                .find_map(|k| run.url_parameters.get(*k).cloned())
                .unwrap_or_else(|| format!("JATOS study result {}", run.study_result_id));
            let run_id = format!("jatos-{}", run.study_result_id);
            if let Some(known) = participants
                .iter_mut()
                .find(|p| p.participant == participant && (p.run == run_id || p.run.is_empty()))
            {
                known.state = RunState::Withdrawn;
            } else {
                participants.push(ParticipantRun::bare(
                    participant,
                    run_id,
                    RunState::Withdrawn,
                ));
            }
        }
        participants.sort_by(|a, b| (&a.participant, &a.run).cmp(&(&b.participant, &b.run)));
        StudyResults {
            responses: self.responses.into_values().collect(),
            top1: self.top1.into_values().collect(),
            two_token: self.two_token.into_values().collect(),
            participants,
            bundles: self.bundles,
            repeats: self.repeats,
            skipped,
            warnings,
            passages: self.passages.into_values().collect(),
            studies: self.studies,
        }
    }
}

/// The median of `values` (sorted in place); `None` when empty.
///
/// ```
/// use clozelab::game::readback::results_merge::median;
/// assert_eq!(median(&mut [3.0, 1.0, 2.0, 10.0]), Some(2.5));
/// assert_eq!(median(&mut []), None);
/// ```
pub fn median(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// `n` and the noun, plural unless `n` is 1.
///
/// ```
/// use clozelab::game::readback::results_merge::counted;
/// assert_eq!((counted(1, "run"), counted(3, "run")), ("1 run".to_string(), "3 runs".to_string()));
/// ```
pub fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn invalid(file: &str, message: &str) -> DataError {
    DataError::Invalid {
        file: file.to_string(),
        message: message.to_string(),
    }
}
