//! Decoding strategies as transforms of a next-token distribution (what the samplers draw with):
//! temperature, top-k, top-p (nucleus, Holtzman et al. 2020) and locally typical sampling
//! (Meister et al. 2023), then a seeded categorical draw. Pure CPU code on log-probabilities, so
//! every backend and the tests share it.

use crate::rng::SplitMix64;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SamplingError {
    #[error("temperature must be a positive finite number, got {0}")]
    Temperature(f64),
    #[error("top-k must be at least 1")]
    TopK,
    #[error("top-p must be in (0, 1], got {0}")]
    TopP(f64),
    #[error("typical mass must be in (0, 1], got {0}")]
    Typical(f64),
    #[error("the distribution is empty or has no finite log-probability")]
    Empty,
    #[error(
        "a strategy is ancestral, or temperature=T, top-k=K, top-p=P, typical=P joined by \",\", not {0:?}"
    )]
    Spec(String),
}

/// A decoding strategy: temperature first, then the truncations that are set.
///
/// The one shape a strategy has everywhere: in the samplers, on the worker's wire (checked
/// again when a message is decoded: an invalid one is never built) and as text
/// (`"top-p=0.9"`, see its `FromStr` and `Display`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "DecodingParameters")]
pub struct DecodingStrategy {
    temperature: f64,
    top_k: Option<usize>,
    top_p: Option<f64>,
    typical: Option<f64>,
}

impl Default for DecodingStrategy {
    /// Ancestral sampling: temperature 1, no truncation.
    fn default() -> Self {
        Self {
            temperature: 1.0,
            top_k: None,
            top_p: None,
            typical: None,
        }
    }
}

/// A strategy's fields as they arrive, before [`DecodingStrategy::new`] checks them.
#[derive(serde::Deserialize)]
struct DecodingParameters {
    temperature: f64,
    top_k: Option<usize>,
    top_p: Option<f64>,
    typical: Option<f64>,
}

impl TryFrom<DecodingParameters> for DecodingStrategy {
    type Error = SamplingError;
    fn try_from(p: DecodingParameters) -> Result<Self, SamplingError> {
        Self::new(p.temperature, p.top_k, p.top_p, p.typical)
    }
}

impl std::str::FromStr for DecodingStrategy {
    type Err = SamplingError;

    /// `ancestral`, or any of `temperature=T`, `top-k=K`, `top-p=P`, `typical=P` joined by `,`.
    ///
    /// ```
    /// use clozelab::estimators::decoding::DecodingStrategy;
    /// let parse = |s: &str| s.parse::<DecodingStrategy>();
    /// assert!(parse("ancestral").unwrap().is_ancestral());
    /// assert_eq!(parse("temperature=0.5").unwrap().temperature(), 0.5);
    /// assert!(parse("top-p=0.9").unwrap().truncates());
    /// assert_eq!(parse("temperature=0.7,top-k=40").unwrap().to_string(), "temperature=0.7,top-k=40");
    /// assert!(parse("top-k=0").is_err());
    /// assert!(parse("greedy").is_err());
    /// ```
    fn from_str(spec: &str) -> Result<Self, SamplingError> {
        let bad = || SamplingError::Spec(spec.to_string());
        let spec_trimmed = spec.trim();
        if spec_trimmed == "ancestral" {
            return Ok(Self::default());
        }
        let (mut temperature, mut top_k, mut top_p, mut typical) = (None, None, None, None);
        for part in spec_trimmed.split(',') {
            let (name, value) = part.trim().split_once('=').ok_or_else(bad)?;
            let number = || value.trim().parse::<f64>().map_err(|_| bad());
            let slot_was_empty = match name.trim() {
                "temperature" => temperature.replace(number()?).is_none(),
                "top-k" => top_k
                    .replace(value.trim().parse::<usize>().map_err(|_| bad())?)
                    .is_none(),
                "top-p" => top_p.replace(number()?).is_none(),
                "typical" => typical.replace(number()?).is_none(),
                _ => return Err(bad()),
            };
            if !slot_was_empty {
                return Err(bad());
            }
        }
        Self::new(temperature.unwrap_or(1.0), top_k, top_p, typical)
    }
}

