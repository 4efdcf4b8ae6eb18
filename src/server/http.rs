//! The routes of `clozelab serve` (axum): the study's `submit_url`, the export, and the site's
//! files with the headers the Website package's `README-host.txt` asks for.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower::ServiceExt;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};
use tower_http::compression::{CompressionLayer, CompressionLevel};
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::services::{ServeDir, ServeFile};

use super::export::results_zip;
use super::intake::{MAX_BODY_BYTES, read_submission};
use super::site::Site;
use super::store::{StoreError, Stored};
use super::writer::Writer;

/// Where the export is fetched (with the export token).
pub const EXPORT_PATH: &str = "/clozelab/export";

/// How long a client may take to send a request's body.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// What every request of one server shares.
pub struct App {
    pub site: Site,
    pub writer: Writer,
    /// The study's origin when its pages are served from elsewhere (CORS for it alone).
    pub study_origin: Option<HeaderValue>,
}

/// The router: answers at the study's submit path (if any), the export, and the site.
pub fn router(app: Arc<App>) -> Router {
    let mut router = Router::new().route(EXPORT_PATH, get(export));
    if let Some(path) = app.site.submit_path() {
        let mut submit = Router::new().route(&path, post(submit));
        if let Some(origin) = &app.study_origin {
            submit = submit.layer(
                CorsLayer::new()
                    .allow_origin(AllowOrigin::list([origin.clone()]))
                    .allow_methods([Method::POST])
                    .allow_headers([header::CONTENT_TYPE, "idempotency-key".parse().unwrap()])
                    .max_age(Duration::from_secs(3600)),
            );
        }
        router = router.merge(submit);
    }
    let compress = SizeAbove::new(1024)
        .and(NotForContentType::IMAGES)
        .and(NotForContentType::const_new("application/zip"))
        .and(
            |status: StatusCode,
             _: axum::http::Version,
             headers: &HeaderMap,
             _: &axum::http::Extensions| {
                // A part of a file is sent as it is: compressing a range would change what it is a part of.
                status != StatusCode::PARTIAL_CONTENT
                    && !headers.contains_key(header::CONTENT_RANGE)
            },
        );
    router
        .fallback(site_file)
        .layer(middleware::from_fn_with_state(app.clone(), site_headers))
        .layer(
            CompressionLayer::new()
                .quality(CompressionLevel::Fastest)
                .compress_when(compress),
        )
        .with_state(app)
}

/// A refusal as the client sees it: its status and reason, as JSON.
fn answer(status: StatusCode, body: serde_json::Value) -> Response {
    let headers = [
        (header::CONTENT_TYPE, "application/json"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    (status, headers, body.to_string()).into_response()
}

async fn submit(State(app): State<Arc<App>>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    let headers = request.headers().clone();
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let refuse = |status: u16, reason: String| {
        eprintln!("refused {status} at {path}: {reason}");
        app.writer.log_refusal(status, &reason, &path);
        let code = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
        answer(
            code,
            serde_json::json!({ "stored": false, "reason": reason }),
        )
    };
    let body = request.into_body();
    let bytes =
        match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, MAX_BODY_BYTES + 1))
            .await
        {
            Err(_) => return refuse(408, "the body did not arrive in time".into()),
            Ok(Err(e)) => {
                let too_large = std::error::Error::source(&e)
                    .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
                return if too_large {
                    refuse(413, format!("the body is over {MAX_BODY_BYTES} bytes"))
                } else {
                    refuse(400, format!("the body could not be read ({e})"))
                };
            }
            Ok(Ok(bytes)) => bytes,
        };
    let intake = match read_submission(
        &app.site.study,
        text("content-type"),
        text("idempotency-key"),
        &bytes,
    ) {
        Ok(intake) => intake,
        Err(refusal) => return refuse(refusal.status, refusal.reason),
    };
    match app.writer.store(intake).await {
        Ok(stored) => {
            let what = match stored {
                Stored::New => "stored",
                Stored::Repeat => "repeat",
                Stored::Withdrawn => "withdrawn",
            };
            answer(
                StatusCode::OK,
                serde_json::json!({ "stored": stored == Stored::New, "result": what }),
            )
        }
        Err(e) => {
            eprintln!("could not store at {path}: {e}");
            let mut response = answer(
                StatusCode::SERVICE_UNAVAILABLE,
                serde_json::json!({ "stored": false, "reason": e.to_string() }),
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
            response
        }
    }
}

/// The export token from `Authorization: Bearer …` or `?token=…`.
fn given_token(request: &Request) -> Option<String> {
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    bearer.or_else(|| {
        request
            .uri()
            .query()?
            .split('&')
            .find_map(|pair| pair.strip_prefix("token=").map(str::to_string))
    })
}

async fn export(State(app): State<Arc<App>>, request: Request) -> Response {
    let Some(token) = given_token(&request) else {
        app.writer
            .log_refusal(401, "export without a token", EXPORT_PATH);
        return answer(
            StatusCode::UNAUTHORIZED,
            serde_json::json!({ "reason": "the export needs its token" }),
        );
    };
    let result = app
        .writer
        .read(move |store| -> Result<Option<Vec<u8>>, StoreError> {
            if !store.export_token_is(&token)? {
                return Ok(None);
            }
            results_zip(store).map(Some)
        })
        .await;
    match result.and_then(|r| r) {
        Ok(Some(zip)) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "application/zip"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"results.zip\"",
                ),
                (header::CACHE_CONTROL, "no-store"),
            ],
            zip,
        )
            .into_response(),
        Ok(None) => {
            app.writer
                .log_refusal(403, "export with a wrong token", EXPORT_PATH);
            answer(
                StatusCode::FORBIDDEN,
                serde_json::json!({ "reason": "wrong export token" }),
            )
        }
        Err(e) => answer(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({ "reason": e.to_string() }),
        ),
    }
}

