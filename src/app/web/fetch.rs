//! Downloads with progress, cached in Cache Storage so a second visit works offline.

use js_sys::Uint8Array;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, Response};

use super::js_error_text;

const CACHE_NAME: &str = "clozelab-models-v1";

async fn open_cache() -> Option<Cache> {
    let caches = web_sys::window()?.caches().ok()?;
    JsFuture::from(caches.open(CACHE_NAME)).await.ok()?.dyn_into().ok()
}

async fn cached_response(cache: &Cache, url: &str) -> Option<Response> {
    JsFuture::from(cache.match_with_str(url)).await.ok()?.dyn_into().ok()
}

async fn cached(cache: &Cache, url: &str) -> Option<Vec<u8>> {
    let response = cached_response(cache, url).await?;
    let buffer = JsFuture::from(response.array_buffer().ok()?).await.ok()?;
    Some(Uint8Array::new(&buffer).to_vec())
}

/// Fetches `url` (from the cache when present), calling `progress(loaded, total)` as bytes
/// arrive.
pub async fn fetch_bytes_cached(url: &str, progress: impl Fn(u64, Option<u64>)) -> Result<Vec<u8>, String> {
    let cache = open_cache().await;
    if let Some(cache) = &cache
        && let Some(bytes) = cached(cache, url).await
    {
        progress(bytes.len() as u64, Some(bytes.len() as u64));
        return Ok(bytes);
    }
    let bytes = fetch_network(url, progress).await?;
    if let Some(cache) = &cache {
        // Caching is best effort: quota errors only cost a re-download next time.
        let copy = Uint8Array::from(bytes.as_slice());
        if let Ok(stored) = Response::new_with_opt_buffer_source(Some(&copy)) {
            let _ = JsFuture::from(cache.put_with_str(url, &stored)).await;
        }
    }
    Ok(bytes)
}

/// Fetches `url` from the network, bypassing Cache Storage (study configs may change).
pub async fn fetch_bytes_uncached(url: &str) -> Result<Vec<u8>, String> {
    fetch_network(url, |_, _| {}).await
}

async fn fetch_network(url: &str, progress: impl Fn(u64, Option<u64>)) -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response: Response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|e| format!("cannot fetch {url}: {}", js_error_text(&e)))?
        .dyn_into()
        .map_err(|_| "fetch did not return a Response")?;
    if !response.ok() {
        return Err(format!("{url}: HTTP {} {}", response.status(), response.status_text()));
    }
    let total = response.headers().get("content-length").ok().flatten().and_then(|v| v.parse::<u64>().ok());
    let mut bytes = Vec::with_capacity(total.unwrap_or(0) as usize);
    match response.body() {
        Some(body) => {
            let reader: web_sys::ReadableStreamDefaultReader =
                body.get_reader().dyn_into().map_err(|_| "cannot read the response body")?;
            loop {
                let chunk = JsFuture::from(reader.read()).await.map_err(|e| format!("download of {url} failed: {}", js_error_text(&e)))?;
                let done = js_sys::Reflect::get(&chunk, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true);
                if done {
                    break;
                }
                if let Ok(value) = js_sys::Reflect::get(&chunk, &"value".into()) {
                    bytes.extend_from_slice(&Uint8Array::new(&value).to_vec());
                }
                progress(bytes.len() as u64, total);
            }
        }
        None => {
            let buffer = JsFuture::from(response.array_buffer().map_err(|e| js_error_text(&e))?).await.map_err(|e| js_error_text(&e))?;
            bytes = Uint8Array::new(&buffer).to_vec();
        }
    }
    Ok(bytes)
}

/// Whether `url` is cached or answers a HEAD request (without reading its body).
pub async fn exists(url: &str) -> bool {
    if let Some(cache) = open_cache().await
        && cached_response(&cache, url).await.is_some()
    {
        return true;
    }
    let Some(window) = web_sys::window() else { return false };
    let init = web_sys::RequestInit::new();
    init.set_method("HEAD");
    match JsFuture::from(window.fetch_with_str_and_init(url, &init)).await {
        Ok(r) => r.dyn_into::<Response>().map(|r| r.ok()).unwrap_or(false),
        Err(_) => false,
    }
}

/// POSTs a JSON body to `url`; `Err` unless the server answers 2xx.
pub async fn post_json(url: &str, body: &str) -> Result<(), String> {
    let window = web_sys::window().ok_or("no window")?;
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_body(&wasm_bindgen::JsValue::from_str(body));
    let headers = web_sys::Headers::new().map_err(|e| js_error_text(&e))?;
    headers.set("content-type", "application/json").map_err(|e| js_error_text(&e))?;
    init.set_headers(&headers);
    let response: Response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(|e| format!("cannot reach {url}: {}", js_error_text(&e)))?
        .dyn_into()
        .map_err(|_| "fetch did not return a Response")?;
    if response.ok() { Ok(()) } else { Err(format!("{url}: HTTP {}", response.status())) }
}
