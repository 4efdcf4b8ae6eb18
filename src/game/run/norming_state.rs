//! Adaptive norming inside JATOS: the answers so far, kept compactly in the batch session, and
//! the list each new participant is given from them.
//!
//! The batch session's [`NORMING_KEY`] member holds, per context (`passage:position`), how many
//! completed runs gave each word (normalised as the analyses normalise it): what a context's
//! precision needs — the target's count for its interval and the words given once and twice
//! for the unseen mass — and no more. A run adds its answers when it completes, in the same
//! versioned write that marks its ledger entry complete, so a run that never finishes adds
//! nothing and its place frees as the lists' places do ([`super::jatos_batch::HOLD_MS`]).
//!
//! The choice follows the rule `clozelab norming-sim` measures as "adaptive": every list first
//! gets [`MIN_READINGS`] runs (the least-used first, as without the option); then each new
//! participant gets the list whose contexts are furthest from the target, their shortfall
//! summed (the model's probability of each target mixed in as
//! [`PRIOR_WEIGHT`](crate::analysis::norming::precision::PRIOR_WEIGHT) answers while answers are
//! few), a list with runs still playing counting its shortfall divided by one more
//! than those runs, since each will bring a reading. Once the target holds, a new participant
//! is told the study is full.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::analysis::norming::precision::{ContextPrecision, PrecisionTarget};
use crate::analysis::norming::simulation::MIN_READINGS;
use crate::game::design::adaptive_norming::{
    AdaptiveNorming, NormingAssignment, NormingStateFile, context_key,
};
use crate::game::design::study::StudyConfig;
use crate::text::words::normalize;

use super::json_pointer::json_pointer_token;

/// The batch session's member with the answers' counts.
pub const NORMING_KEY: &str = "clozelabNorming";
/// The batch session's member written once the target is met (when, and how many contexts).
pub const NORMING_MET_KEY: &str = "clozelabNormingMet";

/// One list's contexts: key and normalised target word.
#[derive(Clone, Debug, PartialEq)]
pub struct ListContexts {
    pub name: String,
    pub contexts: Vec<(String, String)>,
}

/// What adaptive norming needs of a study: its settings and each list's contexts (practice
/// passages left out).
#[derive(Clone, Debug, PartialEq)]
pub struct NormingPlan {
    pub settings: AdaptiveNorming,
    pub target: PrecisionTarget,
    pub lists: Vec<ListContexts>,
}

