//! What re-storing a model's weights (quantizing them) costs the science, measured on texts:
//! at every position of every text, the total variation distance between the two models'
//! next-token distributions, and the difference in the surprisal of the token that follows.

use burn::tensor::activation::log_softmax;

use crate::model::readback::read_f32;
use crate::model::{ModelError, Transformer};

/// Differences between two models' next-token predictions over the same tokens.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct QuantizationCost {
    /// Positions compared (each predicts the next token of a text).
    pub positions: usize,
    /// Mean and largest TVD, ½ Σ |p − q|, between the next-token distributions.
    pub mean_tvd: f64,
    pub worst_tvd: f64,
    /// Mean and largest |Δ surprisal| of the token that follows, in bits.
    pub mean_abs_surprisal_bits: f64,
    pub worst_abs_surprisal_bits: f64,
}

/// Sums of one comparison, folded over positions.
#[derive(Default)]
struct Sums {
    positions: usize,
    tvd: f64,
    worst_tvd: f64,
    surprisal: f64,
    worst_surprisal: f64,
}

/// The total variation distance of two distributions given as log-probabilities.
///
/// ```
/// use clozelab::runtime::quantization_cost::tvd_of_logprobs;
/// let p = [0.5f32.ln(), 0.5f32.ln(), f32::NEG_INFINITY];
/// let q = [0.25f32.ln(), 0.25f32.ln(), 0.5f32.ln()];
/// assert!((tvd_of_logprobs(&p, &q) - 0.5).abs() < 1e-6);
/// ```
pub fn tvd_of_logprobs(p: &[f32], q: &[f32]) -> f64 {
    0.5 * p
        .iter()
        .zip(q)
        .map(|(a, b)| (f64::from(a.exp()) - f64::from(b.exp())).abs())
        .sum::<f64>()
}

/// The cost over `texts`, each given as the token ids the models read (at least two; longer
/// than a model's positions is an error). `None` where no text has two tokens.
pub async fn quantization_cost(
    original: &Transformer,
    quantized: &Transformer,
    texts: &[Vec<u32>],
) -> Result<Option<QuantizationCost>, ModelError> {
    let vocab = original.vocab_size;
    let mut sums = Sums::default();
    for ids in texts.iter().filter(|ids| ids.len() >= 2) {
        let run = async |model: &Transformer| {
            let tokens = model.token_tensor(std::slice::from_ref(ids))?;
            read_f32(log_softmax(model.forward(tokens)?, 2)).await
        };
        let a = run(original).await?;
        let b = run(quantized).await?;
        for (t, (p, q)) in a.chunks(vocab).zip(b.chunks(vocab)).enumerate() {
            let Some(&next) = ids.get(t + 1) else {
                break;
            };
            let tvd = tvd_of_logprobs(p, q);
            let ds =
                f64::from((p[next as usize] - q[next as usize]).abs()) / std::f64::consts::LN_2;
            sums.positions += 1;
            sums.tvd += tvd;
            sums.worst_tvd = sums.worst_tvd.max(tvd);
            sums.surprisal += ds;
            sums.worst_surprisal = sums.worst_surprisal.max(ds);
        }
    }
    Ok((sums.positions > 0).then(|| QuantizationCost {
        positions: sums.positions,
        mean_tvd: sums.tvd / sums.positions as f64,
        worst_tvd: sums.worst_tvd,
        mean_abs_surprisal_bits: sums.surprisal / sums.positions as f64,
        worst_abs_surprisal_bits: sums.worst_surprisal,
    }))
}
