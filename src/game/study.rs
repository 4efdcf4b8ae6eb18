//! A study: which passages a participant sees, in what order, and what happens at the end.
//! Loaded from JSON (URL or file) and validated before anything is shown.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::passages::{Passage, built_in_passages};
use crate::rng::{SplitMix64, stable_hash};

/// The participant a preview plays as (the researcher on the Study page); what it answers is
/// not kept.
pub const PREVIEW_PARTICIPANT: &str = "preview";

/// Longest participant id kept from a URL; longer ones are rejected.
const MAX_ID_LEN: usize = 128;

#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum StudyError {
    #[error("the study config is not valid JSON: {0}")]
    Json(String),
    #[error("unknown passage id {0:?}")]
    UnknownPassage(String),
    #[error("passages_per_participant must be between 1 and {available}, got {got}")]
    PassageCount { got: usize, available: usize },
    #[error("redirect_url must be an http(s) address, got {0:?}")]
    RedirectUrl(String),
    #[error("decline_url must be an http(s) address, got {0:?}")]
    DeclineUrl(String),
    #[error("submit_url must be a path on the app's own server (e.g. /submit), got {0:?}")]
    SubmitUrl(String),
    #[error("the participant id is empty or longer than {MAX_ID_LEN} characters")]
    ParticipantId,
    #[error("positions_per_passage and rounds_per_position must be at least 1")]
    TokenGameCounts,
    #[error("model must be a folder on the app's own server (e.g. models/gpt2/), got {0:?}")]
    ModelUrl(String),
    #[error("send_each_response needs a submit_url to send them to")]
    SendEachWithoutSubmit,
}

/// An http(s) address without control characters (where a participant may be sent).
fn is_web_address(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://"))
        && !url.chars().any(char::is_control)
}

/// Passage order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    #[default]
    Fixed,
    /// Shuffled per participant from a seed derived from the participant id (and recorded).
    Random,
}

/// The study config as researchers write it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyConfig {
    #[serde(default)]
    pub title: String,
    /// Ids of built-in passages or of `texts`; empty = all of them.
    #[serde(default)]
    pub passages: Vec<String>,
    /// The researcher's own passages.
    #[serde(default)]
    pub texts: Vec<Passage>,
    #[serde(default)]
    pub order: Order,
    /// How many passages each participant plays (default: all).
    #[serde(default)]
    pub passages_per_participant: Option<usize>,
    /// A passage played first, marked practice, never counted.
    #[serde(default)]
    pub practice: Option<String>,
    #[serde(default)]
    pub consent: String,
    #[serde(default)]
    pub instructions: String,
    #[serde(default)]
    pub completion_code: String,
    /// Where to send the participant after the data is saved (e.g. Prolific's completion URL).
    #[serde(default)]
    pub redirect_url: Option<String>,
    /// Where to send a participant who does not agree, or withdraws (e.g. Prolific's
    /// no-consent URL). Without it they are told that nothing was kept, and may close the page.
    #[serde(default)]
    pub decline_url: Option<String>,
    /// Where to POST the participant's JSON export on completion (a path on the app's own server:
    /// the Content-Security-Policy allows no other host). Optional: without it nothing leaves
    /// the participant's browser unless they download it.
    #[serde(default)]
    pub submit_url: Option<String>,
    /// Also POST each answer to `submit_url` as soon as it is saved (a bundle of one response,
    /// keyed by participant/passage/position), so a participant who leaves early still leaves
    /// what they answered. Needs `submit_url`.
    #[serde(default)]
    pub send_each_response: bool,
    /// URL parameter holding the participant id (default `PROLIFIC_PID`).
    #[serde(default)]
    pub participant_param: Option<String>,
    /// Which game: `next_word` (default), `top1` or `two_token`.
    #[serde(default)]
    pub game: GameKind,
    /// Next-token games: positions played per passage (default: every position).
    #[serde(default)]
    pub positions_per_passage: Option<usize>,
    /// Two-token game: rounds (sampled other tokens) per position (default 1).
    #[serde(default)]
    pub rounds_per_position: Option<u32>,
    /// Next-token games: seed for positions, sampled tokens and sides (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Next-token games: the model folder participants' browsers load (a path on the app's own
    /// server; default the app's GPT-2, `models/gpt2/`). The two-token game samples from it.
    #[serde(default)]
    pub model: Option<String>,
    /// Set when the study runs inside JATOS (never read from the config file): results go to
    /// JATOS, the participant id and Prolific's ids come from JATOS's study link.
    #[serde(skip)]
    pub jatos: Option<super::jatos_run::JatosRun>,
    /// Set when the researcher previews the study (never read from the config file): played as
    /// a participant would, marked pilot, nothing sent, nothing kept.
    #[serde(skip)]
    pub preview: bool,
}

