//! What a web host's answer to a request for a file is: the file, or its absence in disguise.
//!
//! Many hosts answer a path they do not have with the app's own page and status 200 (`trunk
//! serve`, and static hosts with a single-page fallback: Netlify, Cloudflare Pages, GitHub Pages
//! with a copied `404.html`), so a 2xx answer alone does not say that a file is there. A file is
//! taken as there only when its answer looks like the kind of file asked for: not an HTML page
//! (by content type or by its first bytes) where something else was expected, JSON that parses,
//! a safetensors file whose header fits, a wasm module with its magic number.

use std::fmt;

/// The kind of file a request expects, which decides what a real answer looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// JSON that parses (configs, vocabularies, study configs, file lists).
    Json,
    /// A safetensors file: an 8-byte little-endian header length, then a JSON header.
    Safetensors,
    /// A WebAssembly module (`\0asm`).
    Wasm,
    /// A page of HTML: any answer is taken as it.
    Html,
    /// Any other text or bytes (merges, scripts, style sheets): anything but an HTML page.
    Other,
}

impl FileKind {
    /// The kind a file name implies by its extension.
    ///
    /// ```
    /// use clozelab::data::served_file::FileKind;
    /// assert_eq!(FileKind::for_name("models/test/config.json"), FileKind::Json);
    /// assert_eq!(FileKind::for_name("clozelab_bg.wasm"), FileKind::Wasm);
    /// assert_eq!(FileKind::for_name("merges.txt"), FileKind::Other);
    /// ```
    pub fn for_name(name: &str) -> Self {
        let extension = name
            .rsplit('/')
            .next()
            .and_then(|file| file.rsplit_once('.'))
            .map(|(_, ext)| ext.to_ascii_lowercase());
        match extension.as_deref() {
            Some("json") => Self::Json,
            Some("safetensors") => Self::Safetensors,
            Some("wasm") => Self::Wasm,
            Some("html" | "htm") => Self::Html,
            _ => Self::Other,
        }
    }
}

/// Why an answer is not the file asked for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotTheFile {
    /// An HTML page where another kind of file was expected: the host's answer for a path it
    /// does not have.
    #[error(
        "an HTML page (the host's answer for a file it does not have), not the file{}",
        content_type.as_ref().map(|t| format!(" (content type {t})")).unwrap_or_default()
    )]
    HtmlPage { content_type: Option<String> },
    /// JSON was expected and the answer does not parse as JSON.
    #[error("not JSON ({0})")]
    NotJson(String),
    /// A safetensors file was expected and the answer's header does not fit.
    #[error("not a safetensors file ({0})")]
    NotSafetensors(String),
    /// A wasm module was expected and the answer lacks its magic number.
    #[error("not a WebAssembly module")]
    NotWasm,
}

/// Whether `content_type` (a `Content-Type` header) names an HTML page.
fn is_html_type(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("text/html")
        || essence.eq_ignore_ascii_case("application/xhtml+xml")
}

/// Whether `body` begins like an HTML page (after a byte-order mark and white space).
fn looks_like_html(body: &[u8]) -> bool {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let start = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(body.len());
    let head: Vec<u8> = body[start..]
        .iter()
        .take(16)
        .map(u8::to_ascii_lowercase)
        .collect();
    [&b"<!doctype html"[..], b"<html", b"<head", b"<!--"]
        .iter()
        .any(|prefix| head.starts_with(prefix))
}

/// Checks an answer's `Content-Type` alone (before its body is read, or for a HEAD request):
/// an HTML page where another kind of file was expected is not the file.
///
/// ```
/// use clozelab::data::served_file::{FileKind, check_content_type};
/// assert!(check_content_type(FileKind::Safetensors, "text/html").is_err());
/// assert!(check_content_type(FileKind::Safetensors, "application/octet-stream").is_ok());
/// ```
pub fn check_content_type(kind: FileKind, content_type: &str) -> Result<(), NotTheFile> {
    if kind != FileKind::Html && is_html_type(content_type) {
        return Err(NotTheFile::HtmlPage {
            content_type: Some(content_type.to_string()),
        });
    }
    Ok(())
}

/// Checks that an answer (its `Content-Type`, if any, and its body) is a file of `kind`.
///
/// A cached answer has no content type; its body decides.
///
/// ```
/// use clozelab::data::served_file::{FileKind, NotTheFile, check};
/// let page = b"<!DOCTYPE html><html><body></body></html>";
/// assert!(matches!(
///     check(FileKind::Json, Some("text/html; charset=utf-8"), page),
///     Err(NotTheFile::HtmlPage { .. })
/// ));
/// assert!(check(FileKind::Other, None, page).is_err());
/// assert!(check(FileKind::Json, Some("application/json"), br#"{"n_layer": 2}"#).is_ok());
/// assert!(check(FileKind::Other, None, b"#version: 0.2\nt h\n").is_ok());
/// assert!(check(FileKind::Html, Some("text/html"), page).is_ok());
/// ```
pub fn check(kind: FileKind, content_type: Option<&str>, body: &[u8]) -> Result<(), NotTheFile> {
    if kind == FileKind::Html {
        return Ok(());
    }
    if let Some(content_type) = content_type {
        check_content_type(kind, content_type)?;
    }
    if looks_like_html(body) {
        return Err(NotTheFile::HtmlPage {
            content_type: content_type.map(str::to_string),
        });
    }
    match kind {
        FileKind::Json => serde_json::from_slice::<serde::de::IgnoredAny>(body)
            .map(|_| ())
            .map_err(|e| NotTheFile::NotJson(e.to_string())),
        FileKind::Safetensors => check_safetensors_header(body),
        FileKind::Wasm if body.starts_with(b"\0asm") => Ok(()),
        FileKind::Wasm => Err(NotTheFile::NotWasm),
        FileKind::Html | FileKind::Other => Ok(()),
    }
}

