//! Production-variability probes (Giulianelli et al., "What Comes Next?", EMNLP 2023, §3.2):
//! distances between two productions (the text after a context), and per context how variable
//! people are among themselves (H), the model among its own samples (M) and the model against
//! people (C), compared by the mean difference μ_M − μ_H and by W₁(C, H) — beside a human control
//! group that plays the model's part.
//!
//! The distances ([`Probe`]) are lexical (n-gram overlap of words), syntactic (the same on
//! part-of-speech tags) and semantic (cosine distance of embeddings); [`Variability::new`] takes
//! any `Fn(&P, &P) -> Option<f64>`.

use std::collections::BTreeSet;

use super::metrics::{mean, wasserstein1};
use crate::rng::SplitMix64;
use crate::text::pos::UniversalTag;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ProbeError {
    #[error("n-grams need n ≥ 1")]
    ZeroN,
    #[error("a context needs at least {needed} human productions, got {got}")]
    TooFewHumans { needed: usize, got: usize },
    #[error("a context needs at least 2 model productions, got {0}")]
    TooFewSamples(usize),
    #[error("no pair of productions has a defined distance")]
    NoDistances,
}

/// The set of n-grams of a sequence (empty when it is shorter than n).
fn ngrams<T: Ord + Clone>(items: &[T], n: usize) -> BTreeSet<Vec<T>> {
    if n == 0 || items.len() < n {
        return BTreeSet::new();
    }
    items.windows(n).map(<[T]>::to_vec).collect()
}

/// Lexical distance: the fraction of non-matching n-grams between two productions,
/// d = 1 − |N(a) ∩ N(b)| / |N(a) ∪ N(b)|, with N the set of n-grams (of words, or of
/// part-of-speech tags for the syntactic probe). `None` when neither has an n-gram (two
/// one-word productions have no bigrams: no evidence either way); 1 when only one has any.
///
/// ```
/// use clozelab::analysis::variability::ngram_distance;
/// let a = ["the", "cat", "sat"];
/// let b = ["the", "cat", "ran"];
/// // Unigrams {the, cat, sat} and {the, cat, ran}: 2 shared of 4.
/// assert_eq!(ngram_distance(&a, &b, 1), Ok(Some(0.5)));
/// // Bigrams {the cat, cat sat} and {the cat, cat ran}: 1 shared of 3.
/// let d = ngram_distance(&a, &b, 2).unwrap().unwrap();
/// assert!((d - 2.0 / 3.0).abs() < 1e-12);
/// assert_eq!(ngram_distance(&["word"], &["other"], 2), Ok(None));
/// ```
pub fn ngram_distance<T: Ord + Clone>(
    a: &[T],
    b: &[T],
    n: usize,
) -> Result<Option<f64>, ProbeError> {
    if n == 0 {
        return Err(ProbeError::ZeroN);
    }
    let (na, nb) = (ngrams(a, n), ngrams(b, n));
    let union = na.union(&nb).count();
    if union == 0 {
        return Ok(None);
    }
    let shared = na.intersection(&nb).count();
    Ok(Some(1.0 - shared as f64 / union as f64))
}

/// One context's variability under one distance: the distances among people (H), among the
/// model's samples (M) and between the model's samples and people (C), each pair once.
#[derive(Clone, Debug, PartialEq)]
pub struct Variability {
    pub human: Vec<f64>,
    pub model: Vec<f64>,
    pub cross: Vec<f64>,
}

/// A context's probe summary: μ_M − μ_H (positive: the model varies more than people) and
/// W₁(C, H) (0: the model's productions are as far from people's as people's from each other).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProbeSummary {
    pub mean_human: f64,
    pub mean_model: f64,
    pub mean_difference: f64,
    pub w1_cross_human: f64,
}

/// Distances of every unordered pair within `items` (undefined ones left out).
fn within<P>(items: &[P], distance: &impl Fn(&P, &P) -> Option<f64>) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 0..items.len() {
        for j in i + 1..items.len() {
            out.extend(distance(&items[i], &items[j]));
        }
    }
    out
}

