//! How many of its own keys a row has cached before a step: the attention's one input that
//! changes from step to step while every shape stays the same.

use burn::tensor::Tensor;

/// Own keys cached per row before a step: the count on the host, and for a step recorded once
/// and replayed (`model::replayed_steps`) the same count in a device buffer that a GPU kernel
/// reads instead, since a recording fixes every launch argument it saw.
#[derive(Clone, Debug)]
pub struct Past {
    /// What the host knows when it builds the step.
    pub count: usize,
    /// `[1]`: the count as a float (exact below 2²⁴), rewritten before each replay.
    pub on_device: Option<Tensor<1>>,
}

impl Past {
    /// A count known on the host alone.
    ///
    /// ```
    /// use clozelab::model::ops::past::Past;
    /// let past = Past::on_host(12);
    /// assert_eq!(past.count, 12);
    /// assert!(past.on_device.is_none());
    /// ```
    pub fn on_host(count: usize) -> Self {
        Self {
            count,
            on_device: None,
        }
    }
}