/// The header of a safetensors file: its length fits the body and it opens a JSON object.
/// (The loader parses the rest; this only tells a weights file from something else.)
fn check_safetensors_header(body: &[u8]) -> Result<(), NotTheFile> {
    let Some(length) = body.get(..8) else {
        return Err(NotTheFile::NotSafetensors(format!(
            "{} bytes, shorter than a header",
            body.len()
        )));
    };
    let length = u64::from_le_bytes(length.try_into().expect("eight bytes"));
    if length > (body.len() - 8) as u64 {
        return Err(NotTheFile::NotSafetensors(format!(
            "its header claims {length} bytes of {} in the file",
            body.len()
        )));
    }
    if body.get(8) != Some(&b'{') {
        return Err(NotTheFile::NotSafetensors(
            "its header is not a JSON object".into(),
        ));
    }
    Ok(())
}

/// What a host answered for one file asked for: shown when a folder lacks what it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The file's name as asked for (`tokenizer.json`).
    pub file: String,
    /// What came back, in words (`HTTP 404 Not Found`, `an HTML page …`).
    pub what_came_back: String,
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.what_came_back)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRUNK_PAGE: &[u8] = b"<!DOCTYPE html>\n<html lang=\"en\">\n  <head>";

    #[test]
    fn an_html_page_is_no_file_of_any_other_kind() {
        for kind in [
            FileKind::Json,
            FileKind::Safetensors,
            FileKind::Wasm,
            FileKind::Other,
        ] {
            assert!(matches!(
                check(kind, None, TRUNK_PAGE),
                Err(NotTheFile::HtmlPage { .. })
            ));
            // By its content type, whatever it holds.
            assert!(matches!(
                check(kind, Some("Text/HTML; charset=utf-8"), b"{}"),
                Err(NotTheFile::HtmlPage { .. })
            ));
            // After a byte-order mark and white space, in any case.
            assert!(check(kind, None, b"\xEF\xBB\xBF\n  <HTML><body>").is_err());
        }
    }

    #[test]
    fn real_files_pass() {
        assert!(check(FileKind::Json, Some("application/json"), b" [\"a\"] ").is_ok());
        assert!(check(FileKind::Other, Some("text/plain"), b"#version: 0.2\n").is_ok());
        // A text file that mentions HTML further in is still the file.
        assert!(check(FileKind::Other, None, b"x <html>").is_ok());
        assert!(check(FileKind::Wasm, Some("application/wasm"), b"\0asm\x01\0\0\0").is_ok());
        let header = br#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
        let mut weights = (header.len() as u64).to_le_bytes().to_vec();
        weights.extend_from_slice(header);
        weights.extend_from_slice(&[0; 4]);
        assert!(
            check(
                FileKind::Safetensors,
                Some("application/octet-stream"),
                &weights
            )
            .is_ok()
        );
    }

    #[test]
    fn broken_files_say_what_they_are_not() {
        assert!(matches!(
            check(FileKind::Json, None, b"{\"a\":"),
            Err(NotTheFile::NotJson(_))
        ));
        assert!(matches!(
            check(FileKind::Safetensors, None, b"\x05\0\0"),
            Err(NotTheFile::NotSafetensors(_))
        ));
        let mut claims_too_much = 1000u64.to_le_bytes().to_vec();
        claims_too_much.extend_from_slice(b"{}");
        assert!(check(FileKind::Safetensors, None, &claims_too_much).is_err());
        let mut not_json = 2u64.to_le_bytes().to_vec();
        not_json.extend_from_slice(b"xx");
        assert!(check(FileKind::Safetensors, None, &not_json).is_err());
        assert_eq!(
            check(FileKind::Wasm, None, b"garbage"),
            Err(NotTheFile::NotWasm)
        );
    }

    #[test]
    fn kinds_by_name() {
        assert_eq!(
            FileKind::for_name("a/b/model.SAFETENSORS"),
            FileKind::Safetensors
        );
        assert_eq!(FileKind::for_name("index.html"), FileKind::Html);
        assert_eq!(FileKind::for_name("pos/lexicon.js"), FileKind::Other);
        assert_eq!(FileKind::for_name("dir.json/file"), FileKind::Other);
        assert_eq!(FileKind::for_name("vocab.bpe"), FileKind::Other);
    }

    #[test]
    fn the_html_message_names_the_content_type() {
        let message = check(FileKind::Json, Some("text/html"), TRUNK_PAGE)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("HTML page") && message.contains("text/html"),
            "{message}"
        );
    }
}