/// Distances of every pair across two groups.
fn across<P>(a: &[P], b: &[P], distance: &impl Fn(&P, &P) -> Option<f64>) -> Vec<f64> {
    a.iter()
        .flat_map(|x| b.iter().filter_map(|y| distance(x, y)))
        .collect()
}

impl Variability {
    /// H, M and C of one context from its human productions and the model's samples.
    pub fn new<P>(
        humans: &[P],
        samples: &[P],
        distance: impl Fn(&P, &P) -> Option<f64>,
    ) -> Result<Self, ProbeError> {
        if humans.len() < 2 {
            return Err(ProbeError::TooFewHumans {
                needed: 2,
                got: humans.len(),
            });
        }
        if samples.len() < 2 {
            return Err(ProbeError::TooFewSamples(samples.len()));
        }
        Ok(Self {
            human: within(humans, &distance),
            model: within(samples, &distance),
            cross: across(samples, humans, &distance),
        })
    }

    /// The human control group: the humans split into two disjoint halves (the first
    /// ⌈n/2⌉ of `humans` as given — shuffle first for a random split), the second half in the
    /// model's place against the first: H from pairs within the first half, M within the
    /// second, C across. Its summary is what a perfect model would score with this many people.
    pub fn control<P>(
        humans: &[P],
        distance: impl Fn(&P, &P) -> Option<f64>,
    ) -> Result<Self, ProbeError> {
        if humans.len() < 4 {
            return Err(ProbeError::TooFewHumans {
                needed: 4,
                got: humans.len(),
            });
        }
        let (reference, stand_in) = humans.split_at(humans.len().div_ceil(2));
        Ok(Self {
            human: within(reference, &distance),
            model: within(stand_in, &distance),
            cross: across(stand_in, reference, &distance),
        })
    }

    /// μ_M − μ_H and W₁(C, H).
    ///
    /// ```
    /// use clozelab::analysis::variability::Variability;
    /// // Productions as numbers, |a − b| as the distance.
    /// let d = |a: &f64, b: &f64| Some((a - b).abs());
    /// let v = Variability::new(&[0.0, 1.0], &[0.0, 0.0], d).unwrap();
    /// let s = v.summary().unwrap();
    /// assert_eq!((s.mean_human, s.mean_model, s.mean_difference), (1.0, 0.0, -1.0));
    /// // C = {0, 1, 0, 1} against H = {1}: W₁ = 0.5.
    /// assert_eq!(s.w1_cross_human, 0.5);
    /// ```
    pub fn summary(&self) -> Result<ProbeSummary, ProbeError> {
        let mean_human = mean(&self.human).ok_or(ProbeError::NoDistances)?;
        let mean_model = mean(&self.model).ok_or(ProbeError::NoDistances)?;
        let w1 = wasserstein1(&self.cross, &self.human).ok_or(ProbeError::NoDistances)?;
        Ok(ProbeSummary {
            mean_human,
            mean_model,
            mean_difference: mean_model - mean_human,
            w1_cross_human: w1,
        })
    }
}

/// One production as the probes see it: its words, their parts of speech (tagged in the
/// context), and an embedding of the whole.
#[derive(Clone, Debug, PartialEq)]
pub struct Production {
    pub words: Vec<String>,
    pub tags: Vec<UniversalTag>,
    pub embedding: Option<Vec<f64>>,
}

/// Which distance a probe uses.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Probe {
    /// Fraction of non-matching word n-grams.
    Lexical(usize),
    /// Fraction of non-matching part-of-speech n-grams.
    Syntactic(usize),
    /// Cosine distance of the embeddings.
    Semantic,
}

impl Probe {
    pub const ALL: [Probe; 7] = [
        Probe::Lexical(1),
        Probe::Lexical(2),
        Probe::Lexical(3),
        Probe::Syntactic(1),
        Probe::Syntactic(2),
        Probe::Syntactic(3),
        Probe::Semantic,
    ];

