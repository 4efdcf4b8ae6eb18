//! Rotary position embeddings (Su et al. 2021) as GPT-NeoX (Pythia: on part of each head) and
//! Llama-style models (SmolLM2: on all of it) apply them to the queries and keys: the first
//! `dims` values of each head turned by position-dependent angles, in Hugging Face's
//! `rotate_half` layout (the two halves of those values are the pairs), the rest passed through.

use burn::tensor::{Device, Int, Tensor, TensorData};

use super::backend::Composed;
pub use crate::model::error::RotaryError;

/// The rotation frequencies `1 / base^(2i / dims)` for `i < dims / 2`, in f32 as Hugging Face
/// computes them, so that the angles `position · frequency` round as its do.
#[derive(Clone, Debug, PartialEq)]
pub struct RotaryTable {
    frequencies: Vec<f32>,
}

impl RotaryTable {
    /// The table for rotating the first `dims` values of each head with `base` (θ, Hugging
    /// Face's `rope_theta` or `rotary_emb_base`).
    ///
    /// ```
    /// use clozelab::model::ops::rotary::RotaryTable;
    /// let table = RotaryTable::new(4, 10_000.0).unwrap();
    /// assert_eq!(table.dims(), 4);
    /// assert!(RotaryTable::new(3, 10_000.0).is_err() && RotaryTable::new(4, 0.0).is_err());
    /// ```
    pub fn new(dims: usize, base: f64) -> Result<Self, RotaryError> {
        if dims == 0 || !dims.is_multiple_of(2) {
            return Err(RotaryError::Dims(dims));
        }
        if !(base.is_finite() && base > 0.0) {
            return Err(RotaryError::Base(base));
        }
        let base = base as f32;
        let frequencies = (0..dims)
            .step_by(2)
            .map(|i| 1.0 / base.powf(i as f32 / dims as f32))
            .collect();
        Ok(Self { frequencies })
    }

    /// How many values of each head turn.
    pub fn dims(&self) -> usize {
        2 * self.frequencies.len()
    }

    /// The angles' `cos` and `sin` for `seq` positions from each of `starts` (row r's first
    /// position, or one for every row), on `device`: made once per forward pass, for every
    /// block's queries and keys.
    pub fn angles(&self, starts: &[usize], seq: usize, device: &Device) -> RotaryAngles {
        let (cos, sin) = self.cos_sin(starts, seq);
        let shape = [starts.len(), 1, seq, self.dims()];
        let tensor = |values| Tensor::<4>::from_data(TensorData::new(values, shape), device);
        RotaryAngles {
            cos: tensor(cos),
            sin: tensor(sin),
        }
    }

    /// The angles of every position below `positions`, `[positions, 1, 1, dims]` each, for a
    /// step recorded once and replayed, which gathers its rows' angles at positions held in a
    /// device buffer ([`RotaryAngles::at`]): the same values [`Self::angles`] makes.
    pub fn angles_of_every_position(&self, positions: usize, device: &Device) -> RotaryAngles {
        let (cos, sin) = self.cos_sin(&[0], positions);
        let shape = [positions, 1, 1, self.dims()];
        let tensor = |values| Tensor::<4>::from_data(TensorData::new(values, shape), device);
        RotaryAngles {
            cos: tensor(cos),
            sin: tensor(sin),
        }
    }

    /// `cos` and `sin` of every angle for `seq` positions from each of `starts`, each half
    /// repeated as Hugging Face's `cat((freqs, freqs))` does: `[starts.len() · seq · dims]`.
    fn cos_sin(&self, starts: &[usize], seq: usize) -> (Vec<f32>, Vec<f32>) {
        let dims = self.dims();
        let mut cos = Vec::with_capacity(starts.len() * seq * dims);
        let mut sin = Vec::with_capacity(starts.len() * seq * dims);
        for &start in starts {
            for position in start..start + seq {
                for _half in 0..2 {
                    for &frequency in &self.frequencies {
                        let angle = position as f32 * frequency;
                        cos.push(angle.cos());
                        sin.push(angle.sin());
                    }
                }
            }
        }
        (cos, sin)
    }
}

/// A forward pass's rotation angles ([`RotaryTable::angles`]).
///
/// # Shapes
/// - cos and sin `[batch or 1, 1, seq, dims]`
#[derive(Clone, Debug)]
pub struct RotaryAngles {
    pub cos: Tensor<4>,
    pub sin: Tensor<4>,
}

impl RotaryAngles {
    /// One position's angles per row, gathered from [`RotaryTable::angles_of_every_position`]
    /// at `positions` (a device buffer).
    ///
    /// # Shapes
    /// - self `[positions, 1, 1, dims]`, positions `[batch]` → `[batch, 1, 1, dims]` each
    pub fn at(&self, positions: &Tensor<1, Int>) -> RotaryAngles {
        let pick = |table: &Tensor<4>| table.clone().select(0, positions.clone());
        RotaryAngles {
            cos: pick(&self.cos),
            sin: pick(&self.sin),
        }
    }
}

/// Queries or keys with their positions' rotation: `x · cos + rotate_half(x) · sin` on the first
/// [`RotaryTable::dims`] values of each head, where `rotate_half([a, b]) = [−b, a]`.
///
/// # Shapes
/// - input `[batch, heads, seq, head_dim]`, angles `[batch or 1, 1, seq, dims]` →
///   `[batch, heads, seq, head_dim]`
#[derive(Clone, Debug)]
pub struct Rotary<'a> {
    pub input: Tensor<4>,
    pub angles: &'a RotaryAngles,
}

impl Composed for Rotary<'_> {
    type Output = Tensor<4>;

    fn composed(self) -> Tensor<4> {
        let [_, _, _, head_dim] = self.input.dims();
        let dims = self.angles.cos.dims()[3].min(head_dim);
        let cos = self.angles.cos.clone().narrow(3, 0, dims);
        let sin = self.angles.sin.clone().narrow(3, 0, dims);
        let turned = self.input.clone().narrow(3, 0, dims);
        let half = dims / 2;
        let rotated = Tensor::cat(
            vec![
                turned.clone().narrow(3, half, half).neg(),
                turned.clone().narrow(3, 0, half),
            ],
            3,
        );
        let out = turned * cos + rotated * sin;
        if dims == head_dim {
            return out;
        }
        Tensor::cat(vec![out, self.input.narrow(3, dims, head_dim - dims)], 3)
    }
}