impl NormingPlan {
    /// The plan of a study with adaptive norming; `None` without the option (or a config that
    /// did not pass its checks).
    pub fn of(config: &StudyConfig) -> Option<Self> {
        let settings = config.adaptive_norming.clone()?;
        let target = settings.target().ok()?;
        let lists = config
            .lists
            .iter()
            .map(|list| ListContexts {
                name: list.name.clone(),
                contexts: list
                    .passages
                    .iter()
                    .filter(|id| config.practice.as_ref() != Some(*id))
                    .filter_map(|id| config.passage(id))
                    .flat_map(|passage| {
                        let words: Vec<String> =
                            passage.words().into_iter().map(normalize).collect();
                        (2..=words.len())
                            .map(|position| {
                                (
                                    context_key(&passage.id, position),
                                    words[position - 1].clone(),
                                )
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect(),
            })
            .collect();
        Some(Self {
            settings,
            target,
            lists,
        })
    }

    /// Every context of the study once (a passage in two lists counts once).
    fn all_contexts(&self) -> BTreeMap<&str, &str> {
        self.lists
            .iter()
            .flat_map(|l| l.contexts.iter().map(|(k, t)| (k.as_str(), t.as_str())))
            .collect()
    }

    /// How far the answers in `counts` are from the target.
    ///
    /// ```
    /// use clozelab::game::design::study::StudyConfig;
    /// use clozelab::game::run::norming_state::{NormingPlan, ResponseCounts};
    /// let config = StudyConfig::from_json(r#"{
    ///     "texts": [{"id": "a", "title": "A", "text": "the cat sat"},
    ///               {"id": "b", "title": "B", "text": "a dog ran"}],
    ///     "lists": [{"name": "L1", "passages": ["a"]}, {"name": "L2", "passages": ["b"]}],
    ///     "adaptive_norming": {"max_interval_width": 0.6}}"#).unwrap();
    /// let plan = NormingPlan::of(&config).unwrap();
    /// let mut counts = ResponseCounts::default();
    /// assert_eq!(plan.status(&counts).met, 0);
    /// for _ in 0..12 { counts.add("a:2", "cat"); counts.add("a:3", "sat"); }
    /// let status = plan.status(&counts);
    /// assert_eq!((status.contexts, status.met, status.done), (4, 2, false));
    /// ```
    pub fn status(&self, counts: &ResponseCounts) -> NormingStatus {
        let all = self.all_contexts();
        let met = all
            .iter()
            .filter(|(key, target)| {
                counts
                    .precision(key, target)
                    .is_some_and(|p| p.n >= MIN_READINGS && self.target.met_by(&p))
            })
            .count();
        NormingStatus {
            contexts: all.len(),
            met,
            done: self.target.enough(met, all.len()),
        }
    }

    /// A context's distance from the target as the choice sees it: its answers with the
    /// model's probability of the target mixed in (a target nobody has given yet is not yet
    /// known to be rare); a context without answers is as far as can be.
    fn guided_shortfall(&self, counts: &ResponseCounts, key: &str, target: &str) -> f64 {
        let Some(p) = counts.precision(key, target) else {
            return self
                .target
                .shortfall(&ContextPrecision::new(1, 0, 1, 0).expect("n = 1"));
        };
        self.target
            .guided_shortfall(&p, self.settings.prior_of(key))
    }

    /// A list's contexts' summed guided shortfall, and how many of them fall short.
    fn list_shortfall(&self, counts: &ResponseCounts, list: &ListContexts) -> (f64, usize) {
        list.contexts
            .iter()
            .map(|(k, t)| self.guided_shortfall(counts, k, t))
            .fold((0.0, 0), |(sum, short), s| {
                (sum + s, short + usize::from(s > 0.0))
            })
    }

    /// The study is full: the target in words, and how the status was known (`how`).
    fn full(&self, status: NormingStatus, how: &str) -> NormingAssignment {
        NormingAssignment::Full {
            reason: format!(
                "{} of {} contexts meet the target ({}){how}",
                status.met,
                status.contexts,
                self.target.describe()
            ),
        }
    }

    /// The list for a new participant, or that the study is full. `places`: each list's runs
    /// that count (complete, or playing and not yet abandoned); `playing`: those still playing.
    pub fn choose(
        &self,
        counts: &ResponseCounts,
        places: &BTreeMap<String, u64>,
        playing: &BTreeMap<String, u64>,
    ) -> NormingAssignment {
        let status = self.status(counts);
        if status.done {
            return self.full(status, "");
        }
        let taken = |name: &str| places.get(name).copied().unwrap_or(0);
        if let Some(list) = self
            .lists
            .iter()
            .filter(|l| taken(&l.name) < u64::from(MIN_READINGS))
            .min_by_key(|l| taken(&l.name))
        {
            return NormingAssignment::List {
                name: list.name.clone(),
                reason: format!(
                    "list {} had {} of the {MIN_READINGS} runs every list gets before the answers steer",
                    list.name,
                    taken(&list.name)
                ),
            };
        }
        let scored: Vec<(&ListContexts, f64, usize)> = self
            .lists
            .iter()
            .map(|l| {
                let (shortfall, short) = self.list_shortfall(counts, l);
                let in_flight = playing.get(&l.name).copied().unwrap_or(0) as f64;
                (l, shortfall / (1.0 + in_flight), short)
            })
            .collect();
        let best = scored
            .iter()
            .max_by(|a, b| {
                a.1.total_cmp(&b.1)
                    .then(taken(&b.0.name).cmp(&taken(&a.0.name)))
            })
            .expect("a study with adaptive norming has lists");
        NormingAssignment::List {
            name: best.0.name.clone(),
            reason: format!(
                "list {}: its contexts are furthest from the target (shortfall {:.3}, {} of {} contexts short, {} runs still playing); {} of {} contexts meet it",
                best.0.name,
                best.1,
                best.2,
                best.0.contexts.len(),
                playing.get(&best.0.name).copied().unwrap_or(0),
                status.met,
                status.contexts
            ),
        }
    }

    /// The JSON Patch operations a completed run's `answers` (context key, word as given) add
    /// to the batch session `data`: each touched context's counts as a whole, and the met
    /// marker at `now_ms` when these answers complete the target.
    pub fn completion_patches(
        &self,
        data: &Value,
        answers: &[(String, String)],
        now_ms: f64,
    ) -> Vec<Value> {
        let mut counts = ResponseCounts::from_session(data);
        let known = self.all_contexts();
        let mut touched = std::collections::BTreeSet::new();
        for (key, word) in answers
            .iter()
            .filter(|(k, _)| known.contains_key(k.as_str()))
        {
            let word = normalize(word);
            if !word.is_empty() {
                counts.add(key, &word);
                touched.insert(key.clone());
            }
        }
        let mut patches = Vec::new();
        if data.get(NORMING_KEY).and_then(Value::as_object).is_none() {
            patches.push(
                json!({"op": "add", "path": format!("/{NORMING_KEY}"), "value": counts.to_json()}),
            );
        } else {
            for key in &touched {
                patches.push(json!({
                    "op": "add",
                    "path": format!("/{NORMING_KEY}/{}", json_pointer_token(key)),
                    "value": counts.context_json(key),
                }));
            }
        }
        let status = self.status(&counts);
        if status.done && data.get(NORMING_MET_KEY).is_none() {
            patches.push(json!({
                "op": "add",
                "path": format!("/{NORMING_MET_KEY}"),
                "value": {"at": now_ms, "contexts": status.contexts, "met": status.met,
                          "target": self.target.describe()},
            }));
        }
        patches
    }
}

impl ResponseCounts {
    /// The counts of a state file.
    pub fn of_state(state: &NormingStateFile) -> Self {
        Self {
            contexts: state.counts.clone(),
        }
    }
}

impl NormingPlan {
    /// The list for a participant outside JATOS from the researcher's `state`, `u` in [0, 1)
    /// from a stable hash of their id: with no shared ledger, participants who arrive between
    /// two refreshes of the state are spread over the lists in proportion to each list's need
    /// (the runs a list lacks of [`MIN_READINGS`], then its contexts' summed shortfall) rather
    /// than all sent to the neediest.
    ///
    /// ```
    /// use clozelab::game::design::study::StudyConfig;
    /// use clozelab::game::design::adaptive_norming::{NormingAssignment, NormingStateFile};
    /// use clozelab::game::run::norming_state::NormingPlan;
    /// let config = StudyConfig::from_json(r#"{
    ///     "texts": [{"id": "a", "title": "A", "text": "the cat sat"},
    ///               {"id": "b", "title": "B", "text": "a dog ran"}],
    ///     "lists": [{"name": "L1", "passages": ["a"]}, {"name": "L2", "passages": ["b"]}],
    ///     "adaptive_norming": {"max_interval_width": 0.6}}"#).unwrap();
    /// let plan = NormingPlan::of(&config).unwrap();
    /// let mut state = NormingStateFile::default();
    /// state.runs.insert("L1".into(), 9);
    /// // L1 lacks 1 run of its first 10, L2 all 10: L2 for most participants.
    /// let to = |u| match plan.draw(&state, u) { NormingAssignment::List { name, .. } => name, other => panic!("{other:?}") };
    /// assert_eq!((to(0.05), to(0.5), to(0.95)), ("L1".to_string(), "L2".to_string(), "L2".to_string()));
    /// ```
    pub fn draw(&self, state: &NormingStateFile, u: f64) -> NormingAssignment {
        let counts = ResponseCounts::of_state(state);
        let status = self.status(&counts);
        if status.done {
            return self.full(
                status,
                &format!(", by the state written {}", state.written_at),
            );
        }
        let runs = |name: &str| state.runs.get(name).copied().unwrap_or(0);
        let lacking: Vec<f64> = self
            .lists
            .iter()
            .map(|l| u64::from(MIN_READINGS).saturating_sub(runs(&l.name)) as f64)
            .collect();
        let (weights, why) = if lacking.iter().any(|w| *w > 0.0) {
            (
                lacking,
                format!("the runs it lacks of the first {MIN_READINGS} every list gets"),
            )
        } else {
            let shortfalls = self
                .lists
                .iter()
                .map(|l| self.list_shortfall(&counts, l).0)
                .collect();
            (
                shortfalls,
                "its contexts' summed shortfall against the target".to_string(),
            )
        };
        let total: f64 = weights.iter().sum();
        let mut running = 0.0;
        let index = weights
            .iter()
            .position(|w| {
                running += w / total;
                u < running
            })
            .or_else(|| weights.iter().rposition(|w| *w > 0.0))
            .unwrap_or(0);
        let list = &self.lists[index];
        NormingAssignment::List {
            name: list.name.clone(),
            reason: format!(
                "list {} drawn in proportion to {why} ({:.3} of {:.3} over all lists), by the state written {}; {} of {} contexts met the target then",
                list.name, weights[index], total, state.written_at, status.met, status.contexts
            ),
        }
    }
}

/// How far a study's norms are from its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NormingStatus {
    pub contexts: usize,
    pub met: usize,
    pub done: bool,
}

/// Completed runs' answers per context: context key → word → count.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResponseCounts {
    contexts: BTreeMap<String, BTreeMap<String, u32>>,
}

impl ResponseCounts {
    /// The counts a batch session's data holds (none where it holds none, or holds them
    /// malformed: a count that is not a positive integer is skipped).
    pub fn from_session(data: &Value) -> Self {
        let contexts = data
            .get(NORMING_KEY)
            .and_then(Value::as_object)
            .map(|contexts| {
                contexts
                    .iter()
                    .filter_map(|(key, words)| {
                        let words: BTreeMap<String, u32> = words
                            .as_object()?
                            .iter()
                            .filter_map(|(w, c)| {
                                Some((w.clone(), u32::try_from(c.as_u64()?).ok()?))
                            })
                            .filter(|(_, c)| *c > 0)
                            .collect();
                        Some((key.clone(), words))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self { contexts }
    }

    /// One more answer `word` (already normalised) to context `key`.
    pub fn add(&mut self, key: &str, word: &str) {
        *self
            .contexts
            .entry(key.to_string())
            .or_default()
            .entry(word.to_string())
            .or_insert(0) += 1;
    }

    /// A context's precision against its normalised `target` word; `None` without answers.
    pub fn precision(&self, key: &str, target: &str) -> Option<ContextPrecision> {
        let words = self.contexts.get(key)?;
        let n = words.values().sum();
        let of = |count: u32| words.values().filter(|c| **c == count).count() as u32;
        ContextPrecision::new(n, words.get(target).copied().unwrap_or(0), of(1), of(2))
    }

    fn context_json(&self, key: &str) -> Value {
        json!(self.contexts.get(key).cloned().unwrap_or_default())
    }

    fn to_json(&self) -> Value {
        json!(self.contexts)
    }
}
