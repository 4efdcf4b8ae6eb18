//! Norming by simulation on real responses: participants drawn from each context's response
//! distribution in the Provo norms, and how many readings three ways of assigning them need
//! to reach one precision target — a fixed N per unit (the smallest N that meets it, known only
//! in hindsight, so the most favourable fixed design), an allocation planned from the model's
//! probability of each target word before any answer, and adaptive assignment (each next
//! reading to the unit furthest from the target, from the answers so far, the model's
//! probability standing in for answers not yet given). And how often the stop's claim holds
//! for the true distribution.
//!
//! A reading is one participant answering every context of one unit: a whole passage (as Provo
//! was normed), or one context (sentence-level items). Answers to the contexts of one reading
//! are drawn independently; each context's answers come from one stream per seed, shared by
//! the three policies (common random numbers), so that they differ only in how many of the
//! stream each context reads.

use std::collections::BTreeMap;

use super::precision::{ContextPrecision, PrecisionTarget, Z95, wilson_width};
use crate::data::provo::ProvoContext;
use crate::rng::SplitMix64;
use crate::text::words::normalize;

/// Answers per context before any check: no interval is trusted on fewer.
pub const MIN_READINGS: u32 = 10;

/// What one reading covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Unit {
    Passage,
    Context,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SimulationError {
    #[error("no context has responses to draw from")]
    NoContexts,
    #[error("at most {cap} readings per unit do not meet {target}: ask for less")]
    Unreachable { cap: u32, target: String },
    #[error("give at least one seed")]
    NoSeeds,
}

/// One context as the simulation sees it.
#[derive(Clone, Debug)]
struct Truth {
    /// Cumulative probabilities of the responses, and whether each is the target.
    cumulative: Vec<(f64, bool)>,
    /// The target word's true cloze probability.
    target_probability: f64,
    /// The model's probability of the target word (for planning and the adaptive prior).
    model_probability: f64,
    unit: usize,
}

/// Each context's answer stream for one seed, reduced to what precision needs after every
/// prefix length: target count, words seen once, words seen twice.
struct Streams {
    /// `[context][n]` → (target, f1, f2) after n answers.
    prefix: Vec<Vec<(u32, u32, u32)>>,
    /// `[context][i]` → the i-th answer (an index into the context's responses).
    draws: Vec<Vec<usize>>,
}

impl Streams {
    fn draw(truths: &[Truth], cap: u32, seed: u64) -> Self {
        let (prefix, draws) = truths
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut rng =
                    SplitMix64::new(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                let mut counts = vec![0u32; t.cumulative.len()];
                let mut state = (0u32, 0u32, 0u32);
                let mut out = Vec::with_capacity(cap as usize + 1);
                let mut drawn = Vec::with_capacity(cap as usize);
                out.push(state);
                for _ in 0..cap {
                    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    let k = t
                        .cumulative
                        .iter()
                        .position(|(c, _)| u < *c)
                        .unwrap_or(t.cumulative.len() - 1);
                    drawn.push(k);
                    counts[k] += 1;
                    match counts[k] {
                        1 => state.1 += 1,
                        2 => {
                            state.1 -= 1;
                            state.2 += 1;
                        }
                        3 => state.2 -= 1,
                        _ => {}
                    }
                    if t.cumulative[k].1 {
                        state.0 += 1;
                    }
                    out.push(state);
                }
                (out, drawn)
            })
            .unzip();
        Self { prefix, draws }
    }

    fn precision(&self, context: usize, n: u32) -> ContextPrecision {
        let (target, f1, f2) = self.prefix[context][n as usize];
        ContextPrecision::new(n, target, f1, f2).expect("n ≥ 1")
    }
}

/// One policy's outcome for one seed.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PolicyRun {
    /// Readings used (participants × units each read).
    pub readings: u64,
    /// Share of contexts whose 95% interval holds the true target probability at the stop.
    pub interval_coverage: f64,
    /// Whether the target holds for the true distribution at the stop: the share of contexts
    /// whose true interval width (at their n, from the true probability) and true unseen mass
    /// meet the bounds reaches the target's share.
    pub claim_holds: bool,
}

/// The three policies for one seed.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeedRun {
    pub fixed: PolicyRun,
    pub model_planned: PolicyRun,
    pub adaptive: PolicyRun,
}

/// The simulation's setup.
#[derive(Clone, Debug)]
pub struct Simulation {
    truths: Vec<Truth>,
    units: usize,
    target: PrecisionTarget,
    cap: u32,
}

