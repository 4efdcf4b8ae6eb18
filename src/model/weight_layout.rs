//! The model with its weights stored another way: the blocks' projections in another
//! precision ([`Precision`]), or the projections and `wteᵀ` packed into panels (the browser's CPU
//! backend's layout, which the loader chooses there; natively the tests reach it so), and those
//! panels shared out among product helpers.

use std::sync::Arc;

use burn::tensor::DType;

use super::error::ModelError;
use super::ops::backend::Backend;
use super::ops::embedding::TokenEmbedding;
use super::ops::panel_product::PanelWeight;
use super::ops::product_helpers::{HelperError, ProductHelpers};
use super::precision::{Precision, PrecisionError};
use super::readback::read_f32_now;
use super::transformer::Transformer;

impl Transformer {
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
        self.wte = packed(self.wte, self.vocab_size)?;
        if let Some(head) = self.lm_head.take() {
            self.lm_head = Some(packed(head, self.vocab_size)?);
        }
        for conv in self.h.iter_mut().flat_map(|block| block.projections_mut()) {
            *conv = conv.to_packed()?;
        }
        self.backend = Backend::BrowserCpu;
        Ok(self)
    }

    /// Shares every packed weight (the blocks' projections, `wteᵀ`, an untied head) out among
    /// `helpers`, which then compute their columns of each product beside the calling thread
    /// (see [`super::ops::product_helpers`]). Returns how many weights were shared; weights not
    /// packed into panels (another backend's layout) are left alone.
    pub fn share_products(
        &mut self,
        helpers: &Arc<dyn ProductHelpers>,
    ) -> Result<usize, HelperError> {
        let mut packed: Vec<&mut PanelWeight> = Vec::new();
        packed.extend(self.wte.panels.as_mut());
        if let Some(head) = self.lm_head.as_mut() {
            packed.extend(head.panels.as_mut());
        }
        for conv in self.h.iter_mut().flat_map(|block| block.projections_mut()) {
            packed.extend(conv.panels.as_mut());
        }
        let mut shared = 0;
        for (weight, panels) in packed.into_iter().enumerate() {
            panels.share_with(helpers, weight)?;
            shared += usize::from(panels.is_shared());
        }
        Ok(shared)
    }
}

/// `table` (`[vocab_size, n_embd]`) packed as `wteᵀ` (the same when it already is).
fn packed(table: TokenEmbedding, vocab_size: usize) -> Result<TokenEmbedding, ModelError> {
    if table.panels.is_some() {
        return Ok(table);
    }
    let device = table.device();
    let mut rows = Vec::new();
    for chunk in &table.chunks {
        rows.extend(read_f32_now(chunk.val())?);
    }
    let n_embd = rows.len() / vocab_size.max(1);
    Ok(TokenEmbedding::packed(&rows, vocab_size, n_embd, &device)?)
}