    pub fn label(self) -> String {
        match self {
            Probe::Lexical(n) => format!("lexical {n}-gram"),
            Probe::Syntactic(n) => format!("syntactic {n}-gram"),
            Probe::Semantic => "semantic".into(),
        }
    }

    /// The probe's distance between two productions, in [0, 1]; `None` where it is undefined
    /// (no n-grams in either, no embedding).
    pub fn distance(self, a: &Production, b: &Production) -> Option<f64> {
        match self {
            Probe::Lexical(n) => ngram_distance(&a.words, &b.words, n).ok().flatten(),
            Probe::Syntactic(n) => ngram_distance(&a.tags, &b.tags, n).ok().flatten(),
            Probe::Semantic => cosine_distance(a.embedding.as_deref()?, b.embedding.as_deref()?),
        }
    }
}

/// Cosine distance 1 − cos(a, b), clamped to [0, 1] so that it shares the lexical and syntactic
/// probes' scale (opposed vectors count as unrelated, not as more than unrelated). `None` for a
/// zero vector or vectors of different lengths.
///
/// ```
/// use clozelab::analysis::variability::cosine_distance;
/// assert_eq!(cosine_distance(&[1.0, 0.0], &[2.0, 0.0]), Some(0.0));
/// assert_eq!(cosine_distance(&[1.0, 0.0], &[0.0, 3.0]), Some(1.0));
/// assert_eq!(cosine_distance(&[1.0, 0.0], &[-1.0, 0.0]), Some(1.0));
/// let d = cosine_distance(&[1.0, 1.0], &[1.0, 0.0]).unwrap();
/// assert!((d - (1.0 - 1.0 / 2f64.sqrt())).abs() < 1e-12);
/// assert_eq!(cosine_distance(&[0.0, 0.0], &[1.0, 0.0]), None);
/// ```
pub fn cosine_distance(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() {
        return None;
    }
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norms =
        a.iter().map(|x| x * x).sum::<f64>().sqrt() * b.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norms <= 0.0 || !norms.is_finite() {
        return None;
    }
    Some((1.0 - dot / norms).clamp(0.0, 1.0))
}

/// One context under one probe: the model's summary and the human control group's.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContextProbe {
    pub probe: Probe,
    pub model: ProbeSummary,
    /// `None` with fewer than 4 people.
    pub control: Option<ProbeSummary>,
}

/// Every probe on one context that has distances: the model's samples against people, and the
/// human control (people shuffled by `seed`, then halved).
pub fn probe_context(
    humans: &[Production],
    samples: &[Production],
    seed: u64,
) -> Vec<ContextProbe> {
    let mut shuffled: Vec<&Production> = humans.iter().collect();
    SplitMix64::new(seed).shuffle(&mut shuffled);
    Probe::ALL
        .iter()
        .filter_map(|&probe| {
            let distance = |a: &Production, b: &Production| probe.distance(a, b);
            let model = Variability::new(humans, samples, distance)
                .ok()?
                .summary()
                .ok()?;
            let control = Variability::control(&shuffled, |a: &&Production, b: &&Production| {
                probe.distance(a, b)
            })
            .ok()
            .and_then(|v| v.summary().ok());
            Some(ContextProbe {
                probe,
                model,
                control,
            })
        })
        .collect()
}

/// Per strategy and probe, the means over contexts: μ_M − μ_H, W₁(C, H), and the human
/// control's W₁ (what a model as variable as people would score).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StrategySummary {
    pub strategy: String,
    pub probe: Probe,
    pub contexts: usize,
    pub mean_difference: f64,
    pub w1: f64,
    pub control_w1: Option<f64>,
}