/// Whether a path's last part looks like a file (`app.wasm`) rather than one of the app's
/// routes (`/play/storm`), which get the page itself.
fn names_a_file(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .is_some_and(|last| last.contains('.'))
}

async fn site_file(State(app): State<Arc<App>>, request: Request) -> Response {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let path = request.uri().path().to_string();
    let (method, uri, headers) = (
        request.method().clone(),
        request.uri().clone(),
        request.headers().clone(),
    );
    let again = || {
        let mut copy = Request::new(Body::empty());
        *copy.method_mut() = method.clone();
        *copy.uri_mut() = uri.clone();
        *copy.headers_mut() = headers.clone();
        copy
    };
    let served = ServeDir::new(&app.site.root)
        .oneshot(again())
        .await
        .map(|r| r.map(Body::new));
    let Ok(response) = served;
    if response.status() == StatusCode::NOT_FOUND && !names_a_file(&path) {
        let page = ServeFile::new(app.site.root.join("index.html"))
            .oneshot(again())
            .await;
        let Ok(page) = page;
        return page.map(Body::new);
    }
    response
}

/// Whether a file's name carries a content hash (Trunk's `clozelab-d279d29f2450ffdb.js`), so
/// that a new build has new names and the old may be cached for good.
///
/// ```
/// use clozelab::server::http::has_content_hash;
/// assert!(has_content_hash("/clozelab-d279d29f2450ffdb_bg.wasm"));
/// assert!(!has_content_hash("/worker.js") && !has_content_hash("/models/gpt2/model.safetensors"));
/// ```
pub fn has_content_hash(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or_default();
    name.split(['-', '_', '.'])
        .any(|part| part.len() == 16 && part.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The headers every answer gets: cross-origin isolation (the CPU backend's threads), no
/// sniffing, the page's policy, and caching (hashed files for good, everything else checked
/// again each time).
async fn site_headers(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let set = |headers: &mut HeaderMap, name: header::HeaderName, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.entry(name).or_insert(value);
        }
    };
    set(
        headers,
        header::HeaderName::from_static("cross-origin-opener-policy"),
        "same-origin",
    );
    set(
        headers,
        header::HeaderName::from_static("cross-origin-embedder-policy"),
        "require-corp",
    );
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    let is_html = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/html"));
    if is_html && let Some(policy) = &app.site.policy {
        set(headers, header::CONTENT_SECURITY_POLICY, policy);
    }
    let caching = if has_content_hash(&path) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    set(headers, header::CACHE_CONTROL, caching);
    response
}
