//! What `clozelab serve` accepts at a study's `submit_url`, decided before anything is stored:
//! an export bundle (the final one, or one answer sent as it was saved) or a withdrawal notice,
//! for this study, as `application/json` of at most [`MAX_BODY_BYTES`], under a sane
//! `Idempotency-Key`. Anything else is a [`Refusal`] with its status and reason (4xx: the
//! page's outbox then stops sending and tells the participant, see `game::run::outbox`).

use serde_json::Value;

use crate::game::design::study::StudyConfig;
use crate::game::run::outbox::add_response_keys;
use crate::game::run::withdrawal::WithdrawalNotice;

/// The largest body accepted: a whole study's bundle is tens of kilobytes; 4 MiB leaves room for
/// thousands of answers and stops a client from filling the disk one request at a time.
pub const MAX_BODY_BYTES: usize = 4 << 20;

/// The longest idempotency key, participant or run id accepted (the page's are under 300).
pub const MAX_ID_LEN: usize = 512;

/// A submission that may be stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Intake {
    /// The `Idempotency-Key`: stored once, a repeat stores nothing.
    pub key: String,
    pub kind: IntakeKind,
    pub participant: String,
    /// The run (empty: every run of the participant, in a withdrawal notice from before runs).
    pub run: String,
    /// The body as sent.
    pub body: String,
    /// Each answer of a bundle, keyed as the page keys it (none in a withdrawal).
    pub answers: Vec<AnswerRow>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntakeKind {
    Answers,
    Withdrawal,
}

impl IntakeKind {
    pub fn name(self) -> &'static str {
        match self {
            IntakeKind::Answers => "answers",
            IntakeKind::Withdrawal => "withdrawal",
        }
    }
}

/// One answer of a bundle, parsed: its key (participant/run/passage/position[/round]) and the
/// record's JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerRow {
    pub key: String,
    pub passage: String,
    pub position: u64,
    pub round: Option<u64>,
    pub record: String,
}

/// Why a request was not stored: the HTTP status it gets and a reason a person reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub reason: String,
}

impl Refusal {
    fn new(status: u16, reason: impl Into<String>) -> Self {
        Self {
            status,
            reason: reason.into(),
        }
    }
}

/// Whether `id` may name a key, participant or run: 1 to [`MAX_ID_LEN`] bytes, no control
/// characters (they would break logs and the exported file names).
///
/// ```
/// use clozelab::server::intake::is_sane_id;
/// assert!(is_sane_id("P1/jatos-7/storm/2") && is_sane_id("Zoë 日本"));
/// assert!(!is_sane_id("") && !is_sane_id("a\nb") && !is_sane_id(&"x".repeat(513)));
/// ```
pub fn is_sane_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_ID_LEN && !id.chars().any(char::is_control)
}

/// Reads one POST for `study` (its `content_type` and `Idempotency-Key` headers and the body)
/// into what is stored, or the refusal it gets.
pub fn read_submission(
    study: &StudyConfig,
    content_type: Option<&str>,
    key: Option<&str>,
    body: &[u8],
) -> Result<Intake, Refusal> {
    let json_type = content_type
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
    if !json_type {
        return Err(Refusal::new(
            415,
            format!(
                "the body must be application/json, got {:?}",
                content_type.unwrap_or("no Content-Type")
            ),
        ));
    }
    if body.len() > MAX_BODY_BYTES {
        return Err(Refusal::new(
            413,
            format!("the body is over {MAX_BODY_BYTES} bytes"),
        ));
    }
    let key = match key {
        Some(k) if is_sane_id(k) => k.to_string(),
        Some(_) => {
            return Err(Refusal::new(
                400,
                format!(
                    "the Idempotency-Key must be 1 to {MAX_ID_LEN} bytes without control characters"
                ),
            ));
        }
        None => return Err(Refusal::new(400, "no Idempotency-Key header")),
    };
    let text = std::str::from_utf8(body)
        .map_err(|e| Refusal::new(400, format!("the body is not UTF-8 ({e})")))?;
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Refusal::new(400, format!("the body is not JSON ({e})")))?;
    if value.get("withdrawal").is_some() {
        return withdrawal(study, key, text, &value);
    }
    bundle(study, key, text, value)
}

fn withdrawal(
    study: &StudyConfig,
    key: String,
    text: &str,
    value: &Value,
) -> Result<Intake, Refusal> {
    let notice = WithdrawalNotice::from_value(value).ok_or_else(|| {
        Refusal::new(
            400,
            "a withdrawal notice needs participant, study, withdrawn_at and run",
        )
    })?;
    if notice.study != study.title {
        return Err(Refusal::new(
            422,
            format!(
                "this server collects the study {:?}, not {:?}",
                study.title, notice.study
            ),
        ));
    }
    check_ids(&notice.participant, &notice.run)?;
    Ok(Intake {
        key,
        kind: IntakeKind::Withdrawal,
        participant: notice.participant,
        run: notice.run,
        body: text.to_string(),
        answers: Vec::new(),
    })
}

fn check_ids(participant: &str, run: &str) -> Result<(), Refusal> {
    if !is_sane_id(participant) || (!run.is_empty() && !is_sane_id(run)) {
        return Err(Refusal::new(
            400,
            format!(
                "participant and run ids must be 1 to {MAX_ID_LEN} bytes without control characters"
            ),
        ));
    }
    Ok(())
}

