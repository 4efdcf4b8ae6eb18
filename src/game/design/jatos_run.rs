//! Running a study inside JATOS (<https://www.jatos.org>), the study server many labs use.
//!
//! JATOS serves a component's page at `/publix/<study result uuid>/<component uuid>/<file>`,
//! sets a cookie `JATOS_ID_<study result id>` with the run's ids, and answers, relative to the
//! page: `GET initData` (study and component properties, the study link's URL parameters),
//! `POST resultData` (appends to the component's result data), `POST ../heartbeat` and
//! `GET ../end?successful=true` (finishes the run and redirects to the study's end redirect URL,
//! e.g. Prolific's completion page). These are the calls JATOS's own `jatos.js` makes (JATOS
//! 3.10: `conf/publix.routes`, `jatos.js`); the app makes them itself so that its strict
//! Content-Security-Policy stays whole (jatos.js loads its helpers through jQuery's eval path).
//!
//! Results go with `POST resultData`, which appends: each answer is sent as a bundle of one on
//! a line of its own as it is saved (small and constant-sized, so it goes with `keepalive` and
//! survives a closed tab), the whole run once more at the end. A retry may append a copy; the
//! results reader counts each answer's key once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What identifies one JATOS study run, read from the page's address and JATOS's ID cookie.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JatosRun {
    pub study_result_uuid: String,
    pub component_uuid: String,
    /// The page's folder, e.g. `/jatos/publix/<sr>/<c>/` (JATOS may sit under a base path).
    pub base_path: String,
    /// The cookie's fields (`workerId`, `studyId`, `studyResultId`, `workerType`, …).
    pub ids: BTreeMap<String, String>,
    /// The study link's URL parameters (`PROLIFIC_PID`, `STUDY_ID`, `SESSION_ID`, …), from
    /// `initData`; empty until it is read.
    #[serde(default)]
    pub url_parameters: BTreeMap<String, String>,
    /// The list JATOS's batch session gave this participant ([`crate::game::run::jatos_batch`]); `None`
    /// until it is asked, and when the batch channel could not be reached.
    #[serde(default)]
    pub batch_list: Option<String>,
}

#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum JatosError {
    #[error("JATOS's initData is not valid JSON: {0}")]
    InitData(String),
    #[error("the JATOS component's input is not a study config: {0}")]
    ComponentInput(String),
}

/// `(study result uuid, component uuid, page folder)` when `pathname` is a JATOS component
/// page, `…/publix/<uuid>/<uuid>/<file>`.
///
/// ```
/// use clozelab::game::design::jatos_run::component_path;
/// let (sr, c, base) = component_path("/publix/4b1c-77/ab-12/index.html").unwrap();
/// assert_eq!((sr, c, base), ("4b1c-77", "ab-12", "/publix/4b1c-77/ab-12/".to_string()));
/// assert!(component_path("/play/storm").is_none());
/// ```
pub fn component_path(pathname: &str) -> Option<(&str, &str, String)> {
    let parts: Vec<&str> = pathname.split('/').collect();
    let n = parts.len();
    if n < 4 || parts[n - 4] != "publix" {
        return None;
    }
    let (sr, c) = (parts[n - 3], parts[n - 2]);
    let is_uuid =
        |s: &str| !s.is_empty() && s.chars().all(|ch| ch.is_ascii_hexdigit() || ch == '-');
    if !is_uuid(sr) || !is_uuid(c) {
        return None;
    }
    let base = parts[..n - 1].join("/") + "/";
    Some((sr, c, base))
}

impl JatosRun {
    /// The run this page belongs to, if it is a JATOS component page whose ID cookie is set:
    /// `cookies` is `document.cookie` (`name=value; name=value`), the cookie's value
    /// `key=value&key=value` with the run's `studyResultUuid` among them.
    pub fn detect(pathname: &str, cookies: &str) -> Option<Self> {
        let (sr, c, base_path) = component_path(pathname)?;
        let ids = cookies
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .filter(|(name, _)| name.starts_with("JATOS_ID"))
            .map(|(_, value)| parse_pairs(value))
            .find(|ids| ids.get("studyResultUuid").map(String::as_str) == Some(sr))?;
        Some(Self {
            study_result_uuid: sr.to_string(),
            component_uuid: c.to_string(),
            base_path,
            ids,
            url_parameters: BTreeMap::new(),
            batch_list: None,
        })
    }

