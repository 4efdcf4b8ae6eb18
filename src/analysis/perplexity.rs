//! Human perplexity from the two-token game (Redwood Research, "Language Models Are Better Than
//! Humans at Next-token Prediction"), by importance sampling.
//!
//! In a round at context c with true next token y, the generator G samples x ~ g(·|c); the
//! player says how likely y is the original, `p_true`. The player's implied likelihood ratio is
//! r(x, y | c) = h(x|c)/h(y|c) = (1 − p_true)/p_true. Because E_{x~g}[g(y)/g(x) · h(x)/h(y)] =
//! g(y)/h(y), the rounds i = 1..n of a pair (c, y) estimate
//!
//! d(c, y) = ln( (1/n) Σᵢ g(y|c)/g(xᵢ|c) · r(xᵢ, y | c) ) ≈ ln g(y|c) − ln h(y|c),
//!
//! and over the N pairs, L_G = mean −ln g(y|c), L_h = L_G + mean d, perplexity = exp(loss).
//! With few rounds per pair the logarithm of a mean underestimates (Jensen): the estimate of L_h
//! is biased low, as the paper's Figure 2 shows; [`simulate`] measures by how much.
//!
//! Follows statrs' habits: validating constructors, one error enum, empty input is an error.

use crate::rng::SplitMix64;

/// The 11 answer buttons, in percent: how likely the left token is the original.
pub const BUTTONS: [u8; 11] = [99, 90, 80, 70, 60, 50, 40, 30, 20, 10, 1];

/// Points per nat of the shown reward.
pub const REWARD_SCALE: f64 = 1000.0;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PerplexityError {
    #[error("no answered rounds")]
    Empty,
    #[error("p_true must be strictly between 0 and 1, got {0}")]
    PTrue(f64),
    #[error("a probability under the generator must be in (0, 1], got {0}")]
    Probability(f64),
    #[error("{0} is not one of the 11 buttons (99, 90, …, 10, 1)")]
    Button(u8),
    #[error(
        "simulated context {0}: the generator's and player's distributions differ in length or the true token is outside them"
    )]
    SimContext(usize),
    #[error(
        "the simulation needs positive temperatures, at least one position, repetition and round count"
    )]
    SimSetup,
}

/// A validated answer: the probability the player gave the true token being the original.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PTrue(f64);

impl PTrue {
    /// ```
    /// use clozelab::analysis::perplexity::PTrue;
    /// assert!(PTrue::new(0.9).is_ok());
    /// assert!(PTrue::new(1.0).is_err());
    /// ```
    pub fn new(p: f64) -> Result<Self, PerplexityError> {
        if p.is_finite() && p > 0.0 && p < 1.0 {
            Ok(Self(p))
        } else {
            Err(PerplexityError::PTrue(p))
        }
    }

    /// The answer of a button (percent that the *left* token is the original), given on which
    /// side the true token was shown.
    ///
    /// ```
    /// use clozelab::analysis::perplexity::PTrue;
    /// assert_eq!(PTrue::from_button(80, true).unwrap().get(), 0.8);
    /// assert_eq!(PTrue::from_button(80, false).unwrap().get(), 0.2);
    /// ```
    pub fn from_button(percent_left: u8, true_is_left: bool) -> Result<Self, PerplexityError> {
        if !BUTTONS.contains(&percent_left) {
            return Err(PerplexityError::Button(percent_left));
        }
        let percent_true = if true_is_left {
            percent_left
        } else {
            100 - percent_left
        };
        Self::new(f64::from(percent_true) / 100.0)
    }

    pub fn get(self) -> f64 {
        self.0
    }

    /// r(x, y | c) = (1 − p_true)/p_true, the player's h(x|c)/h(y|c).
    pub fn ratio(self) -> f64 {
        (1.0 - self.0) / self.0
    }

    /// A model player's answer, m(y)/(m(y) + m(x)) from its log-probabilities (natural logs),
    /// unrounded; kept strictly inside (0, 1) where f64 would round to 0 or 1.
    pub fn from_model(logp_true: f64, logp_other: f64) -> Self {
        // 1 / (1 + exp(ln m(x) − ln m(y))), stable for large differences.
        let p = 1.0 / (1.0 + (logp_other - logp_true).exp());
        Self(p.clamp(f64::MIN_POSITIVE, 1.0 - f64::EPSILON))
    }

