//! The query/key/value projection of a step, split into heads as views of the product (the
//! layout the attention and the cache take), its bias left to the GPU's attention kernel where
//! that kernel runs.

use burn::tensor::Tensor;

use super::backend::{Backend, Op};
use super::kernels;
use super::projection::{Conv1D, Project, Then};
use crate::model::error::ModelError;

/// A step's queries and new keys and values, from the fused projection.
pub struct Qkv {
    /// `[batch, n_head, seq, head_dim]`
    pub query: Tensor<4>,
    /// `[batch, 2·kv_heads, seq, head_dim]`: the keys' heads, then the values', as the cache holds
    /// them.
    pub keys_values: Tensor<4>,
    /// The projection's bias `[3·n_head·head_dim]` where it is left to the attention's kernel
    /// (then the query, keys and values are the product without it, and so is everything cached
    /// by the same body); `None` where they have it.
    pub bias: Option<Tensor<1>>,
}

/// The query/key/value projection `c_attn` of `x`, split into `n_head` query heads and
/// `kv_heads` key and value heads (views of the projection: no copies), its bias left to the
/// attention where the GPU's kernel runs.
///
/// # Shapes
/// - x `[batch, seq, n_embd]` → see [`Qkv`]
#[derive(Clone)]
pub struct ProjectQkv<'a> {
    pub c_attn: &'a Conv1D,
    pub x: Tensor<3>,
    pub n_head: usize,
    pub kv_heads: usize,
    /// Whether the bias may be left to the attention: not where rotary embeddings turn the
    /// queries and keys first.
    pub may_defer_bias: bool,
}

impl ProjectQkv<'_> {
    /// The projection with its bias, on `backend`, split into heads.
    fn biased(self, backend: Backend) -> Result<Qkv, ModelError> {
        let projected = self.c_attn.forward(backend, self.x, Then::Nothing)?;
        let (query, keys_values) = split_heads(projected, self.n_head, self.kv_heads);
        Ok(Qkv {
            query,
            keys_values,
            bias: None,
        })
    }
}

impl Op for ProjectQkv<'_> {
    type Output = Result<Qkv, ModelError>;

    fn gpu(self) -> Self::Output {
        let head_dim = self.x.dims()[2] / self.n_head.max(1);
        // The kernel adds a bias over every head of the queries, keys and values alike.
        let same_heads = self.kv_heads == self.n_head;
        if !(self.may_defer_bias && same_heads && kernels::takes_head(head_dim)) {
            return self.biased(Backend::Gpu);
        }
        let projected = self.c_attn.product(self.x)?;
        let (query, keys_values) = split_heads(projected, self.n_head, self.kv_heads);
        Ok(Qkv {
            query,
            keys_values,
            bias: Some(self.c_attn.bias.val()),
        })
    }

    fn cpu(self) -> Self::Output {
        self.biased(Backend::Cpu)
    }

    fn browser_cpu(self) -> Self::Output {
        self.biased(Backend::BrowserCpu)
    }

    fn reference(self) -> Self::Output {
        let projected = Project {
            layer: self.c_attn,
            input: self.x,
            then: Then::Nothing,
        }
        .reference()?;
        let (query, keys_values) = split_heads(projected, self.n_head, self.kv_heads);
        Ok(Qkv {
            query,
            keys_values,
            bias: None,
        })
    }
}

/// Queries, and keys and values together (the cache's layout), per head from the fused
/// projection, as views of it: no copies.
///
/// With one new token per row (every decoding step) the heads are read straight off the
/// projection, `[batch, n_head + 2·kv_heads, 1, head_dim]` being its own memory order, and the query is a
/// layout cubecl's matrix product takes as it is. Several tokens need a transpose, which stays a
/// view here: the keys and values go into the cache as they are, and only the query is copied,
/// inside its product (which needs each batch stride at least the row stride). Slicing
/// `[.., n_embd]` first and reshaping the slice cost a copy for each of the three: burn's
/// reshape copies a strided tensor that has a dimension of size 1 (one row, or one token).
///
/// # Shapes
/// - qkv `[batch, seq, (n_head + 2·kv_heads)·head_dim]` → queries
///   `[batch, n_head, seq, head_dim]`, keys and values `[batch, 2·kv_heads, seq, head_dim]`
fn split_heads(qkv: Tensor<3>, n_head: usize, kv_heads: usize) -> (Tensor<4>, Tensor<4>) {
    let [batch, seq, width] = qkv.dims();
    let heads = n_head + 2 * kv_heads;
    let head_dim = width / heads;
    let heads = if seq == 1 {
        qkv.reshape([batch, heads, 1, head_dim])
    } else {
        qkv.reshape([batch, seq, heads, head_dim]).swap_dims(1, 2)
    };
    (
        heads.clone().narrow(1, 0, n_head),
        heads.narrow(1, n_head, 2 * kv_heads),
    )
}

#[cfg(test)]
mod tests {
    use burn::tensor::{Device, TensorData};

    use super::*;
    use crate::model::ops::attention::merge_heads;

    /// The heads read off the projection as views hold what slicing it into queries, keys and
    /// values and splitting each into heads gave, for single and several rows and tokens; merging
    /// the queries' heads gives their third of the projection back.
    #[test]
    fn heads_split_and_merged_as_views_equal_slices_of_the_projection() {
        let device = Device::flex();
        let (n_head, head_dim) = (2, 3);
        let n_embd = n_head * head_dim;
        let values = |t: Tensor<4>| t.into_data().try_to_vec::<f32>().unwrap();
        for (batch, seq) in [(1, 1), (3, 1), (1, 4), (2, 3)] {
            let n = batch * seq * 3 * n_embd;
            let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let qkv =
                Tensor::<3>::from_data(TensorData::new(data, [batch, seq, 3 * n_embd]), &device);
            let (q, kv) = split_heads(qkv.clone(), n_head, n_head);
            let k = kv.clone().narrow(1, 0, n_head);
            let v = kv.narrow(1, n_head, n_head);
            for (part, got) in [q.clone(), k, v].into_iter().enumerate() {
                let expected = qkv
                    .clone()
                    .slice([0..batch, 0..seq, part * n_embd..(part + 1) * n_embd])
                    .reshape([batch, seq, n_head, head_dim])
                    .swap_dims(1, 2);
                assert_eq!(got.dims(), [batch, n_head, seq, head_dim]);
                assert_eq!(values(got), values(expected), "part {part}, {batch}×{seq}");
            }
            let merged = merge_heads(q).into_data().try_to_vec::<f32>().unwrap();
            let first_third = qkv
                .slice([0..batch, 0..seq, 0..n_embd])
                .into_data()
                .try_to_vec::<f32>()
                .unwrap();
            assert_eq!(merged, first_third, "{batch}×{seq}");
        }
    }
}
