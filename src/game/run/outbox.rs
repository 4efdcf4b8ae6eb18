//! Results on their way to a study's server: kept (in IndexedDB, by the page) until the server
//! acknowledges them, sent again with exponential backoff, and never counted twice — every
//! submission carries an idempotency key, and every response in it a key of its own, so a
//! server that sees a retry (or a bundle re-sent on the next visit) can tell it has it already.

use serde::{Deserialize, Serialize};

use crate::game::design::run_scope::response_key_in;

/// When to try again after a failed send: exponential backoff with jitter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub first_delay_ms: f64,
    pub factor: f64,
    pub max_delay_ms: f64,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RetryPolicyError {
    #[error("the first delay must be positive and finite, got {0}")]
    FirstDelay(f64),
    #[error("the backoff factor must be at least 1, got {0}")]
    Factor(f64),
    #[error("the longest delay must be at least the first, got {0}")]
    MaxDelay(f64),
}

impl Default for RetryPolicy {
    /// 0.5 s, doubling, at most 15 s between tries.
    fn default() -> Self {
        Self {
            first_delay_ms: 500.0,
            factor: 2.0,
            max_delay_ms: 15_000.0,
        }
    }
}

impl RetryPolicy {
    pub fn new(
        first_delay_ms: f64,
        factor: f64,
        max_delay_ms: f64,
    ) -> Result<Self, RetryPolicyError> {
        if !(first_delay_ms.is_finite() && first_delay_ms > 0.0) {
            return Err(RetryPolicyError::FirstDelay(first_delay_ms));
        }
        if !(factor.is_finite() && factor >= 1.0) {
            return Err(RetryPolicyError::Factor(factor));
        }
        if !(max_delay_ms.is_finite() && max_delay_ms >= first_delay_ms) {
            return Err(RetryPolicyError::MaxDelay(max_delay_ms));
        }
        Ok(Self {
            first_delay_ms,
            factor,
            max_delay_ms,
        })
    }

    /// The wait after failed attempt `attempt` (0-based): d = min(max, first · factorᵃᵗᵗᵉᵐᵖᵗ),
    /// then "equal jitter", d/2 + u·d/2 with u ∈ [0, 1) (given, so tests and the page pass
    /// their own randomness), so that many participants cut off together do not retry in step.
    ///
    /// ```
    /// use clozelab::game::run::outbox::RetryPolicy;
    /// let p = RetryPolicy::default();
    /// assert_eq!(p.delay_ms(0, 0.0), 250.0);
    /// assert_eq!(p.delay_ms(2, 0.999_999).round(), 2000.0);
    /// assert_eq!(p.delay_ms(60, 0.0), 7500.0);
    /// ```
    pub fn delay_ms(&self, attempt: u32, jitter: f64) -> f64 {
        let exponent = i32::try_from(attempt).unwrap_or(i32::MAX);
        let d = (self.first_delay_ms * self.factor.powi(exponent)).min(self.max_delay_ms);
        d / 2.0 + jitter.clamp(0.0, 1.0) * d / 2.0
    }
}

/// Whether an HTTP status refuses a submission for good, so that sending it again cannot
/// help: every 4xx (the request itself is wrong: too large, forbidden because the run ended,
/// not found) except 408 and 429, which ask to try later. 5xx and no answer at all are retried.
///
/// ```
/// use clozelab::game::run::outbox::refused_for_good;
/// assert!(refused_for_good(403) && refused_for_good(413));
/// assert!(!refused_for_good(429) && !refused_for_good(503) && !refused_for_good(200));
/// ```
pub fn refused_for_good(status: u16) -> bool {
    (400..500).contains(&status) && status != 408 && status != 429
}

/// How a submission goes to its server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendMethod {
    /// `POST` of JSON with an `Idempotency-Key` header: a study's own server, which keeps each
    /// key once.
    #[default]
    PostJson,
    /// `POST` of text that the server appends to what it holds (JATOS's `POST resultData`):
    /// each send is small, a repeat only appends a copy the results reader counts once.
    AppendText,
    /// `GET` of the address, no body: a call whose effect is the same however often it is made
    /// (JATOS's `abort` of a run the participant withdrew from).
    Get,
}

/// A submission waiting for the server's acknowledgement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// The idempotency key: sent as the `Idempotency-Key` header and the key it is kept under.
    pub key: String,
    /// Where it goes (a path on the app's own server, as the study config allows).
    pub url: String,
    pub body: String,
    /// Failed attempts so far (across visits).
    pub attempts: u32,
    /// How it is sent (a `POST` of JSON the server merges by key, unless said otherwise).
    #[serde(default)]
    pub method: SendMethod,
}

