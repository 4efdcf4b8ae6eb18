//! Waiting for the page to be made cross-origin isolated before the app starts.
//!
//! Where the host sends no COOP/COEP, `public/isolation/isolation.js` (loaded before the app)
//! registers a service worker that adds them and reloads the page once; it leaves
//! `window.clozelabIsolation`, a promise that settles when the app may start (never, on the load
//! it throws away). Waiting for it keeps that load from touching anything of a participant's:
//! answers, a JATOS batch slot, the outbox.

use wasm_bindgen::JsValue;

/// Settles when the page may start: at once where the script is absent (a page built without
/// it) or had nothing to do, or once isolation failed (the script logs why; the model's backend
/// line then says it runs on one thread).
pub async fn settled() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Ok(pending) = js_sys::Reflect::get(&window, &JsValue::from_str("clozelabIsolation")) else {
        return;
    };
    // A rejection starts the app as well: one thread is a fallback, not a failure.
    let _ = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&pending)).await;
}