    /// Rounded as a button player would answer: to the nearest 10 %, clamped to [1 %, 99 %].
    ///
    /// ```
    /// use clozelab::analysis::perplexity::PTrue;
    /// assert_eq!(PTrue::new(0.996).unwrap().rounded().get(), 0.99);
    /// assert_eq!(PTrue::new(0.34).unwrap().rounded().get(), 0.3);
    /// assert_eq!(PTrue::new(0.03).unwrap().rounded().get(), 0.01);
    /// ```
    pub fn rounded(self) -> Self {
        Self(((self.0 * 10.0).round() / 10.0).clamp(0.01, 0.99))
    }
}

/// The reward shown after a round: R = 1000 · g(z|c) · (ln p_z − ln 0.5), z the true token and
/// p_z = `p_true`. Weighting by g(z|c) makes the honest answer optimal whatever the player
/// believes about G.
///
/// ```
/// use clozelab::analysis::perplexity::{reward, PTrue};
/// assert_eq!(reward(0.2, PTrue::new(0.5).unwrap()), 0.0);
/// assert!(reward(0.2, PTrue::new(0.9).unwrap()) > 0.0);
/// ```
pub fn reward(g_true: f64, p_true: PTrue) -> f64 {
    REWARD_SCALE * g_true * (p_true.get().ln() - 0.5f64.ln())
}

/// One answered round of a pair: the generator's log-probability of the other token and the answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    /// ln g(x|c).
    pub logp_other: f64,
    pub p_true: PTrue,
}

/// All rounds at one (context, true token).
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    /// ln g(y|c).
    pub logp_true: f64,
    pub rounds: Vec<Round>,
}

/// What one pair contributes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairEstimate {
    /// d(c, y), an estimate of ln g(y|c) − ln h(y|c).
    pub d: f64,
    /// Standard error of d from the rounds alone: sd(w)/(√n · mean w) (delta method, ln of a mean);
    /// 0 with one round.
    pub se_rounds: f64,
    /// Effective sample size of the weights, (Σw)²/Σw².
    pub ess: f64,
    pub rounds: usize,
}

fn check_logp(logp: f64) -> Result<(), PerplexityError> {
    if logp.is_finite() && logp <= 0.0 {
        Ok(())
    } else {
        Err(PerplexityError::Probability(logp.exp()))
    }
}

impl Pair {
    /// d(c, y) = ln( (1/n) Σᵢ wᵢ ), wᵢ = g(y|c)/g(xᵢ|c) · r(xᵢ, y | c), computed in log space.
    ///
    /// ```
    /// use clozelab::analysis::perplexity::{Pair, PTrue, Round};
    /// // A player who answers exactly like the generator has d = 0.
    /// let (ly, lx) = (0.3f64.ln(), 0.1f64.ln());
    /// let pair = Pair { logp_true: ly, rounds: vec![Round { logp_other: lx, p_true: PTrue::from_model(ly, lx) }] };
    /// assert!(pair.estimate().unwrap().d.abs() < 1e-12);
    /// ```
    pub fn estimate(&self) -> Result<PairEstimate, PerplexityError> {
        if self.rounds.is_empty() {
            return Err(PerplexityError::Empty);
        }
        check_logp(self.logp_true)?;
        let mut log_w = Vec::with_capacity(self.rounds.len());
        for round in &self.rounds {
            check_logp(round.logp_other)?;
            let p = round.p_true.get();
            log_w.push(self.logp_true - round.logp_other + (1.0 - p).ln() - p.ln());
        }
        let max = log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Weights scaled by exp(−max): ratios below are scale-free.
        let scaled: Vec<f64> = log_w.iter().map(|l| (l - max).exp()).collect();
        let n = scaled.len() as f64;
        let sum: f64 = scaled.iter().sum();
        let mean = sum / n;
        let sum_sq: f64 = scaled.iter().map(|w| w * w).sum();
        let se_rounds = if scaled.len() > 1 {
            let var = scaled.iter().map(|w| (w - mean).powi(2)).sum::<f64>() / (n - 1.0);
            var.sqrt() / n.sqrt() / mean
        } else {
            0.0
        };
        Ok(PairEstimate {
            d: max + mean.ln(),
            se_rounds,
            ess: sum * sum / sum_sq,
            rounds: self.rounds.len(),
        })
    }
}

