//! Grouped-query attention's keys and values (Llama-style models: SmolLM2 has 3 key/value heads
//! for 9 query heads): each key/value head serves a group of consecutive query heads, so it is
//! repeated for each of them, as Hugging Face's `repeat_kv` does, before the attention op.

use burn::tensor::Tensor;

/// Each of the `kv_heads` heads repeated `group` times in place: query head h reads key/value
/// head `h / group`.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// let kv = Tensor::<4>::from_floats([[[[1.0]], [[2.0]]]], &Device::flex());
/// let repeated = clozelab::model::ops::grouped_heads::repeat_heads(kv, 3);
/// assert_eq!(repeated.into_data().to_vec::<f32>().unwrap(), vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
/// ```
///
/// # Shapes
/// - `[batch, kv_heads, seq, head_dim]` → `[batch, kv_heads · group, seq, head_dim]`
pub fn repeat_heads(heads: Tensor<4>, group: usize) -> Tensor<4> {
    if group <= 1 {
        return heads;
    }
    let [batch, kv_heads, seq, head_dim] = heads.dims();
    heads
        .unsqueeze_dim::<5>(2)
        .expand([batch, kv_heads, group, seq, head_dim])
        .reshape([batch, kv_heads * group, seq, head_dim])
}