/// Averages `(strategy, context results)` into one [`StrategySummary`] per strategy and probe.
pub fn summarise(results: &[(String, Vec<ContextProbe>)]) -> Vec<StrategySummary> {
    let mut strategies: Vec<&str> = Vec::new();
    for (s, _) in results {
        if !strategies.contains(&s.as_str()) {
            strategies.push(s);
        }
    }
    let mut out = Vec::new();
    for strategy in strategies {
        for probe in Probe::ALL {
            let of_probe: Vec<&ContextProbe> = results
                .iter()
                .filter(|(s, _)| s == strategy)
                .flat_map(|(_, c)| c.iter().filter(|c| c.probe == probe))
                .collect();
            let field = |f: &dyn Fn(&ContextProbe) -> Option<f64>| {
                mean(&of_probe.iter().filter_map(|c| f(c)).collect::<Vec<_>>())
            };
            let (Some(mean_difference), Some(w1)) = (
                field(&|c| Some(c.model.mean_difference)),
                field(&|c| Some(c.model.w1_cross_human)),
            ) else {
                continue;
            };
            out.push(StrategySummary {
                strategy: strategy.to_string(),
                probe,
                contexts: of_probe.len(),
                mean_difference,
                w1,
                control_w1: field(&|c| c.control.map(|s| s.w1_cross_human)),
            });
        }
    }
    out
}

