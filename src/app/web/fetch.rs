//! Downloads with progress (gloo-net, so the same code runs on the page and in the worker),
//! model files cached in Cache Storage so that a second visit works offline. Every download
//! names the kind of file it expects: a host that answers a missing path with its HTML page and
//! status 200 (`trunk serve`, single-page static hosts) gives [`WebError::NotTheFile`], as a
//! 404 gives [`WebError::Http`], and such an answer is never cached.

use gloo_net::http::{Request, Response};
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::Cache;

use super::WebError;
use crate::data::served_file::{self, FileKind};

const CACHE_NAME: &str = "clozelab-models-v1";

/// `caches` of the page or of the worker (both globals have it).
pub(super) async fn open_cache() -> Option<Cache> {
    let caches: web_sys::CacheStorage =
        Reflect::get(&js_sys::global(), &JsValue::from_str("caches"))
            .ok()?
            .dyn_into()
            .ok()?;
    JsFuture::from(caches.open(CACHE_NAME))
        .await
        .ok()?
        .dyn_into()
        .ok()
}

async fn cached_response(cache: &Cache, url: &str) -> Option<web_sys::Response> {
    JsFuture::from(cache.match_with_str(url))
        .await
        .ok()?
        .dyn_into()
        .ok()
}

/// The cached copy of `url` if it is a file of `kind`; a copy that is not (an earlier version
/// cached a host's page in place of a missing file) is deleted.
async fn cached(cache: &Cache, url: &str, kind: FileKind) -> Option<Vec<u8>> {
    let response = cached_response(cache, url).await?;
    let buffer = JsFuture::from(response.array_buffer().ok()?).await.ok()?;
    let bytes = Uint8Array::new(&buffer).to_vec();
    if served_file::check(kind, None, &bytes).is_ok() {
        Some(bytes)
    } else {
        let _ = JsFuture::from(cache.delete_with_str(url)).await;
        None
    }
}

/// Fetches `url`, a file of `kind` (from the cache when present), calling
/// `progress(loaded, total)` as bytes arrive.
pub async fn fetch_bytes_cached(
    url: &str,
    kind: FileKind,
    progress: impl Fn(u64, Option<u64>),
) -> Result<Vec<u8>, WebError> {
    let cache = open_cache().await;
    if let Some(cache) = &cache
        && let Some(bytes) = cached(cache, url, kind).await
    {
        progress(bytes.len() as u64, Some(bytes.len() as u64));
        return Ok(bytes);
    }
    let bytes = fetch_bytes_uncached(url, kind, progress).await?;
    if let Some(cache) = &cache {
        // Caching is best effort: quota errors only cost a re-download next time.
        let copy = Uint8Array::from(bytes.as_slice());
        if let Ok(stored) = web_sys::Response::new_with_opt_buffer_source(Some(&copy)) {
            let _ = JsFuture::from(cache.put_with_str(url, &stored)).await;
        }
    }
    Ok(bytes)
}

/// Fetches `url`, a text file of `kind`, from the network, bypassing Cache Storage (study
/// configs may change).
pub async fn fetch_text_uncached(url: &str, kind: FileKind) -> Result<String, WebError> {
    let bytes = fetch_bytes_uncached(url, kind, |_, _| {}).await?;
    String::from_utf8(bytes).map_err(|_| WebError::NotUtf8(url.to_string()))
}

fn checked(url: &str, response: Response) -> Result<Response, WebError> {
    if response.ok() {
        Ok(response)
    } else {
        Err(WebError::Http {
            url: url.to_string(),
            status: response.status(),
            status_text: response.status_text(),
        })
    }
}

fn network(url: &str, message: impl ToString) -> WebError {
    WebError::Network {
        url: url.to_string(),
        message: message.to_string(),
    }
}

/// Fetches `url`, a file of `kind`, from the network, bypassing Cache Storage, calling
/// `progress(loaded, total)`.
pub async fn fetch_bytes_uncached(
    url: &str,
    kind: FileKind,
    progress: impl Fn(u64, Option<u64>),
) -> Result<Vec<u8>, WebError> {
    let response = Request::get(url)
        .send()
        .await
        .map_err(|e| network(url, e))?;
    let response = checked(url, response)?;
    let content_type = response.headers().get("content-type");
    let not_the_file = |reason| WebError::NotTheFile {
        url: url.to_string(),
        reason,
    };
    // A page where another kind of file was expected is told by its header alone, before
    // its body is read.
    if let Some(content_type) = &content_type {
        served_file::check_content_type(kind, content_type).map_err(not_the_file)?;
    }
    let bytes = read_body(url, response, progress).await?;
    served_file::check(kind, content_type.as_deref(), &bytes).map_err(not_the_file)?;
    Ok(bytes)
}

