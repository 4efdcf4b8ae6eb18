//! What the inference worker posts to its product helpers, through a small JS module
//! (`helper_messages.js`): starting them under [`HELPER_NAME`], handing each its parts of the
//! packed weights, and telling them to serve ([`super::helper_pool`] uses these).

use js_sys::{Float32Array, SharedArrayBuffer};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::model::ops::product_helpers::WeightPart;

/// The name helpers are started under; the worker binary reads it to run as one.
pub const HELPER_NAME: &str = "clozelab-product-helper";

// A module of its own, not `inline_js`: inline snippets are numbered per wasm, and the app's
// and the worker's builds write theirs into the same folder.
#[wasm_bindgen(module = "/src/app/worker/helper_messages.js")]
extern "C" {
    #[wasm_bindgen(catch)]
    fn spawn_helpers(
        count: u32,
        name: &str,
        sab: &SharedArrayBuffer,
        timeout_ms: u32,
    ) -> Result<js_sys::Promise, JsValue>;
    fn share_part(
        worker: &JsValue,
        weight: u32,
        n_in: u32,
        n_out: u32,
        panels: Float32Array,
        bias: Option<Float32Array>,
    );
    #[wasm_bindgen(js_name = serve)]
    fn post_serve(worker: &JsValue);
}

/// Starts `count` helpers on `memory` and waits until each is ready to take its parts.
pub(super) async fn spawn(
    count: usize,
    memory: &SharedArrayBuffer,
) -> Result<Vec<web_sys::Worker>, String> {
    let spawned = spawn_helpers(count as u32, HELPER_NAME, memory, 20_000)
        .map_err(|e| crate::app::web::js_error_text(&e))?;
    let workers = JsFuture::from(spawned)
        .await
        .map_err(|e| crate::app::web::js_error_text(&e))?;
    Ok(js_sys::Array::from(&workers)
        .iter()
        .map(|w| w.unchecked_into::<web_sys::Worker>())
        .collect())
}

/// Hands `worker` its `part` of weight `weight` (copied: the message moves the copy).
pub(super) fn share(worker: &web_sys::Worker, weight: usize, part: &WeightPart) {
    share_part(
        worker,
        weight as u32,
        part.n_in as u32,
        part.n_out as u32,
        Float32Array::from(&part.panels[..]),
        part.bias.as_deref().map(Float32Array::from),
    );
}

/// Tells `worker` that all its parts are there: from now on it waits for products.
pub(super) fn serve(worker: &web_sys::Worker) {
    post_serve(worker);
}
