//! The model with its weights stored another way: the blocks' projections in another
//! precision ([`Precision`]), or the projections and `wteᵀ` packed into panels (the browser's CPU
//! backend's layout, which the loader chooses there; natively the tests reach it so).

use burn::tensor::DType;

use super::error::ModelError;
use super::gpt2::Gpt2;
use super::ops::backend::Backend;
use super::ops::embedding::TokenEmbedding;
use super::precision::{Precision, PrecisionError};
use super::readback::read_f32_now;

impl Gpt2 {
    /// The model with its products' weights in `precision` (see [`Precision`]), or why
    /// its device cannot run that.
    pub fn with_precision(mut self, precision: Precision) -> Result<Self, PrecisionError> {
        precision.check(&self.device())?;
        let dtype = precision.float_dtype();
        for conv in self.h.iter_mut().flat_map(|block| block.projections_mut()) {
            *conv = conv.with_weight_dtype(dtype);
        }
        Ok(self)
    }

    /// The precision of the products' weights.
    pub fn precision(&self) -> Precision {
        match self.h.first().map(|b| b.attn.c_attn.weight_dtype()) {
            Some(DType::F16) => Precision::F16,
            _ => Precision::F32,
        }
    }

    /// The model with its blocks' weights and `wteᵀ` packed into panels, running the browser's
    /// CPU bodies (which natively is how the tests reach them).
    pub fn with_panel_weights(mut self) -> Result<Self, ModelError> {
        let device = self.device();
        if self.wte.panels.is_none() {
            let mut rows = Vec::new();
            for chunk in &self.wte.chunks {
                rows.extend(read_f32_now(chunk.val())?);
            }
            let n_embd = rows.len() / self.vocab_size.max(1);
            self.wte = TokenEmbedding::packed(&rows, self.vocab_size, n_embd, &device)?;
        }
        for conv in self.h.iter_mut().flat_map(|block| block.projections_mut()) {
            *conv = conv.to_packed()?;
        }
        self.backend = Backend::BrowserCpu;
        Ok(self)
    }
}