async fn read_body(
    url: &str,
    response: Response,
    progress: impl Fn(u64, Option<u64>),
) -> Result<Vec<u8>, WebError> {
    let total = response
        .headers()
        .get("content-length")
        .and_then(|v| v.parse::<u64>().ok());
    let Some(body) = response.body() else {
        return response.binary().await.map_err(|e| network(url, e));
    };
    let mut bytes = Vec::with_capacity(total.unwrap_or(0) as usize);
    let reader: web_sys::ReadableStreamDefaultReader = body
        .get_reader()
        .dyn_into()
        .map_err(|_| network(url, "the response body cannot be read"))?;
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| network(url, super::js_error_text(&e)))?;
        let done = Reflect::get(&chunk, &"done".into())
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true);
        if done {
            break;
        }
        if let Ok(value) = Reflect::get(&chunk, &"value".into()) {
            let piece = Uint8Array::new(&value);
            let start = bytes.len();
            bytes.resize(start + piece.length() as usize, 0);
            piece.copy_to(&mut bytes[start..]);
        }
        progress(bytes.len() as u64, total);
    }
    Ok(bytes)
}

/// Whether `url` is cached or answers a HEAD request with something other than an HTML page
/// (without reading its body; a host's page in place of a missing file does not count).
pub async fn exists(url: &str) -> bool {
    if is_cached(url).await {
        return true;
    }
    let head = gloo_net::http::RequestBuilder::new(url).method(gloo_net::http::Method::HEAD);
    match head.send().await {
        Ok(response) if response.ok() => response
            .headers()
            .get("content-type")
            .is_none_or(|t| served_file::check_content_type(FileKind::for_name(url), &t).is_ok()),
        _ => false,
    }
}

/// Whether Cache Storage holds `url` (a model loaded on an earlier visit).
pub async fn is_cached(url: &str) -> bool {
    match open_cache().await {
        Some(cache) => cached_response(&cache, url).await.is_some(),
        None => false,
    }
}

/// Bodies up to this size go with `keepalive`, so that a tab closed right after the last
/// answer does not cut its send; browsers allow 64 KiB of keepalive bodies in flight, and
/// half of it leaves room for a second send. Larger ones, if cut, go out on the next visit.
pub const KEEPALIVE_MAX_BYTES: usize = 32 * 1024;

/// Sends `body` with `method` and `headers` to `url`; `Err` unless the server answers 2xx.
async fn send_body(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<(), WebError> {
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    init.set_body(&JsValue::from_str(body));
    // web-sys's RequestInit has no keepalive setter: the field is set as the JS object's.
    let keepalive = JsValue::from_bool(body.len() <= KEEPALIVE_MAX_BYTES);
    let _ = Reflect::set(&init, &JsValue::from_str("keepalive"), &keepalive);
    let js_error = |e: JsValue| network(url, format!("{e:?}"));
    let request = web_sys::Request::new_with_str_and_init(url, &init).map_err(js_error)?;
    for (name, value) in headers {
        request.headers().set(name, value).map_err(js_error)?;
    }
    let response = Request::from(request)
        .send()
        .await
        .map_err(|e| network(url, e))?;
    checked(url, response).map(|_| ())
}

/// POSTs a JSON body to `url` with its idempotency key (so a server can tell a retry from a
/// new submission); `Err` unless the server answers 2xx.
pub async fn post_json(url: &str, body: &str, idempotency_key: &str) -> Result<(), WebError> {
    // Header values are ASCII: a participant id may not be.
    let key = String::from(js_sys::encode_uri_component(idempotency_key));
    let headers = [
        ("content-type", "application/json"),
        ("idempotency-key", &key),
    ];
    send_body("POST", url, &headers, body).await
}

/// POSTs a text body to `url` (how JATOS appends to a component's result data: `text/plain`,
/// added after what it holds); `Err` unless the server answers 2xx.
pub async fn post_text(url: &str, body: &str) -> Result<(), WebError> {
    let headers = [("content-type", "text/plain; charset=UTF-8")];
    send_body("POST", url, &headers, body).await
}