/// The estimate over all pairs (natural logs).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LossEstimate {
    pub pairs: usize,
    pub rounds: usize,
    /// L_G = mean −ln g(y|c).
    pub loss_generator: f64,
    /// L_h = L_G + mean d.
    pub loss_human: f64,
    /// L_h ± 2σ, σ = sd(d)/√N over the N pairs (equal to L_h with one pair).
    pub loss_human_low: f64,
    pub loss_human_high: f64,
    pub perplexity_human: f64,
    pub perplexity_human_low: f64,
    pub perplexity_human_high: f64,
    /// σ over pairs.
    pub se_pairs: f64,
    /// The rounds' own uncertainty propagated to L_h: √(Σ se_rounds²)/N.
    pub se_rounds: f64,
    /// Mean effective sample size per pair.
    pub mean_ess: f64,
}

/// L_h and its uncertainty from answered pairs.
///
/// ```
/// use clozelab::analysis::perplexity::{estimate_loss, Pair, PTrue, Round};
/// let pair = Pair { logp_true: 0.5f64.ln(), rounds: vec![Round { logp_other: 0.25f64.ln(), p_true: PTrue::new(0.5).unwrap() }] };
/// let e = estimate_loss(&[pair]).unwrap();
/// // d = ln(0.5/0.25 · 1) = ln 2, so L_h = ln 2 + ln 2.
/// assert!((e.loss_human - 2.0 * 2f64.ln()).abs() < 1e-12);
/// ```
pub fn estimate_loss(pairs: &[Pair]) -> Result<LossEstimate, PerplexityError> {
    if pairs.is_empty() {
        return Err(PerplexityError::Empty);
    }
    let estimates: Vec<PairEstimate> =
        pairs.iter().map(Pair::estimate).collect::<Result<_, _>>()?;
    let n = pairs.len() as f64;
    let loss_generator = pairs.iter().map(|p| -p.logp_true).sum::<f64>() / n;
    let mean_d = estimates.iter().map(|e| e.d).sum::<f64>() / n;
    let se_pairs = if pairs.len() > 1 {
        let var = estimates
            .iter()
            .map(|e| (e.d - mean_d).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        var.sqrt() / n.sqrt()
    } else {
        0.0
    };
    let se_rounds = estimates
        .iter()
        .map(|e| e.se_rounds.powi(2))
        .sum::<f64>()
        .sqrt()
        / n;
    let loss_human = loss_generator + mean_d;
    let (low, high) = (loss_human - 2.0 * se_pairs, loss_human + 2.0 * se_pairs);
    Ok(LossEstimate {
        pairs: pairs.len(),
        rounds: estimates.iter().map(|e| e.rounds).sum(),
        loss_generator,
        loss_human,
        loss_human_low: low,
        loss_human_high: high,
        perplexity_human: loss_human.exp(),
        perplexity_human_low: low.exp(),
        perplexity_human_high: high.exp(),
        se_pairs,
        se_rounds,
        mean_ess: estimates.iter().map(|e| e.ess).sum::<f64>() / n,
    })
}

/// A model as a player on the same rounds: p_true = m(y)/(m(y) + m(x)), unrounded or rounded to
/// the buttons' 10 % steps. `logp_model[i]` = (ln m(y|c), ln m(xⱼ|c) for each round j) of pair i.
pub fn model_player_pairs(
    pairs: &[Pair],
    logp_model: &[(f64, Vec<f64>)],
    rounded: bool,
) -> Vec<Pair> {
    pairs
        .iter()
        .zip(logp_model)
        .map(|(pair, (m_true, m_others))| Pair {
            logp_true: pair.logp_true,
            rounds: pair
                .rounds
                .iter()
                .zip(m_others)
                .map(|(round, m_other)| {
                    let p = PTrue::from_model(*m_true, *m_other);
                    Round {
                        logp_other: round.logp_other,
                        p_true: if rounded { p.rounded() } else { p },
                    }
                })
                .collect(),
        })
        .collect()
}

/// Cumulative sums of a probability vector, for drawing by binary search (the vocabulary is
/// 50257 entries and a simulation draws hundreds of thousands of times).
struct Cdf(Vec<f64>);

impl Cdf {
    fn new(probs: &[f64]) -> Self {
        let mut acc = 0.0;
        Self(
            probs
                .iter()
                .map(|p| {
                    acc += p;
                    acc
                })
                .collect(),
        )
    }

    fn draw(&self, rng: &mut SplitMix64) -> usize {
        let total = self.0.last().copied().unwrap_or(0.0);
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
        self.0
            .partition_point(|&c| c <= u)
            .min(self.0.len().saturating_sub(1))
    }
}

/// Where a simulated context's true next token comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrueToken {
    /// The text's own token.
    Fixed(usize),
    /// Drawn from the player at each repetition (the player knows the language exactly).
    FromPlayer,
    /// Drawn from the generator at each repetition (the text is what the generator would write).
    FromGenerator,
}