impl Simulation {
    /// From Provo-format contexts (their `human` counts are the truth; `gpt2_logprob_original`
    /// the model's view of the target, or 0.5 where the file lacks it), the unit, the target
    /// and a cap on readings per unit.
    pub fn new(
        contexts: &[ProvoContext],
        unit: Unit,
        target: PrecisionTarget,
        cap: u32,
    ) -> Result<Self, SimulationError> {
        let mut unit_of: BTreeMap<u32, usize> = BTreeMap::new();
        let mut truths = Vec::new();
        for c in contexts {
            let total: u32 = c.human.values().sum();
            if total == 0 {
                continue;
            }
            let target_word = normalize(&c.original);
            let mut running = 0.0;
            let cumulative = c
                .human
                .iter()
                .map(|(w, &k)| {
                    running += k as f64 / total as f64;
                    (running, *w == target_word)
                })
                .collect();
            let unit = match unit {
                Unit::Passage => {
                    let next = unit_of.len();
                    *unit_of.entry(c.text_id).or_insert(next)
                }
                Unit::Context => truths.len(),
            };
            truths.push(Truth {
                cumulative,
                target_probability: c.human.get(&target_word).copied().unwrap_or(0) as f64
                    / total as f64,
                model_probability: c.gpt2_logprob_original.map_or(0.5, f64::exp),
                unit,
            });
        }
        if truths.is_empty() {
            return Err(SimulationError::NoContexts);
        }
        let units = truths.iter().map(|t| t.unit).max().unwrap_or(0) + 1;
        Ok(Self {
            truths,
            units,
            target,
            cap: cap.max(MIN_READINGS),
        })
    }

    pub fn contexts(&self) -> usize {
        self.truths.len()
    }

    pub fn units(&self) -> usize {
        self.units
    }

    /// Readings per unit, as each context's n.
    fn per_context(&self, per_unit: &[u32]) -> Vec<u32> {
        self.truths.iter().map(|t| per_unit[t.unit]).collect()
    }

    fn met(&self, streams: &Streams, n: &[u32]) -> usize {
        (0..self.truths.len())
            .filter(|&c| self.target.met_by(&streams.precision(c, n[c])))
            .count()
    }

    fn outcome(&self, streams: &Streams, per_unit: &[u32]) -> PolicyRun {
        let n = self.per_context(per_unit);
        let mut covered = 0usize;
        let mut truly_met = 0usize;
        for (c, t) in self.truths.iter().enumerate() {
            let p = streams.precision(c, n[c]);
            let (lo, hi) = super::precision::wilson_interval(p.target, p.n, Z95).expect("n ≥ 1");
            if (lo..=hi).contains(&t.target_probability) {
                covered += 1;
            }
            // The interval's width at this n were its estimate the true probability, and the
            // true mass of the words not among those drawn.
            let true_width = wilson_width(t.target_probability, n[c]);
            let seen_mass = self.true_seen_mass(streams, c, n[c]);
            let ok = self
                .target
                .max_interval_width()
                .is_none_or(|w| true_width <= w)
                && self
                    .target
                    .max_unseen_mass()
                    .is_none_or(|u| 1.0 - seen_mass <= u);
            truly_met += usize::from(ok);
        }
        PolicyRun {
            readings: per_unit.iter().map(|&r| r as u64).sum(),
            interval_coverage: covered as f64 / self.truths.len() as f64,
            claim_holds: self.target.enough(truly_met, self.truths.len()),
        }
    }

    /// The true probability of the words among a context's first n answers.
    fn true_seen_mass(&self, streams: &Streams, c: usize, n: u32) -> f64 {
        let t = &self.truths[c];
        let mut seen = vec![false; t.cumulative.len()];
        for &k in &streams.draws[c][..n as usize] {
            seen[k] = true;
        }
        let mut previous = 0.0;
        let mut mass = 0.0;
        for (k, (cumulative, _)) in t.cumulative.iter().enumerate() {
            if seen[k] {
                mass += cumulative - previous;
            }
            previous = *cumulative;
        }
        mass
    }

    /// The smallest fixed N per unit that meets the target.
    fn fixed(&self, streams: &Streams) -> Result<Vec<u32>, SimulationError> {
        (MIN_READINGS..=self.cap)
            .map(|n| vec![n; self.units])
            .find(|per_unit| {
                self.target.enough(
                    self.met(streams, &self.per_context(per_unit)),
                    self.truths.len(),
                )
            })
            .ok_or_else(|| self.unreachable())
    }

    /// Readings each context needs by the model's probability of its target, for the width
    /// bound (the Wald width 2z√(p(1−p)/n) at the model's p); a unit needs its neediest
    /// context's. Without a width bound every unit needs the same.
    fn model_need(&self) -> Vec<f64> {
        let mut need = vec![1.0f64; self.units];
        if let Some(w) = self.target.max_interval_width() {
            for t in &self.truths {
                let p = t.model_probability.clamp(0.01, 0.99);
                let n = (2.0 * Z95 / w).powi(2) * p * (1.0 - p);
                need[t.unit] = need[t.unit].max(n);
            }
        }
        need
    }

    /// Readings per unit planned from the model alone: proportional to each unit's need,
    /// scaled by the smallest factor that meets the target.
    fn model_planned(&self, streams: &Streams) -> Result<Vec<u32>, SimulationError> {
        let need = self.model_need();
        let plan = |scale: f64| -> Vec<u32> {
            need.iter()
                .map(|n| ((n * scale).ceil() as u32).clamp(MIN_READINGS, self.cap))
                .collect()
        };
        let mut scale = 0.05;
        loop {
            let per_unit = plan(scale);
            if self.target.enough(
                self.met(streams, &self.per_context(&per_unit)),
                self.truths.len(),
            ) {
                return Ok(per_unit);
            }
            if per_unit.iter().all(|&r| r == self.cap) {
                return Err(self.unreachable());
            }
            scale *= 1.02;
        }
    }