fn bundle(
    study: &StudyConfig,
    key: String,
    text: &str,
    mut value: Value,
) -> Result<Intake, Refusal> {
    let manifest = value.get("manifest").ok_or_else(|| {
        Refusal::new(
            400,
            "neither a bundle (no manifest) nor a withdrawal notice",
        )
    })?;
    let field = |name: &str| {
        manifest
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (participant, run, study_id) = (field("participant"), field("run"), field("study_id"));
    let expected = study.study_id();
    if study_id != expected {
        return Err(Refusal::new(
            422,
            format!("this server collects the study {expected:?}, not {study_id:?}"),
        ));
    }
    check_ids(&participant, &run)?;
    add_response_keys(&mut value).ok_or_else(|| {
        Refusal::new(
            400,
            "the bundle's answers need participant, passage and position",
        )
    })?;
    let list = value
        .get("responses")
        .or_else(|| value.get("records"))
        .and_then(Value::as_array)
        .ok_or_else(|| Refusal::new(400, "the bundle has no responses or records"))?;
    let mut answers = Vec::with_capacity(list.len());
    for record in list {
        let text_of = |name: &str| record.get(name).and_then(Value::as_str).unwrap_or_default();
        if text_of("participant") != participant {
            return Err(Refusal::new(
                422,
                format!(
                    "an answer of {:?} in the bundle of {participant:?}",
                    text_of("participant")
                ),
            ));
        }
        answers.push(AnswerRow {
            key: text_of("idempotency_key").to_string(),
            passage: text_of("passage").to_string(),
            position: record
                .get("position")
                .and_then(Value::as_u64)
                .unwrap_or_default(),
            round: record.get("round").and_then(Value::as_u64),
            record: record.to_string(),
        });
    }
    Ok(Intake {
        key,
        kind: IntakeKind::Answers,
        participant,
        run,
        body: text.to_string(),
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn study() -> StudyConfig {
        StudyConfig::from_json(
            r#"{"title": "Storm", "study_id": "storm-1", "submit_url": "/submit"}"#,
        )
        .unwrap()
    }

    fn body(participant: &str, study_id: &str) -> String {
        format!(
            r#"{{"manifest": {{"participant": "P1", "study_id": "{study_id}", "run": "r1"}},
            "responses": [{{"participant": "{participant}", "passage": "storm", "position": 2,
            "response": "rain"}}]}}"#
        )
    }

    const JSON: Option<&str> = Some("application/json; charset=utf-8");

    #[test]
    fn a_bundle_for_this_study_is_read_with_its_answers_keyed() {
        let intake =
            read_submission(&study(), JSON, Some("k1"), body("P1", "storm-1").as_bytes()).unwrap();
        assert_eq!(intake.kind, IntakeKind::Answers);
        assert_eq!(
            (intake.participant.as_str(), intake.run.as_str()),
            ("P1", "r1")
        );
        assert_eq!(intake.answers.len(), 1);
        assert_eq!(intake.answers[0].key, "P1/r1/storm/2");
        assert_eq!(intake.answers[0].position, 2);
    }

    #[test]
    fn wrong_requests_are_refused_with_their_status() {
        let ok = body("P1", "storm-1");
        let status = |ct: Option<&str>, key: Option<&str>, body: &[u8]| {
            read_submission(&study(), ct, key, body).unwrap_err().status
        };
        assert_eq!(status(Some("text/plain"), Some("k"), ok.as_bytes()), 415);
        assert_eq!(status(None, Some("k"), ok.as_bytes()), 415);
        assert_eq!(status(JSON, None, ok.as_bytes()), 400);
        assert_eq!(status(JSON, Some("a\u{0}b"), ok.as_bytes()), 400);
        assert_eq!(status(JSON, Some("k"), &ok.as_bytes()[..ok.len() / 2]), 400);
        assert_eq!(status(JSON, Some("k"), b"{\"manifest\": \xff}"), 400);
        assert_eq!(status(JSON, Some("k"), body("P1", "other").as_bytes()), 422);
        assert_eq!(
            status(JSON, Some("k"), body("P2", "storm-1").as_bytes()),
            422
        );
        assert_eq!(status(JSON, Some("k"), b"[1, 2]"), 400);
        let huge = vec![b' '; MAX_BODY_BYTES + 1];
        assert_eq!(status(JSON, Some("k"), &huge), 413);
        let hostile = ok.replace("\"P1\"", "\"P\\u0007\"");
        assert_eq!(status(JSON, Some("k"), hostile.as_bytes()), 400);
    }

    #[test]
    fn withdrawals_name_this_study_by_its_title() {
        let notice = WithdrawalNotice {
            participant: "P1".into(),
            study: "Storm".into(),
            withdrawn_at: "2026-12-02T10:00:00Z".into(),
            run: "r1".into(),
        };
        let intake = read_submission(
            &study(),
            JSON,
            Some(&notice.key()),
            notice.to_json().as_bytes(),
        )
        .unwrap();
        assert_eq!(intake.kind, IntakeKind::Withdrawal);
        let other = WithdrawalNotice {
            study: "Other".into(),
            ..notice
        };
        let refused = read_submission(&study(), JSON, Some("k"), other.to_json().as_bytes());
        assert_eq!(refused.unwrap_err().status, 422);
    }
}