impl std::fmt::Display for DecodingStrategy {
    /// The text `FromStr` reads back: `ancestral`, or the settings that
    /// differ from it, joined by `,`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if self.temperature != 1.0 {
            parts.push(format!("temperature={}", self.temperature));
        }
        if let Some(k) = self.top_k {
            parts.push(format!("top-k={k}"));
        }
        if let Some(p) = self.top_p {
            parts.push(format!("top-p={p}"));
        }
        if let Some(t) = self.typical {
            parts.push(format!("typical={t}"));
        }
        if parts.is_empty() {
            f.write_str("ancestral")
        } else {
            f.write_str(&parts.join(","))
        }
    }
}

impl DecodingStrategy {
    /// Validates every parameter.
    pub fn new(
        temperature: f64,
        top_k: Option<usize>,
        top_p: Option<f64>,
        typical: Option<f64>,
    ) -> Result<Self, SamplingError> {
        if !(temperature.is_finite() && temperature > 0.0) {
            return Err(SamplingError::Temperature(temperature));
        }
        if top_k == Some(0) {
            return Err(SamplingError::TopK);
        }
        if let Some(p) = top_p
            && !(p > 0.0 && p <= 1.0)
        {
            return Err(SamplingError::TopP(p));
        }
        if let Some(t) = typical
            && !(t > 0.0 && t <= 1.0)
        {
            return Err(SamplingError::Typical(t));
        }
        Ok(Self {
            temperature,
            top_k,
            top_p,
            typical,
        })
    }

    /// Whether this is plain ancestral sampling.
    pub fn is_ancestral(&self) -> bool {
        *self == Self::default()
    }

    /// Whether any truncation (top-k, top-p, typical) is set, beyond temperature.
    pub fn truncates(&self) -> bool {
        self.top_k.is_some() || self.top_p.is_some() || self.typical.is_some()
    }

    /// The temperature.
    pub fn temperature(&self) -> f64 {
        self.temperature
    }

    /// The distribution to sample from, as probabilities over the vocabulary (zeros outside the
    /// kept set), from natural-log probabilities or logits.
    ///
    /// - temperature T: p ∝ exp(logit / T)
    /// - top-k: keep the k most probable tokens
    /// - top-p: keep the smallest most-probable set whose mass reaches p
    /// - typical τ: with H = −Σ p log p, keep tokens in increasing order of |−log p − H| until
    ///   their mass reaches τ
    ///
    /// Ties are broken by lower token id, so the kept set is deterministic.
    ///
    /// ```
    /// use clozelab::estimators::decoding::DecodingStrategy;
    /// let s = DecodingStrategy::new(1.0, Some(2), None, None).unwrap();
    /// let p = s.apply(&[0.5f32.ln(), 0.3f32.ln(), 0.2f32.ln()]).unwrap();
    /// assert!((p[0] - 0.625).abs() < 1e-6 && (p[1] - 0.375).abs() < 1e-6 && p[2] == 0.0);
    /// ```
    pub fn apply(&self, logits: &[f32]) -> Result<Vec<f64>, SamplingError> {
        let max = logits
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .fold(f32::NEG_INFINITY, f32::max);
        if !max.is_finite() {
            return Err(SamplingError::Empty);
        }
        let mut probs: Vec<f64> = logits
            .iter()
            .map(|&x| {
                if x.is_finite() {
                    ((x - max) as f64 / self.temperature).exp()
                } else {
                    0.0
                }
            })
            .collect();
        normalise(&mut probs);
        if !self.truncates() {
            return Ok(probs);
        }
        let mut order: Vec<usize> = (0..probs.len()).filter(|&i| probs[i] > 0.0).collect();
        let by_probability = |a: &usize, b: &usize| probs[*b].total_cmp(&probs[*a]).then(a.cmp(b));
        let (top_k, top_p) = (self.top_k, self.top_p);
        let mut keep = order.len();
        if top_k.is_some() || top_p.is_some() {
            let sorted = sort_prefix_until(&mut order, by_probability, |prefix| {
                top_k.is_some_and(|k| prefix.len() >= k)
                    || top_p.is_some_and(|p| reaches(prefix.iter().map(|&i| probs[i]), p))
            });
            if let Some(k) = top_k {
                keep = keep.min(k);
            }
            if let Some(p) = top_p {
                keep = keep.min(prefix_reaching(
                    order[..sorted].iter().map(|&i| probs[i]),
                    p,
                ));
            }
        }
        let mut kept: Vec<usize> = order[..keep].to_vec();
        if let Some(tau) = self.typical {
            let (sub, entropy) = mass_and_entropy(&kept, &probs);
            let surprise_gap = |i: usize| ((-(probs[i] / sub).ln()) - entropy).abs();
            let sorted = sort_prefix_until(
                &mut kept,
                |&a, &b| surprise_gap(a).total_cmp(&surprise_gap(b)).then(a.cmp(&b)),
                |prefix| reaches(prefix.iter().map(|&i| probs[i] / sub), tau),
            );
            let n = prefix_reaching(kept[..sorted].iter().map(|&i| probs[i] / sub), tau);
            kept.truncate(n);
        }
        let mut out = vec![0.0; probs.len()];
        for i in kept {
            out[i] = probs[i];
        }
        normalise(&mut out);
        Ok(out)
    }
}

