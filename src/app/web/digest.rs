//! SHA-256 through the browser's own `crypto.subtle.digest`, which hashes the 500 MB of
//! GPT-2-small weights in about a second where the same code compiled to wasm takes ~30 s.

use js_sys::{ArrayBuffer, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Hex SHA-256 of `bytes`, the same text as [`crate::game::run::export::sha256_hex`].
///
/// `crypto.subtle` exists only in secure contexts (https, localhost) and may refuse a view of
/// shared memory; then the portable hash runs instead, so the fingerprint is always there.
pub async fn sha256_hex(bytes: &[u8]) -> String {
    match subtle_sha256(bytes).await {
        Ok(digest) => digest.iter().map(|b| format!("{b:02x}")).collect(),
        Err(_) => crate::game::run::export::sha256_hex(bytes),
    }
}

async fn subtle_sha256(bytes: &[u8]) -> Result<Vec<u8>, JsValue> {
    let crypto: web_sys::Crypto =
        Reflect::get(&js_sys::global(), &JsValue::from_str("crypto"))?.dyn_into()?;
    let subtle = crypto.subtle();
    if subtle.is_undefined() {
        return Err(JsValue::from_str(
            "crypto.subtle is missing (not a secure context)",
        ));
    }
    let promise = subtle.digest_with_str_and_u8_array("SHA-256", bytes)?;
    let buffer: ArrayBuffer = JsFuture::from(promise).await?.dyn_into()?;
    Ok(Uint8Array::new(&buffer).to_vec())
}