    /// A test run from JATOS's GUI (its "Run" buttons): worker type `Jatos` in JATOS's ID
    /// cookie.
    pub fn is_test_run(&self) -> bool {
        self.ids.get("workerType").map(String::as_str) == Some("Jatos")
    }

    /// `initData`'s URL.
    pub fn init_data_url(&self) -> String {
        format!("{}initData", self.base_path)
    }

    /// Where the component's result data goes (`POST` appends to it).
    pub fn result_data_url(&self) -> String {
        format!("{}resultData", self.base_path)
    }

    /// The heartbeat JATOS uses to tell a running participant from one who left.
    pub fn heartbeat_url(&self) -> String {
        format!("{}../heartbeat", self.base_path)
    }

    /// Finishes the run; JATOS then redirects to the study's end redirect URL (or its end page).
    pub fn end_url(&self) -> String {
        format!("{}../end?successful=true", self.base_path)
    }

    /// Aborts the run: JATOS deletes its result data and marks it ABORTED (a participant who
    /// declined or withdrew); `message` is kept with the run.
    ///
    /// ```
    /// use clozelab::game::design::jatos_run::JatosRun;
    /// let run = JatosRun::detect(
    ///     "/publix/8a2c4f1e-0000-4000-8000-000000000001/5b1d0c2a-0000-4000-8000-000000000002/start",
    ///     "JATOS_IDS_1=studyResultUuid=8a2c4f1e-0000-4000-8000-000000000001",
    /// ).unwrap();
    /// assert!(run.abort_url("withdrew: yes").ends_with("/../abort?message=withdrew%3A%20yes"));
    /// ```
    pub fn abort_url(&self, message: &str) -> String {
        format!(
            "{}../abort?message={}",
            self.base_path,
            query_value(message)
        )
    }

    /// Ends the run as not successful (JATOS marks it FAIL and keeps its result data), with
    /// `message`: a participant a question screened out.
    ///
    /// ```
    /// use clozelab::game::design::jatos_run::JatosRun;
    /// let run = JatosRun::detect(
    ///     "/publix/8a2c-01/5b1d-02/start",
    ///     "JATOS_IDS_1=studyResultUuid=8a2c-01",
    /// ).unwrap();
    /// let url = run.end_failed_url("screened out");
    /// assert!(url.ends_with("/../end?successful=false&message=screened%20out"), "{url}");
    /// ```
    pub fn end_failed_url(&self, message: &str) -> String {
        format!(
            "{}../end?successful=false&message={}",
            self.base_path,
            query_value(message)
        )
    }

    /// The batch channel's path (a WebSocket on the page's host): under JATOS's URL base path
    /// from the ID cookie (`urlBasePath`), else under the folder `publix/` is in.
    ///
    /// ```
    /// use clozelab::game::design::jatos_run::JatosRun;
    /// let run = JatosRun::detect(
    ///     "/lab/publix/8a2c-01/5b1d-02/start",
    ///     "JATOS_IDS_1=studyResultUuid=8a2c-01&urlBasePath=/lab/",
    /// ).unwrap();
    /// assert_eq!(run.batch_channel_path(), "/lab/publix/8a2c-01/batch/open");
    /// ```
    pub fn batch_channel_path(&self) -> String {
        let from_cookie = self.ids.get("urlBasePath").filter(|b| b.starts_with('/'));
        let base = from_cookie.cloned().unwrap_or_else(|| {
            let folder = self.base_path.trim_end_matches('/');
            let publix = folder.rfind("/publix/").unwrap_or(0);
            format!("{}/", &folder[..publix])
        });
        let base = if base.ends_with('/') {
            base
        } else {
            format!("{base}/")
        };
        format!("{base}publix/{}/batch/open", self.study_result_uuid)
    }

    /// An id for a participant who came without a Prolific id: JATOS's worker id.
    pub fn worker_participant_id(&self) -> Option<String> {
        self.ids
            .get("workerId")
            .map(|w| format!("jatos-worker-{w}"))
    }