/// One simulated context: the generator's and the (known) player's next-token distributions,
/// and where the true next token comes from.
#[derive(Clone, Debug)]
pub struct SimContext {
    pub generator: Vec<f64>,
    pub player: Vec<f64>,
    pub true_token: TrueToken,
}

/// The estimator-bias simulation (the paper's Figure 2) as the CLI and the page run it: the
/// generator is the model at `generator_temperature`; the known player is the generator at
/// `player_temperature` (the model at their product), answering every round exactly.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BiasSetup {
    /// Contexts: the first `positions` positions of the passages.
    pub positions: usize,
    pub generator_temperature: f64,
    pub player_temperature: f64,
    /// True tokens drawn from the generator (text as the model would write it) instead of the
    /// passage's own.
    pub truth_from_generator: bool,
    pub rounds_per_pair: Vec<usize>,
    pub repetitions: usize,
    pub seed: u64,
}

impl BiasSetup {
    /// Checks the setup before any forward pass.
    ///
    /// ```
    /// use clozelab::analysis::perplexity::BiasSetup;
    /// let mut s = BiasSetup::paper_default();
    /// assert!(s.validate().is_ok());
    /// s.player_temperature = 0.0;
    /// assert!(s.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), PerplexityError> {
        let positive = |t: f64| t.is_finite() && t > 0.0;
        let ok = positive(self.generator_temperature)
            && positive(self.player_temperature)
            && self.positions > 0
            && self.repetitions > 0
            && !self.rounds_per_pair.is_empty()
            && self.rounds_per_pair.iter().all(|&n| n > 0);
        if ok {
            Ok(())
        } else {
            Err(PerplexityError::SimSetup)
        }
    }

    /// n = 1, 4, 10, 40 rounds per pair, 40 positions, 200 repetitions, player at T = 0.7.
    pub fn paper_default() -> Self {
        Self {
            positions: 40,
            generator_temperature: 1.0,
            player_temperature: 0.7,
            truth_from_generator: false,
            rounds_per_pair: vec![1, 4, 10, 40],
            repetitions: 200,
            seed: 0,
        }
    }

    /// One simulated context from the model's log-probabilities at a position whose own next
    /// token is `text_token`: g = softmax(ℓ/T_g), h = softmax(ℓ/(T_g·T_p)).
    pub fn context(&self, logprobs: &[f32], text_token: u32) -> SimContext {
        let g = self.generator_temperature;
        SimContext {
            generator: softmax_at(logprobs, g),
            player: softmax_at(logprobs, g * self.player_temperature),
            true_token: if self.truth_from_generator {
                TrueToken::FromGenerator
            } else {
                TrueToken::Fixed(text_token as usize)
            },
        }
    }
}

