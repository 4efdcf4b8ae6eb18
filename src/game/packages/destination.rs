//! Where a Website package's answers go, decided before it is made: a study that redirects its
//! participants (Prolific) must send its answers to a server, and one that keeps them in the
//! browser must say so (`answers_in_browser`). JATOS keeps every answer itself, so its archive
//! needs neither.

use crate::game::design::study::StudyConfig;

/// Where a Website package's answers go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswersGo {
    /// POSTed to this `submit_url`.
    Server(String),
    /// Kept in the participant's browser, as the study says (`answers_in_browser`).
    Browser,
}

#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum DestinationError {
    #[error(
        "the study sends each participant on to {0} when they finish, but sends their answers \
         nowhere (no submit_url): they would stay in each participant's browser and be lost. \
         Set submit_url (e.g. /submit) and host the package with `clozelab serve`, or use the \
         JATOS archive"
    )]
    RedirectWithoutSubmit(String),
    #[error(
        "the study has no submit_url, so its answers would stay in each participant's browser. \
         Set submit_url (e.g. /submit) and host the package with `clozelab serve`; or, for a lab \
         computer where you download the answers yourself, say so with \"answers_in_browser\": true"
    )]
    Unstated,
}

/// Where the answers of `config`'s Website package go, or why it must not be packaged: a study
/// that redirects its participants (Prolific) must send its answers to a server, and one that
/// keeps them in the browser must say so.
///
/// ```
/// use clozelab::game::{design::study::StudyConfig, packages::destination::{answers_destination, AnswersGo}};
/// let sent = StudyConfig::from_json(r#"{"submit_url": "/submit"}"#).unwrap();
/// assert_eq!(answers_destination(&sent), Ok(AnswersGo::Server("/submit".into())));
/// let lab = StudyConfig::from_json(r#"{"answers_in_browser": true}"#).unwrap();
/// assert_eq!(answers_destination(&lab), Ok(AnswersGo::Browser));
/// let lost = StudyConfig::from_json(r#"{"redirect_url": "https://app.prolific.com/x"}"#).unwrap();
/// assert!(answers_destination(&lost).is_err());
/// assert!(answers_destination(&StudyConfig::from_json("{}").unwrap()).is_err());
/// ```
pub fn answers_destination(config: &StudyConfig) -> Result<AnswersGo, DestinationError> {
    match (&config.submit_url, &config.redirect_url) {
        (Some(url), _) => Ok(AnswersGo::Server(url.clone())),
        (None, Some(redirect)) => Err(DestinationError::RedirectWithoutSubmit(redirect.clone())),
        (None, None) if config.answers_in_browser => Ok(AnswersGo::Browser),
        (None, None) => Err(DestinationError::Unstated),
    }
}