    /// Reads `initData`: the study link's URL parameters into `self`, and the study config
    /// from the component's input (`None` when the component has none).
    pub fn read_init_data(&mut self, json: &str) -> Result<Option<String>, JatosError> {
        let init: InitData =
            serde_json::from_str(json).map_err(|e| JatosError::InitData(e.to_string()))?;
        self.url_parameters = init
            .url_query_parameters
            .into_iter()
            .filter_map(|(k, v)| match v {
                serde_json::Value::String(s) => Some((k, s)),
                serde_json::Value::Number(n) => Some((k, n.to_string())),
                _ => None,
            })
            .collect();
        // JATOS keeps the component input as a JSON string (older servers send an object).
        let input = match init.component_properties.component_input {
            serde_json::Value::String(s) if !s.trim().is_empty() => Some(s),
            serde_json::Value::Object(o) if !o.is_empty() => {
                Some(serde_json::Value::Object(o).to_string())
            }
            _ => None,
        };
        Ok(input)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitData {
    #[serde(default)]
    component_properties: ComponentProperties,
    #[serde(default)]
    url_query_parameters: BTreeMap<String, serde_json::Value>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ComponentProperties {
    #[serde(default, alias = "jsonData")]
    component_input: serde_json::Value,
}

fn parse_pairs(value: &str) -> BTreeMap<String, String> {
    value
        .trim_matches('"')
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `text` percent-encoded as a URL query value (RFC 3986 unreserved characters kept).
fn query_value(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const COOKIE: &str = "batchId=1&componentId=2&componentPos=1&componentResultId=9&creationTime=1&studyAssets=clozelab&urlBasePath=/&jatosRun=RUN_STUDY&studyId=3&studyResultId=7&studyResultUuid=0a-1b&workerId=5&workerType=GeneralSingle";

    #[test]
    fn a_component_page_with_its_cookie_is_a_run() {
        let cookies = format!("theme=dark; JATOS_ID_6=studyResultUuid=ff; JATOS_ID_7={COOKIE}");
        let run = JatosRun::detect("/jatos/publix/0a-1b/c-2/index.html", &cookies).unwrap();
        assert_eq!(run.study_result_uuid, "0a-1b");
        assert_eq!(run.ids["workerId"], "5");
        assert_eq!(run.result_data_url(), "/jatos/publix/0a-1b/c-2/resultData");
        assert_eq!(
            run.end_url(),
            "/jatos/publix/0a-1b/c-2/../end?successful=true"
        );
        assert_eq!(
            run.worker_participant_id().as_deref(),
            Some("jatos-worker-5")
        );
        // The cookie of another run, no cookie, or another page: not this run.
        assert!(JatosRun::detect("/publix/0a-1c/c-2/index.html", &cookies).is_none());
        assert!(JatosRun::detect("/publix/0a-1b/c-2/index.html", "theme=dark").is_none());
        assert!(JatosRun::detect("/publix/x y/c-2/index.html", &cookies).is_none());
        assert!(JatosRun::detect("/", &cookies).is_none());
    }

    #[test]
    fn init_data_gives_the_url_parameters_and_the_component_input() {
        let mut run = JatosRun::detect(
            "/publix/0a-1b/c/index.html",
            &format!("JATOS_ID_7={COOKIE}"),
        )
        .unwrap();
        let init = r#"{"studySessionData": null, "componentProperties": {"title": "clozelab",
            "componentInput": "{\"title\": \"Cloze\"}"}, "urlQueryParameters": {"PROLIFIC_PID": "p1", "n": 4, "x": null}}"#;
        assert_eq!(
            run.read_init_data(init).unwrap().as_deref(),
            Some(r#"{"title": "Cloze"}"#)
        );
        assert_eq!(run.url_parameters["PROLIFIC_PID"], "p1");
        assert_eq!(run.url_parameters["n"], "4");
        assert!(!run.url_parameters.contains_key("x"));
        assert_eq!(
            run.read_init_data(r#"{"componentProperties": {"componentInput": ""}}"#),
            Ok(None)
        );
        assert!(matches!(
            run.read_init_data("<html>"),
            Err(JatosError::InitData(_))
        ));
    }
}