/// softmax(ℓ / t), in f64.
fn softmax_at(logprobs: &[f32], t: f64) -> Vec<f64> {
    let scaled: Vec<f64> = logprobs.iter().map(|l| f64::from(*l) / t).collect();
    let max = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = scaled.iter().map(|s| (s - max).exp()).sum();
    scaled.iter().map(|s| (s - max).exp() / z).collect()
}

/// Estimated minus true loss at one number of rounds per pair.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BiasPoint {
    pub rounds_per_pair: usize,
    pub true_loss: f64,
    /// Mean over repetitions of the estimated L_h.
    pub mean_estimate: f64,
    /// Mean over repetitions of (estimate − true loss on the same true tokens).
    pub bias: f64,
    /// Standard deviation of (estimate − true loss) over repetitions.
    pub sd: f64,
}

/// Plays a known player (exact ratios h(x)/h(y), no rounding) against the generator: x ~ g,
/// `n` rounds per pair, `repetitions` times; returns how far the estimate falls from the
/// player's true loss, mean −ln h(y|c) over the same true tokens.
pub fn simulate(
    contexts: &[SimContext],
    rounds_per_pair: &[usize],
    repetitions: usize,
    seed: u64,
) -> Result<Vec<BiasPoint>, PerplexityError> {
    if contexts.is_empty() || repetitions == 0 {
        return Err(PerplexityError::Empty);
    }
    for (i, c) in contexts.iter().enumerate() {
        let len = c.generator.len();
        let outside = matches!(c.true_token, TrueToken::Fixed(y) if y >= len);
        if len == 0 || c.player.len() != len || outside {
            return Err(PerplexityError::SimContext(i));
        }
    }
    let generator_cdfs: Vec<Cdf> = contexts.iter().map(|c| Cdf::new(&c.generator)).collect();
    let player_cdfs: Vec<Cdf> = contexts.iter().map(|c| Cdf::new(&c.player)).collect();
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::new();
    for &n in rounds_per_pair {
        if n == 0 {
            return Err(PerplexityError::Empty);
        }
        let mut estimates = Vec::with_capacity(repetitions);
        let mut true_losses = Vec::with_capacity(repetitions);
        let mut errors = Vec::with_capacity(repetitions);
        for _ in 0..repetitions {
            let mut pairs = Vec::with_capacity(contexts.len());
            let mut true_loss = 0.0;
            for ((c, g_cdf), h_cdf) in contexts.iter().zip(&generator_cdfs).zip(&player_cdfs) {
                let y = match c.true_token {
                    TrueToken::Fixed(y) => y,
                    TrueToken::FromPlayer => h_cdf.draw(&mut rng),
                    TrueToken::FromGenerator => g_cdf.draw(&mut rng),
                };
                true_loss -= c.player[y].ln();
                let rounds = (0..n)
                    .map(|_| {
                        let x = g_cdf.draw(&mut rng);
                        // The player's exact belief that y is the original: h(y)/(h(y)+h(x)).
                        let p = if x == y {
                            0.5
                        } else {
                            c.player[y] / (c.player[y] + c.player[x])
                        };
                        Ok(Round {
                            logp_other: c.generator[x].ln(),
                            p_true: PTrue::new(p)?,
                        })
                    })
                    .collect::<Result<_, PerplexityError>>()?;
                pairs.push(Pair {
                    logp_true: c.generator[y].ln(),
                    rounds,
                });
            }
            let estimate = estimate_loss(&pairs)?.loss_human;
            let true_loss = true_loss / contexts.len() as f64;
            estimates.push(estimate);
            true_losses.push(true_loss);
            errors.push(estimate - true_loss);
        }
        let r = repetitions as f64;
        let bias = errors.iter().sum::<f64>() / r;
        let sd = (errors.iter().map(|e| (e - bias).powi(2)).sum::<f64>() / r).sqrt();
        out.push(BiasPoint {
            rounds_per_pair: n,
            true_loss: true_losses.iter().sum::<f64>() / r,
            mean_estimate: estimates.iter().sum::<f64>() / r,
            bias,
            sd,
        });
    }
    Ok(out)
}