/// Four people (two say "dog") and a model that always says "dog", with tags and embeddings:
/// the example the probes' tests and their figures' tests share.
#[cfg(test)]
pub(crate) fn people_and_a_parrot() -> (Vec<Production>, Vec<Production>) {
    use UniversalTag::*;
    let said = |w: &str, tag, e: f64| Production {
        words: vec![w.to_string()],
        tags: vec![tag],
        embedding: Some(vec![1.0, e]),
    };
    let humans = vec![
        said("dog", Noun, 0.0),
        said("dog", Noun, 0.0),
        said("cat", Noun, 0.1),
        said("ran", Verb, 3.0),
    ];
    let parrot = vec![said("dog", Noun, 0.0); 4];
    (humans, parrot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    #[test]
    fn ngram_distance_is_a_bounded_symmetric_distance() {
        let texts = [
            "the cat sat",
            "the cat ran",
            "a dog",
            "the cat sat down",
            "sat",
        ];
        for a in texts {
            for b in texts {
                for n in 1..=3 {
                    let (x, y) = (words(a), words(b));
                    let d = ngram_distance(&x, &y, n).unwrap();
                    assert_eq!(d, ngram_distance(&y, &x, n).unwrap(), "symmetric");
                    if let Some(d) = d {
                        assert!((0.0..=1.0).contains(&d));
                        if a == b {
                            assert_eq!(d, 0.0);
                        }
                    }
                }
            }
        }
        assert_eq!(
            ngram_distance(&words("a dog"), &words("the cat"), 1),
            Ok(Some(1.0))
        );
        assert_eq!(
            ngram_distance(&words("a dog"), &words("sat"), 2),
            Ok(Some(1.0))
        );
        assert_eq!(ngram_distance::<&str>(&[], &[], 1), Ok(None));
        assert_eq!(
            ngram_distance(&words("a"), &words("a"), 0),
            Err(ProbeError::ZeroN)
        );
    }

    #[test]
    fn variability_counts_each_pair_once_and_the_control_splits_the_humans() {
        let d = |a: &f64, b: &f64| Some((a - b).abs());
        let v = Variability::new(&[0.0, 1.0, 3.0], &[1.0, 2.0], d).unwrap();
        assert_eq!(v.human, [1.0, 3.0, 2.0]);
        assert_eq!(v.model, [1.0]);
        assert_eq!(v.cross, [1.0, 0.0, 2.0, 2.0, 1.0, 1.0]);
        // A model whose samples are people's own productions matches people.
        let humans = [0.0, 1.0, 3.0, 0.0, 1.0, 3.0];
        let c = Variability::control(&humans, d).unwrap();
        assert_eq!(c.human, [1.0, 3.0, 2.0]);
        assert_eq!(c.model, [1.0, 3.0, 2.0]);
        let s = c.summary().unwrap();
        assert_eq!(s.mean_difference, 0.0);
        // C pairs each production with its copy too (distance 0): C = {0,1,3,1,0,2,3,2,0}
        // against H = {1,3,2} gives W₁ = 1/3 + 2/9 + 1/9.
        assert!((s.w1_cross_human - 2.0 / 3.0).abs() < 1e-12, "{s:?}");
        assert_eq!(
            Variability::new(&[0.0], &[1.0, 2.0], d),
            Err(ProbeError::TooFewHumans { needed: 2, got: 1 })
        );
        assert_eq!(
            Variability::new(&[0.0, 1.0], &[1.0], d),
            Err(ProbeError::TooFewSamples(1))
        );
        assert_eq!(
            Variability::control(&[0.0, 1.0, 2.0], d),
            Err(ProbeError::TooFewHumans { needed: 4, got: 3 })
        );
        let undefined =
            Variability::new(&[0.0, 1.0], &[1.0, 2.0], |_: &f64, _: &f64| None).unwrap();
        assert_eq!(undefined.summary(), Err(ProbeError::NoDistances));
    }

    fn production(words: &str, tags: &[UniversalTag], embedding: Option<Vec<f64>>) -> Production {
        Production {
            words: words.split_whitespace().map(str::to_string).collect(),
            tags: tags.to_vec(),
            embedding,
        }
    }

    #[test]
    fn each_probe_distance_on_hand_worked_productions() {
        use UniversalTag::*;
        let a = production("the cat sat", &[Det, Noun, Verb], Some(vec![1.0, 0.0]));
        let b = production("the dog sat", &[Det, Noun, Verb], Some(vec![0.0, 1.0]));
        let c = production("a cat", &[Det, Noun], None);
        // Words: {the, cat, sat} vs {the, dog, sat}: 2 shared of 4 → 0.5; bigrams: 0 of 4 → 1.
        assert_eq!(Probe::Lexical(1).distance(&a, &b), Some(0.5));
        assert_eq!(Probe::Lexical(2).distance(&a, &b), Some(1.0));
        // Same tags throughout: 0 at every n.
        for n in 1..=3 {
            assert_eq!(Probe::Syntactic(n).distance(&a, &b), Some(0.0));
        }
        // Tag bigrams {DET NOUN, NOUN VERB} vs {DET NOUN}: 1 shared of 2.
        assert_eq!(Probe::Syntactic(2).distance(&a, &c), Some(0.5));
        // Orthogonal embeddings: cosine distance 1; no embedding: undefined.
        assert_eq!(Probe::Semantic.distance(&a, &b), Some(1.0));
        assert_eq!(Probe::Semantic.distance(&a, &c), None);
        assert_eq!(Probe::Lexical(3).distance(&c, &c), None);
    }

    #[test]
    fn a_model_that_says_what_people_say_matches_the_control() {
        // The model always says "dog": less varied than people (μM − μH < 0) on every probe.
        let (humans, parrot) = people_and_a_parrot();
        let results = probe_context(&humans, &parrot, 7);
        let probes: Vec<Probe> = results.iter().map(|r| r.probe).collect();
        assert_eq!(
            probes,
            [Probe::Lexical(1), Probe::Syntactic(1), Probe::Semantic]
        );
        for r in &results {
            assert!(
                r.model.mean_model == 0.0 && r.model.mean_difference < 0.0,
                "{r:?}"
            );
            assert!(r.control.is_some());
        }
        // Lexical: H over the 6 pairs of people = {0, 1, 1, 1, 1, 1}: μH = 5/6.
        assert!((results[0].model.mean_human - 5.0 / 6.0).abs() < 1e-12);
        let summary = summarise(&[
            ("parrot".into(), results.clone()),
            ("parrot".into(), results),
        ]);
        assert_eq!(summary.len(), 3);
        assert_eq!(summary[0].contexts, 2);
        assert!((summary[0].mean_difference + 5.0 / 6.0).abs() < 1e-12);
    }
}