    /// Readings per unit when each next reading goes to the unit whose contexts are furthest
    /// from the target, by the answers so far with the model's probability of the target as
    /// a prior worth a few answers; stops when the target is met.
    fn adaptive(&self, streams: &Streams) -> Result<Vec<u32>, SimulationError> {
        let mut per_unit = vec![MIN_READINGS; self.units];
        let mut contexts_of: Vec<Vec<usize>> = vec![Vec::new(); self.units];
        for (c, truth) in self.truths.iter().enumerate() {
            contexts_of[truth.unit].push(c);
        }
        let shortfall = |c: usize, n: u32| -> (bool, f64) {
            let p = streams.precision(c, n);
            let prior = self.truths[c].model_probability;
            (
                self.target.met_by(&p),
                self.target.guided_shortfall(&p, prior),
            )
        };
        let mut state: Vec<(bool, f64)> = (0..self.truths.len())
            .map(|c| shortfall(c, MIN_READINGS))
            .collect();
        let mut met = state.iter().filter(|s| s.0).count();
        let unit_score = |state: &[(bool, f64)], u: usize| -> f64 {
            contexts_of[u].iter().map(|&c| state[c].1).sum()
        };
        let mut scores: Vec<f64> = (0..self.units).map(|u| unit_score(&state, u)).collect();
        while !self.target.enough(met, self.truths.len()) {
            let next = (0..self.units)
                .filter(|&u| per_unit[u] < self.cap)
                .max_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(b.cmp(&a)))
                .ok_or_else(|| self.unreachable())?;
            per_unit[next] += 1;
            for &c in &contexts_of[next] {
                let before = state[c].0;
                state[c] = shortfall(c, per_unit[next]);
                met = met + usize::from(state[c].0) - usize::from(before);
            }
            scores[next] = unit_score(&state, next);
        }
        Ok(per_unit)
    }

    fn unreachable(&self) -> SimulationError {
        SimulationError::Unreachable {
            cap: self.cap,
            target: self.target.describe(),
        }
    }

    /// The three policies on one seed's answers.
    pub fn run(&self, seed: u64) -> Result<SeedRun, SimulationError> {
        let streams = Streams::draw(&self.truths, self.cap, seed);
        Ok(SeedRun {
            fixed: self.outcome(&streams, &self.fixed(&streams)?),
            model_planned: self.outcome(&streams, &self.model_planned(&streams)?),
            adaptive: self.outcome(&streams, &self.adaptive(&streams)?),
        })
    }
}

/// Reads one policy's outcome off a seed's run.
type PolicyOf = fn(&SeedRun) -> PolicyRun;

/// A policy over many seeds.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PolicySummary {
    pub policy: &'static str,
    pub mean_readings: f64,
    pub sd_readings: f64,
    /// Mean readings against the fixed design's, in the same seeds.
    pub relative_to_fixed: f64,
    pub mean_interval_coverage: f64,
    /// Share of seeds whose stop's claim held for the true distribution.
    pub claim_held: f64,
}

/// Runs `seeds` seeds (0, 1, …) and summarises each policy.
pub fn summarise(
    simulation: &Simulation,
    seeds: u64,
) -> Result<Vec<PolicySummary>, SimulationError> {
    let runs = (0..seeds)
        .map(|seed| simulation.run(seed))
        .collect::<Result<Vec<_>, _>>()?;
    summarise_runs(&runs)
}

/// Each policy over the seeds' runs (in any order of seeds the same figures, up to the
/// rounding of the sums, which take them in the order given); no runs is an error.
pub fn summarise_runs(runs: &[SeedRun]) -> Result<Vec<PolicySummary>, SimulationError> {
    if runs.is_empty() {
        return Err(SimulationError::NoSeeds);
    }
    let pick: [(&'static str, PolicyOf); 3] = [
        ("fixed N per unit (smallest that works)", |r| r.fixed),
        ("planned from the model", |r| r.model_planned),
        ("adaptive", |r| r.adaptive),
    ];
    let fixed_mean = runs.iter().map(|r| r.fixed.readings as f64).sum::<f64>() / runs.len() as f64;
    Ok(pick
        .iter()
        .map(|(policy, of)| {
            let readings: Vec<f64> = runs.iter().map(|r| of(r).readings as f64).collect();
            let mean = readings.iter().sum::<f64>() / readings.len() as f64;
            let sd = (readings.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
                / (readings.len().max(2) - 1) as f64)
                .sqrt();
            PolicySummary {
                policy,
                mean_readings: mean,
                sd_readings: sd,
                relative_to_fixed: mean / fixed_mean,
                mean_interval_coverage: runs.iter().map(|r| of(r).interval_coverage).sum::<f64>()
                    / runs.len() as f64,
                claim_held: runs.iter().filter(|r| of(r).claim_holds).count() as f64
                    / runs.len() as f64,
            }
        })
        .collect())
}