/// Sorts `items` by `order` only as far as `enough` needs: grows a sorted prefix (64 items, then
/// four times more each round) until `enough(prefix)` holds or the whole slice is sorted, and
/// returns the prefix's length. A full sort of GPT-2's 50 257 tokens for every sampled row was
/// most of the samplers' time, while top-k, top-p and typical sampling read only a short head.
/// `order` must be a total order (ties broken by id), so the prefix is exactly what a full sort
/// would put there.
fn sort_prefix_until(
    items: &mut [usize],
    order: impl Fn(&usize, &usize) -> std::cmp::Ordering,
    enough: impl Fn(&[usize]) -> bool,
) -> usize {
    let mut len = items.len().min(64);
    loop {
        if len < items.len() {
            items.select_nth_unstable_by(len, &order);
        }
        items[..len].sort_unstable_by(&order);
        if len == items.len() || enough(&items[..len]) {
            return len;
        }
        len = (len * 4).min(items.len());
    }
}

/// Whether the running sum of `items` reaches `mass`, as `prefix_reaching` decides it.
fn reaches(items: impl Iterator<Item = f64>, mass: f64) -> bool {
    let mut total = 0.0;
    items.into_iter().any(|p| {
        total += p;
        total >= mass - 1e-12
    })
}

/// The mass of the `kept` tokens and the entropy H = −Σ p log p of their renormalised
/// distribution (what typical sampling measures surprise against).
fn mass_and_entropy(kept: &[usize], probs: &[f64]) -> (f64, f64) {
    let sub: f64 = kept.iter().map(|&i| probs[i]).sum();
    let entropy = -kept
        .iter()
        .map(|&i| probs[i] / sub)
        .filter(|p| *p > 0.0)
        .map(|p| p * p.ln())
        .sum::<f64>();
    (sub, entropy)
}

/// Number of leading items whose running sum first reaches `mass` (at least 1).
fn prefix_reaching(items: impl Iterator<Item = f64>, mass: f64) -> usize {
    let mut total = 0.0;
    let mut n = 0;
    for p in items {
        total += p;
        n += 1;
        if total >= mass - 1e-12 {
            break;
        }
    }
    n.max(1)
}

fn normalise(probs: &mut [f64]) {
    let sum: f64 = probs.iter().sum();
    if sum > 0.0 {
        probs.iter_mut().for_each(|p| *p /= sum);
    }
}

