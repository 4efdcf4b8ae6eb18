//! A study's addresses: where participants are sent (completion, decline, screen-out), where
//! their answers go (`submit_url`: a path on the app's own server or a study server's address),
//! checked when a config is read (`study::StudyConfig::from_json`).

/// An http(s) address with a host, without control characters or spaces (where a participant
/// may be sent).
pub fn is_web_address(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
    else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = host.split(':').next().unwrap_or_default();
    !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '[' | ']'))
        && !url
            .trim()
            .chars()
            .any(|c| c.is_control() || c.is_whitespace())
}

/// The origin (`https://host:port`) of a `submit_url` on another server; `None` for a path on
/// the app's own.
///
/// ```
/// use clozelab::game::design::study_urls::submit_origin;
/// assert_eq!(submit_origin("https://lab.example.org/cloze/submit").as_deref(), Some("https://lab.example.org"));
/// assert_eq!(submit_origin("/submit"), None);
/// ```
pub fn submit_origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    Some(format!("{scheme}://{authority}"))
}

/// The addresses of a study config, as [`check_urls`] reads them.
pub(super) struct Addresses<'a> {
    pub screened_out_url: Option<&'a str>,
    pub redirect_url: Option<&'a str>,
    pub decline_url: Option<&'a str>,
    pub submit_url: Option<&'a str>,
    pub answers_in_browser: bool,
}

/// What is wrong with one of them (the config's own error says it in its words).
pub(super) enum UrlProblem {
    ScreenedOut(String),
    Redirect(String),
    Decline(String),
    Submit(String),
    TwoWays,
}

/// Checks every address: where participants are sent must be a web address; `submit_url` a
/// path on the app's own server or a web address, and not beside `answers_in_browser`.
pub(super) fn check_urls(a: &Addresses) -> Result<(), UrlProblem> {
    let bad = |url: Option<&str>| url.filter(|u| !is_web_address(u)).map(str::to_string);
    if let Some(url) = bad(a.screened_out_url) {
        return Err(UrlProblem::ScreenedOut(url));
    }
    if let Some(url) = bad(a.redirect_url) {
        return Err(UrlProblem::Redirect(url));
    }
    if let Some(url) = bad(a.decline_url) {
        return Err(UrlProblem::Decline(url));
    }
    if let Some(path) = a.submit_url {
        let own_path = path.starts_with('/')
            && !path.starts_with("//")
            && !path.chars().any(|c| c.is_control() || c == '\\');
        if !own_path && !is_web_address(path) {
            return Err(UrlProblem::Submit(path.to_string()));
        }
        if a.answers_in_browser {
            return Err(UrlProblem::TwoWays);
        }
    }
    Ok(())
}
