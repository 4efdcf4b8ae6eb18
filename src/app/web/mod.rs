//! Browser plumbing: WebGPU detection, fetch with progress and Cache Storage, local files.

pub mod fetch;
pub mod files;
pub mod gpu;
pub mod idb;

use wasm_bindgen::JsCast;

/// Lets the browser paint (one macrotask) before CPU-heavy work on the main thread.
pub async fn yield_to_browser() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(resolve.unchecked_ref(), 0);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// A query parameter of the page URL.
pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search).ok()?.get(name)
}

/// Turns a JS error value into readable text.
pub fn js_error_text(value: &wasm_bindgen::JsValue) -> String {
    if let Some(err) = value.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}