/// A bundle's JSON with each response's idempotency key added (`idempotency_key`), for servers
/// that merge submissions per response: participant/run/passage/position (the run from the
/// bundle's manifest, see [`response_key_in`]), and /round for the two-token game's rounds.
/// The next-word game's bundles hold `responses`, the next-token games' `records`. `None` when
/// the text is not a bundle of such records.
pub fn with_response_keys(bundle_json: &str) -> Option<String> {
    let mut value: serde_json::Value = serde_json::from_str(bundle_json).ok()?;
    add_response_keys(&mut value)?;
    serde_json::to_string(&value).ok()
}

/// [`with_response_keys`] on a bundle already parsed: each of its records given its
/// `idempotency_key`; `None` (the value partly keyed) when it is not a bundle of such records.
pub fn add_response_keys(value: &mut serde_json::Value) -> Option<()> {
    let run = value
        .pointer("/manifest/run")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string();
    let list = if value.get("responses").is_some() {
        "responses"
    } else {
        "records"
    };
    let responses = value.get_mut(list)?.as_array_mut()?;
    for r in responses.iter_mut() {
        let record = r.as_object_mut()?;
        let text = |name: &str| record.get(name).and_then(|v| v.as_str());
        let number = |name: &str| record.get(name).and_then(serde_json::Value::as_u64);
        let position = u32::try_from(number("position")?).ok()?;
        let mut key = response_key_in(text("participant")?, &run, text("passage")?, position);
        if let Some(round) = number("round") {
            key.push_str(&format!("/{round}"));
        }
        record.insert("idempotency_key".into(), serde_json::Value::String(key));
    }
    Some(())
}

/// A submission of `bundle` (an export bundle's JSON, each response then given its own key)
/// to `study`'s server under `key`: a `POST` of JSON to its submit path, or in JATOS an
/// append to the run's result data (one bundle per line); `None` when the study sends
/// results nowhere.
pub fn submission(
    study: &crate::game::design::study::StudyConfig,
    key: String,
    bundle: String,
) -> Option<Pending> {
    let url = study.submit_url.clone()?;
    let body = with_response_keys(&bundle).unwrap_or(bundle);
    let (body, method) = if study.jatos.is_some() {
        (format!("{body}\n"), SendMethod::AppendText)
    } else {
        (body, SendMethod::PostJson)
    };
    Some(Pending {
        key,
        url,
        body,
        attempts: 0,
        method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_its_cap_with_bounded_jitter() {
        let p = RetryPolicy::new(100.0, 3.0, 2000.0).unwrap();
        let delays: Vec<f64> = (0..6).map(|a| p.delay_ms(a, 1.0)).collect();
        assert_eq!(delays, [100.0, 300.0, 900.0, 2000.0, 2000.0, 2000.0]);
        for a in 0..40 {
            for u in [0.0, 0.3, 0.99] {
                let d = p.delay_ms(a, u);
                let full = p.delay_ms(a, 1.0);
                assert!(d >= full / 2.0 && d <= full, "{a} {u} {d}");
            }
        }
        assert_eq!(p.delay_ms(u32::MAX, 0.5), 1500.0);
        assert_eq!(
            RetryPolicy::new(0.0, 2.0, 10.0),
            Err(RetryPolicyError::FirstDelay(0.0))
        );
        assert_eq!(
            RetryPolicy::new(1.0, 0.5, 10.0),
            Err(RetryPolicyError::Factor(0.5))
        );
        assert_eq!(
            RetryPolicy::new(10.0, 2.0, 1.0),
            Err(RetryPolicyError::MaxDelay(1.0))
        );
    }

    #[test]
    fn bundles_get_a_key_per_response() {
        let bundle = r#"{"manifest": {"participant": "P1"}, "responses": [
            {"participant": "P1", "passage": "storm", "position": 2, "response": "rain",
             "response_time_ms": 900, "timestamp": "t"}]}"#;
        let keyed: serde_json::Value =
            serde_json::from_str(&with_response_keys(bundle).unwrap()).unwrap();
        assert_eq!(keyed["responses"][0]["idempotency_key"], "P1/storm/2");
        assert_eq!(keyed["manifest"]["participant"], "P1");
        let in_run = bundle.replace(
            r#""participant": "P1"}"#,
            r#""participant": "P1", "run": "jatos-7"}"#,
        );
        let keyed: serde_json::Value =
            serde_json::from_str(&with_response_keys(&in_run).unwrap()).unwrap();
        assert_eq!(
            keyed["responses"][0]["idempotency_key"],
            "P1/jatos-7/storm/2"
        );
        let rounds = r#"{"game": "two_token", "records": [{"participant": "P1", "passage": "s", "position": 7, "round": 1}]}"#;
        assert!(with_response_keys(rounds).unwrap().contains("\"P1/s/7/1\""));
        assert_eq!(with_response_keys("[]"), None);
        assert_eq!(with_response_keys("{\"responses\": [{}]}"), None);
    }
}
