//! Browser plumbing shared by the page and the worker: fetch with progress and Cache Storage,
//! the clocks games time answers with, SHA-256 through `crypto.subtle`, local files and
//! downloads, IndexedDB (responses, attention checks, deletions), the running JATOS study and
//! its batch channel, the outbox of a study's answers and which final submissions were
//! acknowledged, adaptive norming's state file outside JATOS, the participant id this browser plays
//! as, the lock that keeps one tab per run, and the wait for the page's cross-origin isolation.

pub mod clock;
pub mod delivered;
pub mod device;
pub mod digest;
pub mod error;
pub mod fetch;
pub mod files;
pub mod idb;
pub mod idb_attention;
pub mod idb_delete;
pub mod idb_questions;
pub mod idb_requests;
pub mod isolation;
pub mod jatos_batch;
pub mod jatos_client;
pub mod kept_models;
pub mod local_model;
pub mod norming_state_file;
pub mod outbox;
pub mod outbox_flush;
pub mod participant;
pub mod run_lock;

pub use error::WebError;

use wasm_bindgen::JsCast;

/// A query parameter of the page URL.
pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()?
        .get(name)
}

/// The page's address with query parameter `name` set to `value`, everything else kept
/// (a link that reloads the page with one setting changed).
pub fn url_with_query_param(name: &str, value: &str) -> Option<String> {
    let location = web_sys::window()?.location();
    let params = web_sys::UrlSearchParams::new_with_str(&location.search().ok()?).ok()?;
    params.set(name, value);
    Some(format!(
        "{}?{}{}",
        location.pathname().ok()?,
        String::from(params.to_string()),
        location.hash().ok()?
    ))
}

/// Every query parameter of the page URL.
pub fn query_params() -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let Some(search) = web_sys::window().and_then(|w| w.location().search().ok()) else {
        return out;
    };
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return out;
    };
    for entry in js_sys::try_iter(&params)
        .ok()
        .flatten()
        .into_iter()
        .flatten()
        .flatten()
    {
        let pair = js_sys::Array::from(&entry);
        if let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
            out.insert(k, v);
        }
    }
    out
}

/// Turns a JS error value into readable text.
pub fn js_error_text(value: &wasm_bindgen::JsValue) -> String {
    if let Some(err) = value.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}
