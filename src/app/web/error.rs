//! What can go wrong in the browser plumbing, typed so that callers can tell a missing file
//! (HTTP 404) from a network failure or a browser API refusing.

/// A failure of fetch, Cache Storage, files or downloads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WebError {
    /// The server answered, but not with 2xx.
    #[error("{url}: HTTP {status} {status_text}")]
    Http {
        url: String,
        status: u16,
        status_text: String,
    },
    /// No answer: offline, blocked by the Content-Security-Policy, CORS, or an aborted stream.
    #[error("cannot fetch {url}: {message}")]
    Network { url: String, message: String },
    /// The server answered 2xx with something that is not the file asked for: its HTML page in
    /// place of a missing file, or a file of another kind.
    #[error("{url}: {reason}")]
    NotTheFile {
        url: String,
        reason: crate::data::served_file::NotTheFile,
    },
    #[error("{0} is not UTF-8 text")]
    NotUtf8(String),
    #[error("cannot read {name}: {message}")]
    ReadFile { name: String, message: String },
    /// A browser API threw or is missing (its message as the browser gave it).
    #[error("{0}")]
    Browser(String),
}

impl WebError {
    /// What the server answered in place of the file, without the URL (for a list of the
    /// files a folder was asked for).
    pub fn what_came_back(&self) -> String {
        match self {
            WebError::Http {
                status,
                status_text,
                ..
            } => format!("HTTP {status} {status_text}")
                .trim_end()
                .to_string(),
            WebError::NotTheFile { reason, .. } => reason.to_string(),
            WebError::Network { message, .. } => format!("no answer ({message})"),
            other => other.to_string(),
        }
    }

    /// A browser API's exception, with the text the browser gave it.
    pub fn browser(value: &wasm_bindgen::JsValue) -> Self {
        WebError::Browser(super::js_error_text(value))
    }
}
