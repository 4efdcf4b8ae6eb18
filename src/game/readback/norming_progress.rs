//! Adaptive norming from the results so far: the state file a study outside JATOS serves beside
//! its config (`game::run::norming_state`), and how far the norms are from the study's target
//! (the Analysis page's panel, `clozelab norming-state`).
//! Only completed runs of participants count, as inside JATOS: a pilot's or an unfinished run's
//! answers would pull the choice towards lists nobody completes.

use std::collections::{BTreeMap, BTreeSet};

use crate::data::participant_run::RunState;
use crate::game::design::adaptive_norming::{NormingStateFile, context_key};
use crate::text::words::normalize;

use super::results_merge::StudyResults;
use crate::analysis::norming::progress::NormingProgress;
use crate::game::run::norming_state::{NormingPlan, ResponseCounts};

/// The precision target of the first study of `results` with adaptive norming (what the
/// Analysis page's precision figure is drawn against, instead of its default).
pub fn study_target(
    results: &StudyResults,
) -> Option<crate::analysis::norming::precision::PrecisionTarget> {
    results
        .studies
        .values()
        .find_map(|config| NormingPlan::of(config).map(|plan| plan.target))
}

/// Each study of `results` with adaptive norming: how far its norms are from its target, and
/// its state file as of `written_at`.
pub fn progress(results: &StudyResults, written_at: &str) -> Vec<NormingProgress> {
    results
        .studies
        .iter()
        .filter_map(|(study_id, config)| {
            let plan = NormingPlan::of(config)?;
            let state = state_file(results, study_id, written_at);
            let status = plan.status(&ResponseCounts::of_state(&state));
            Some(NormingProgress {
                study: config.title.clone(),
                target: plan.target.describe(),
                contexts: status.contexts,
                met: status.met,
                done: status.done,
                runs: plan
                    .lists
                    .iter()
                    .map(|l| {
                        (
                            l.name.clone(),
                            state.runs.get(&l.name).copied().unwrap_or(0),
                        )
                    })
                    .collect(),
                state_file: serde_json::to_string_pretty(&state).expect("plain data serialises"),
            })
        })
        .collect()
}

/// The state file of study `study_id`'s runs in `results`, written at `written_at` (RFC 3339).
///
/// ```
/// use clozelab::game::readback::norming_progress::state_file;
/// use clozelab::game::readback::results_merge::StudyResults;
/// let empty = state_file(&StudyResults::default(), "s1", "2026-11-28T08:00:00Z");
/// assert!(empty.runs.is_empty() && empty.counts.is_empty());
/// ```
pub fn state_file(results: &StudyResults, study_id: &str, written_at: &str) -> NormingStateFile {
    let complete: BTreeSet<(&str, &str)> = results
        .participants
        .iter()
        .filter(|p| p.state == RunState::Complete && !p.pilot && p.study_id == study_id)
        .map(|p| (p.participant.as_str(), p.run.as_str()))
        .collect();
    let mut runs = BTreeMap::new();
    for person in results
        .participants
        .iter()
        .filter(|p| complete.contains(&(p.participant.as_str(), p.run.as_str())))
    {
        if let Some(list) = &person.list {
            *runs.entry(list.clone()).or_insert(0) += 1;
        }
    }
    let mut counts: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    for r in results
        .responses
        .iter()
        .filter(|r| !r.practice && complete.contains(&(r.participant.as_str(), r.run.as_str())))
    {
        let word = normalize(&r.response);
        if !word.is_empty() {
            *counts
                .entry(context_key(&r.passage, r.position as usize))
                .or_default()
                .entry(word)
                .or_insert(0) += 1;
        }
    }
    NormingStateFile {
        written_at: written_at.to_string(),
        runs,
        counts,
    }
}
