//! The model folders this browser keeps in Cache Storage, offered where a model is switched.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::fetch::open_cache;

/// The model folders this browser keeps (those whose `config.json` Cache Storage holds), by
/// their URL: what a person can switch to without downloading again.
pub async fn kept_model_folders() -> Vec<String> {
    let Some(cache) = open_cache().await else {
        return Vec::new();
    };
    let Ok(keys) = JsFuture::from(cache.keys()).await else {
        return Vec::new();
    };
    let mut folders: Vec<String> = js_sys::Array::from(&keys)
        .iter()
        .filter_map(|request| request.dyn_into::<web_sys::Request>().ok())
        .filter_map(|request| {
            let url = request.url();
            url.strip_suffix("config.json").map(str::to_string)
        })
        .collect();
    folders.sort();
    folders.dedup();
    folders
}