/// Draws `n` ids from `probs` as one multinomial: returns (id, count) for ids drawn at least once,
/// by increasing id. Uses inverse-CDF draws with a seeded generator.
pub fn multinomial(probs: &[f64], n: usize, rng: &mut SplitMix64) -> Vec<(u32, usize)> {
    let mut cdf = Vec::with_capacity(probs.len());
    let mut total = 0.0;
    for p in probs {
        total += p.max(0.0);
        cdf.push(total);
    }
    let mut counts = std::collections::BTreeMap::new();
    if total <= 0.0 {
        return Vec::new();
    }
    for _ in 0..n {
        // 53 random bits → uniform in [0, total).
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
        let id = cdf.partition_point(|&c| c <= u).min(probs.len() - 1);
        *counts.entry(id as u32).or_insert(0) += 1;
    }
    counts.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn logs(p: &[f64]) -> Vec<f32> {
        p.iter().map(|x| (*x as f32).ln()).collect()
    }

    #[test]
    fn validation() {
        assert!(DecodingStrategy::new(0.0, None, None, None).is_err());
        assert!(DecodingStrategy::new(f64::NAN, None, None, None).is_err());
        assert_eq!(
            DecodingStrategy::new(1.0, Some(0), None, None),
            Err(SamplingError::TopK)
        );
        assert!(DecodingStrategy::new(1.0, None, Some(0.0), None).is_err());
        assert!(DecodingStrategy::new(1.0, None, Some(1.5), None).is_err());
        assert!(DecodingStrategy::new(1.0, None, None, Some(-0.1)).is_err());
        assert!(DecodingStrategy::default().is_ancestral());
        assert_eq!(
            DecodingStrategy::default().apply(&[f32::NEG_INFINITY, f32::NAN]),
            Err(SamplingError::Empty)
        );
        assert_eq!(
            DecodingStrategy::default().apply(&[]),
            Err(SamplingError::Empty)
        );
    }

    #[test]
    fn temperature_sharpens_and_flattens() {
        let base = logs(&[0.6, 0.3, 0.1]);
        let cold = DecodingStrategy::new(0.5, None, None, None)
            .unwrap()
            .apply(&base)
            .unwrap();
        // p^(1/T) renormalised: 0.36, 0.09, 0.01 over 0.46.
        assert!((cold[0] - 0.36 / 0.46).abs() < 1e-6);
        let hot = DecodingStrategy::new(1e6, None, None, None)
            .unwrap()
            .apply(&base)
            .unwrap();
        assert!(hot.iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-5));
        let same = DecodingStrategy::default().apply(&base).unwrap();
        assert!((same[1] - 0.3).abs() < 1e-6);
    }

    #[test]
    fn top_p_keeps_smallest_set_reaching_mass() {
        let base = logs(&[0.1, 0.5, 0.25, 0.15]);
        let p = DecodingStrategy::new(1.0, None, Some(0.7), None)
            .unwrap()
            .apply(&base)
            .unwrap();
        assert_eq!(p.iter().filter(|x| **x > 0.0).count(), 2);
        assert!((p[1] - 0.5 / 0.75).abs() < 1e-6 && p[0] == 0.0 && p[3] == 0.0);
        let all = DecodingStrategy::new(1.0, None, Some(1.0), None)
            .unwrap()
            .apply(&base)
            .unwrap();
        assert_eq!(all.iter().filter(|x| **x > 0.0).count(), 4);
        let tiny = DecodingStrategy::new(1.0, None, Some(1e-9), None)
            .unwrap()
            .apply(&base)
            .unwrap();
        assert_eq!(tiny[1], 1.0, "at least the mode is kept");
    }

    #[test]
    fn typical_keeps_tokens_closest_to_the_entropy() {
        // H = 1.0397 nats; −log p: 0.29 (p=.75), 2.30 (p=.1 ×2), 2.99 (p=.05).
        let base = logs(&[0.75, 0.1, 0.1, 0.05]);
        let p = DecodingStrategy::new(1.0, None, None, Some(0.5))
            .unwrap()
            .apply(&base)
            .unwrap();
        // |0.29−1.04| = 0.75 is closest, so the mode alone (mass 0.75 ≥ 0.5) is kept.
        assert_eq!(p[0], 1.0);
        let q = DecodingStrategy::new(1.0, None, None, Some(0.8))
            .unwrap()
            .apply(&base)
            .unwrap();
        assert_eq!(q.iter().filter(|x| **x > 0.0).count(), 2);
        assert!(q[1] > 0.0 && q[2] == 0.0, "ties go to the lower id");
    }

    /// The kept set by sorting every token, as `apply` did before it sorted only the head.
    fn apply_by_full_sort(s: &DecodingStrategy, logits: &[f32]) -> Vec<f64> {
        let probs = DecodingStrategy::new(s.temperature, None, None, None)
            .unwrap()
            .apply(logits)
            .unwrap();
        if !s.truncates() {
            return probs;
        }
        let mut order: Vec<usize> = (0..probs.len()).filter(|&i| probs[i] > 0.0).collect();
        order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]).then(a.cmp(&b)));
        let mut keep = order.len();
        if let Some(k) = s.top_k {
            keep = keep.min(k);
        }
        if let Some(p) = s.top_p {
            keep = keep.min(prefix_reaching(order.iter().map(|&i| probs[i]), p));
        }
        let mut kept: Vec<usize> = order[..keep].to_vec();
        if let Some(tau) = s.typical {
            let (sub, entropy) = mass_and_entropy(&kept, &probs);
            kept.sort_by(|&a, &b| {
                let da = ((-(probs[a] / sub).ln()) - entropy).abs();
                let db = ((-(probs[b] / sub).ln()) - entropy).abs();
                da.total_cmp(&db).then(a.cmp(&b))
            });
            kept.truncate(prefix_reaching(kept.iter().map(|&i| probs[i] / sub), tau));
        }
        let mut out = vec![0.0; probs.len()];
        for i in kept {
            out[i] = probs[i];
        }
        normalise(&mut out);
        out
    }

    proptest! {
        #[test]
        fn sorting_only_the_head_keeps_what_a_full_sort_keeps(
            // Few distinct values, so ties are common; up to 2000 tokens, past the first prefix.
            logits in proptest::collection::vec(
                prop_oneof![(-8i32..=0).prop_map(|x| x as f32 * 0.5), Just(f32::NEG_INFINITY)],
                1..2000,
            ),
            temperature in 0.2f64..2.0,
            top_k in proptest::option::of(1usize..300),
            top_p in proptest::option::of(0.05f64..=1.0),
            typical in proptest::option::of(0.05f64..=1.0),
        ) {
            let s = DecodingStrategy::new(temperature, top_k, top_p, typical).unwrap();
            match s.apply(&logits) {
                Ok(fast) => prop_assert_eq!(fast, apply_by_full_sort(&s, &logits)),
                Err(e) => prop_assert_eq!(e, SamplingError::Empty),
            }
        }

        #[test]
        fn a_strategy_reads_back_from_its_text_and_from_the_wire(
            temperature in 0.05f64..4.0,
            top_k in proptest::option::of(1usize..50_000),
            top_p in proptest::option::of(0.01f64..=1.0),
            typical in proptest::option::of(0.01f64..=1.0),
        ) {
            let s = DecodingStrategy::new(temperature, top_k, top_p, typical).unwrap();
            prop_assert_eq!(s.to_string().parse::<DecodingStrategy>(), Ok(s.clone()));
            let json = serde_json::to_string(&s).unwrap();
            prop_assert_eq!(serde_json::from_str::<DecodingStrategy>(&json).ok(), Some(s));
        }
    }

    #[test]
    fn an_invalid_strategy_is_never_built_from_text_or_from_the_wire() {
        for text in [
            "",
            "greedy",
            "top-k=0",
            "top-p=1.5",
            "temperature=0",
            "top-k=4,top-k=5",
            "typical",
        ] {
            assert!(text.parse::<DecodingStrategy>().is_err(), "{text:?}");
        }
        let wire = r#"{"temperature":-1.0,"top_k":null,"top_p":null,"typical":null}"#;
        let error = serde_json::from_str::<DecodingStrategy>(wire).unwrap_err();
        assert!(error.to_string().contains("temperature"), "{error}");
    }

    #[test]
    fn multinomial_matches_probabilities() {
        let probs = [0.5, 0.0, 0.3, 0.2];
        let mut rng = SplitMix64::new(9);
        let n = 100_000;
        let counts = multinomial(&probs, n, &mut rng);
        assert!(
            counts.iter().all(|(id, _)| *id != 1),
            "zero-probability ids never drawn"
        );
        assert_eq!(counts.iter().map(|(_, c)| c).sum::<usize>(), n);
        // Chi-square with 2 degrees of freedom; 13.8 is the 0.999 quantile.
        let chi2: f64 = counts
            .iter()
            .map(|(id, c)| {
                let e = probs[*id as usize] * n as f64;
                (*c as f64 - e).powi(2) / e
            })
            .sum();
        assert!(chi2 < 13.8, "chi2 = {chi2}");
        assert!(multinomial(&[0.0, 0.0], 5, &mut rng).is_empty());
    }
}