/// The game a study runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameKind {
    #[default]
    NextWord,
    Top1,
    TwoToken,
}

/// One participant's plan: passages in order, and where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub participant: String,
    /// Study and session ids from the URL (`STUDY_ID`, `SESSION_ID`), when given.
    pub url_ids: BTreeMap<String, String>,
    pub order_seed: u64,
    /// (passage, practice?) in the order played.
    pub items: Vec<(Passage, bool)>,
}

impl StudyConfig {
    /// Parses and validates a config.
    pub fn from_json(text: &str) -> Result<Self, StudyError> {
        let config: Self = serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(text))
            .map_err(|e| StudyError::Json(e.to_string()))?;
        config.pool()?;
        if config.positions_per_passage == Some(0) || config.rounds_per_position == Some(0) {
            return Err(StudyError::TokenGameCounts);
        }
        if let Some(url) = config.redirect_url.as_ref().filter(|u| !is_web_address(u)) {
            return Err(StudyError::RedirectUrl(url.clone()));
        }
        if let Some(url) = config.decline_url.as_ref().filter(|u| !is_web_address(u)) {
            return Err(StudyError::DeclineUrl(url.clone()));
        }
        if let Some(path) = &config.submit_url
            && (!path.starts_with('/')
                || path.starts_with("//")
                || path.chars().any(|c| c.is_control() || c == '\\'))
        {
            return Err(StudyError::SubmitUrl(path.clone()));
        }
        if config.send_each_response && config.submit_url.is_none() {
            return Err(StudyError::SendEachWithoutSubmit);
        }
        if let Some(folder) = &config.model
            && (folder.trim().is_empty()
                || folder.contains("://")
                || folder.starts_with("//")
                || folder.chars().any(|c| c.is_control() || c == '\\'))
        {
            return Err(StudyError::ModelUrl(folder.clone()));
        }
        Ok(config)
    }

    /// The default study: all built-in passages, fixed order.
    pub fn default_play() -> Self {
        Self {
            title: "clozelab".into(),
            passages: Vec::new(),
            texts: Vec::new(),
            order: Order::Fixed,
            passages_per_participant: None,
            practice: None,
            consent: String::new(),
            instructions: String::new(),
            completion_code: String::new(),
            redirect_url: None,
            decline_url: None,
            submit_url: None,
            send_each_response: false,
            participant_param: None,
            game: GameKind::NextWord,
            positions_per_passage: None,
            rounds_per_position: None,
            seed: 0,
            model: None,
            jatos: None,
            preview: false,
        }
    }

    /// Two-token game: rounds per position (1 unless the study says more).
    pub fn rounds(&self) -> u32 {
        self.rounds_per_position.unwrap_or(1).max(1)
    }

    fn find(&self, id: &str) -> Result<Passage, StudyError> {
        self.texts
            .iter()
            .cloned()
            .chain(built_in_passages())
            .find(|p| p.id == id)
            .ok_or_else(|| StudyError::UnknownPassage(id.to_string()))
    }

    /// The passages to draw from (practice excluded), validated.
    fn pool(&self) -> Result<(Vec<Passage>, Option<Passage>), StudyError> {
        let practice = self
            .practice
            .as_deref()
            .map(|id| self.find(id))
            .transpose()?;
        let mut pool: Vec<Passage> = if self.passages.is_empty() {
            if self.texts.is_empty() {
                built_in_passages()
            } else {
                self.texts.clone()
            }
        } else {
            self.passages
                .iter()
                .map(|id| self.find(id))
                .collect::<Result<_, _>>()?
        };
        pool.retain(|p| Some(&p.id) != self.practice.as_ref());
        let available = pool.len();
        let wanted = self.passages_per_participant.unwrap_or(available);
        if wanted == 0 || wanted > available {
            return Err(StudyError::PassageCount {
                got: wanted,
                available,
            });
        }
        Ok((pool, practice))
    }

    /// This study run inside JATOS: every answer is sent as it is saved, to JATOS's result data
    /// (each send replacing the last), and the end goes through JATOS, which redirects on to
    /// the study's end redirect URL (where `jatos-package` put `redirect_url`).
    pub fn in_jatos(mut self, run: super::jatos_run::JatosRun) -> Self {
        self.submit_url = Some(run.result_data_url());
        self.send_each_response = true;
        self.redirect_url = Some(run.end_url());
        self.jatos = Some(run);
        self
    }

    /// The study as its researcher previews it: played as a participant would, as
    /// [`PREVIEW_PARTICIPANT`], its exports marked pilot; nothing is sent and nobody redirected.
    ///
    /// ```
    /// use clozelab::game::study::StudyConfig;
    /// let config = StudyConfig::from_json(r#"{"submit_url": "/submit", "send_each_response": true,
    ///     "redirect_url": "https://app.prolific.com/submissions/complete?cc=C1"}"#).unwrap();
    /// let preview = config.for_preview();
    /// assert!(preview.preview && preview.submit_url.is_none() && preview.redirect_url.is_none());
    /// assert_eq!(preview.participant_id(&Default::default(), "someone").unwrap(), "preview");
    /// ```
    pub fn for_preview(mut self) -> Self {
        self.preview = true;
        self.submit_url = None;
        self.send_each_response = false;
        self.redirect_url = None;
        self.decline_url = None;
        self.jatos = None;
        self
    }

    /// A submission of `bundle` (an export bundle's JSON, each response then given its own key)
    /// to the study's server under `key` — in JATOS under the run's one key, replacing what was
    /// sent before; `None` when the study sends results nowhere.
    pub fn submission(&self, key: String, bundle: String) -> Option<super::outbox::Pending> {
        let url = self.submit_url.clone()?;
        Some(super::outbox::Pending {
            key: self
                .jatos
                .as_ref()
                .map_or(key, super::jatos_run::JatosRun::result_key),
            url,
            body: super::outbox::with_response_keys(&bundle).unwrap_or(bundle),
            attempts: 0,
            replace: self.jatos.is_some(),
        })
    }

    /// Whether each send carries every response so far, replacing the last (JATOS), rather
    /// than only the new one.
    pub fn sends_everything_each_time(&self) -> bool {
        self.jatos.is_some()
    }

    /// The page's URL parameters, with those of JATOS's study link over them in JATOS.
    fn parameters(&self, page: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut all = page.clone();
        if let Some(run) = &self.jatos {
            all.extend(run.url_parameters.clone());
        }
        all
    }

    /// The participant id: the configured URL parameter, else `PROLIFIC_PID`, else (in JATOS)
    /// JATOS's worker id, else `fallback` (a generated id the caller keeps across reloads).
    pub fn participant_id(
        &self,
        params: &BTreeMap<String, String>,
        fallback: &str,
    ) -> Result<String, StudyError> {
        if self.preview {
            return Ok(PREVIEW_PARTICIPANT.to_string());
        }
        let params = &self.parameters(params);
        let fallback = self
            .jatos
            .as_ref()
            .and_then(super::jatos_run::JatosRun::worker_participant_id)
            .unwrap_or_else(|| fallback.to_string());
        let names = [
            self.participant_param.as_deref().unwrap_or("PROLIFIC_PID"),
            "PROLIFIC_PID",
            "participant",
        ];
        let id = names
            .iter()
            .find_map(|n| params.get(*n))
            .map(|s| s.trim().to_string())
            .unwrap_or(fallback);
        if id.is_empty() || id.chars().count() > MAX_ID_LEN || id.chars().any(char::is_control) {
            return Err(StudyError::ParticipantId);
        }
        Ok(id)
    }

    /// The plan for a participant (order shuffled from a seed derived from their id).
    pub fn plan(
        &self,
        participant: &str,
        params: &BTreeMap<String, String>,
    ) -> Result<Plan, StudyError> {
        let (mut pool, practice) = self.pool()?;
        let params = &self.parameters(params);
        let order_seed = stable_hash(participant);
        if self.order == Order::Random {
            SplitMix64::new(order_seed).shuffle(&mut pool);
        }
        pool.truncate(self.passages_per_participant.unwrap_or(pool.len()));
        let items = practice
            .into_iter()
            .map(|p| (p, true))
            .chain(pool.into_iter().map(|p| (p, false)))
            .collect();
        let url_ids = ["STUDY_ID", "SESSION_ID"]
            .iter()
            .filter_map(|k| params.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect();
        Ok(Plan {
            participant: participant.to_string(),
            url_ids,
            order_seed,
            items,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn config_validation() {
        assert!(matches!(
            StudyConfig::from_json("{"),
            Err(StudyError::Json(_))
        ));
        assert_eq!(
            StudyConfig::from_json(r#"{"send_each_response": true}"#),
            Err(StudyError::SendEachWithoutSubmit)
        );
        assert!(
            StudyConfig::from_json(r#"{"send_each_response": true, "submit_url": "/s"}"#)
                .unwrap()
                .send_each_response
        );
        assert!(matches!(
            StudyConfig::from_json(r#"{"unknown_field": 1}"#),
            Err(StudyError::Json(_))
        ));
        assert_eq!(
            StudyConfig::from_json(r#"{"passages": ["nope"]}"#),
            Err(StudyError::UnknownPassage("nope".into()))
        );
        assert!(matches!(
            StudyConfig::from_json(r#"{"passages_per_participant": 0}"#),
            Err(StudyError::PassageCount { .. })
        ));
        assert!(matches!(
            StudyConfig::from_json(r#"{"passages_per_participant": 11}"#),
            Err(StudyError::PassageCount { .. })
        ));
        for bad in [
            "javascript:alert(1)",
            "data:text/html,x",
            " JAVASCRIPT:x",
            "ftp://x",
        ] {
            let json = serde_json::json!({"redirect_url": bad}).to_string();
            assert!(
                matches!(
                    StudyConfig::from_json(&json),
                    Err(StudyError::RedirectUrl(_))
                ),
                "{bad}"
            );
            let json = serde_json::json!({"decline_url": bad}).to_string();
            assert!(
                matches!(
                    StudyConfig::from_json(&json),
                    Err(StudyError::DeclineUrl(_))
                ),
                "{bad}"
            );
        }
        assert!(
            StudyConfig::from_json(
                r#"{"redirect_url": "https://app.prolific.com/submissions/complete?cc=X"}"#
            )
            .is_ok()
        );
        for bad in [
            "https://evil.example/x",
            "//evil.example/x",
            "submit",
            "/a\\b",
        ] {
            let json = serde_json::json!({"submit_url": bad}).to_string();
            assert!(
                matches!(StudyConfig::from_json(&json), Err(StudyError::SubmitUrl(_))),
                "{bad}"
            );
        }
        assert!(StudyConfig::from_json(r#"{"submit_url": "/api/submit"}"#).is_ok());
    }

    #[test]
    fn plans_are_seeded_per_participant() {
        let config = StudyConfig::from_json(
            r#"{"order": "random", "passages_per_participant": 3, "practice": "garden"}"#,
        )
        .unwrap();
        let a = config
            .plan("alice", &params(&[("STUDY_ID", "s1")]))
            .unwrap();
        let a2 = config.plan("alice", &BTreeMap::new()).unwrap();
        let b = config.plan("bob", &BTreeMap::new()).unwrap();
        assert_eq!(a.items, a2.items, "same participant, same order");
        assert_eq!(a.items.len(), 4);
        assert_eq!((a.items[0].0.id.as_str(), a.items[0].1), ("garden", true));
        assert!(
            a.items[1..]
                .iter()
                .all(|(p, practice)| !practice && p.id != "garden")
        );
        assert_ne!(a.order_seed, b.order_seed);
        assert_eq!(a.url_ids.get("STUDY_ID").map(String::as_str), Some("s1"));
        // Over many participants every passage gets first place sometimes: the order is shuffled.
        let firsts: std::collections::BTreeSet<String> = (0..200)
            .map(|i| {
                config
                    .plan(&format!("p{i}"), &BTreeMap::new())
                    .unwrap()
                    .items[1]
                    .0
                    .id
                    .clone()
            })
            .collect();
        assert!(firsts.len() >= 8, "{firsts:?}");
    }

    #[test]
    fn a_study_inside_jatos_takes_its_ids_from_the_study_link_and_sends_to_jatos() {
        let cookie = "JATOS_ID_7=studyResultUuid=0a-1b&workerId=5";
        let mut run =
            crate::game::jatos_run::JatosRun::detect("/publix/0a-1b/c-2/index.html", cookie)
                .unwrap();
        let config = StudyConfig::from_json(
            r#"{"title": "T", "redirect_url": "https://app.prolific.com/x"}"#,
        )
        .unwrap()
        .in_jatos(run.clone());
        // Without Prolific's id in the study link: JATOS's worker, whatever the fallback.
        assert_eq!(
            config.participant_id(&BTreeMap::new(), "gen").unwrap(),
            "jatos-worker-5"
        );
        assert_eq!(config.redirect_url.as_deref(), Some(run.end_url().as_str()));
        assert!(config.send_each_response && config.sends_everything_each_time());
        let bundle = r#"{"responses": [{"participant": "P", "passage": "p", "position": 2}]}"#;
        let pending = config.submission("P/p/2".into(), bundle.into()).unwrap();
        assert_eq!(
            (pending.key.as_str(), pending.url.as_str()),
            ("jatos/0a-1b", "/publix/0a-1b/c-2/resultData")
        );
        assert!(pending.replace && pending.body.contains("\"idempotency_key\":\"P/p/2\""));
        // The study link's parameters (from initData) name the participant and the session.
        run.url_parameters = params(&[("PROLIFIC_PID", "p9"), ("STUDY_ID", "s9")]);
        let config = config.in_jatos(run);
        assert_eq!(
            config.participant_id(&BTreeMap::new(), "gen").unwrap(),
            "p9"
        );
        let plan = config.plan("p9", &BTreeMap::new()).unwrap();
        assert_eq!(plan.url_ids.get("STUDY_ID").map(String::as_str), Some("s9"));
        // Outside JATOS: one response's own key, added to what the server has.
        let plain = StudyConfig::from_json(r#"{"submit_url": "/submit"}"#).unwrap();
        let pending = plain.submission("P/p/2".into(), bundle.into()).unwrap();
        assert_eq!((pending.key.as_str(), pending.replace), ("P/p/2", false));
        assert!(
            StudyConfig::default_play()
                .submission("k".into(), "{}".into())
                .is_none()
        );
    }

    #[test]
    fn participant_ids() {
        let config = StudyConfig::from_json(r#"{"participant_param": "worker"}"#).unwrap();
        assert_eq!(
            config
                .participant_id(&params(&[("worker", "w1"), ("PROLIFIC_PID", "p1")]), "gen")
                .unwrap(),
            "w1"
        );
        assert_eq!(
            config
                .participant_id(&params(&[("PROLIFIC_PID", "p1")]), "gen")
                .unwrap(),
            "p1"
        );
        assert_eq!(
            config.participant_id(&BTreeMap::new(), "gen").unwrap(),
            "gen"
        );
        assert_eq!(
            config.participant_id(&params(&[("worker", &"x".repeat(200))]), "gen"),
            Err(StudyError::ParticipantId)
        );
        let hostile = "<img src=x onerror=alert(1)>";
        assert_eq!(
            config
                .participant_id(&params(&[("worker", hostile)]), "gen")
                .unwrap(),
            hostile,
            "kept; only ever shown as text"
        );
    }
}
