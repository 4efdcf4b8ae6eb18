//! Counterbalancing inside JATOS: the batch session as the ledger of who plays which list.
//!
//! JATOS shares one JSON object, the batch session, between all runs of a batch, reachable only
//! over its batch channel, a WebSocket at `<urlBasePath>publix/<study result uuid>/batch/open`
//! (JATOS 3.10: `ChannelInterceptor.openBatch`, `BatchDispatcher`, `BatchActionHandler`). On
//! opening, JATOS sends `{"action":"OPENED","data":{…},"version":n}`; a client changes the
//! session with `{"action":"SESSION","id":k,"patches":[JSON Patch],"version":n,
//! "versioning":true}`, which JATOS applies only if `n` is still the session's version, answering
//! `SESSION_ACK` (and the patch to everyone) or `SESSION_FAIL` with the same `id`.
//!
//! The ledger is the session's [`LEDGER_KEY`] member, participant id → list name. A participant
//! the ledger already names keeps that list (a reload asks again); anyone else gets the list the
//! URL named, else the least-used one ([`least_used`]), written with versioning on, so two
//! participants starting at once cannot both take the same place: the later patch fails and its
//! claim starts over from a newly opened channel. [`ListClaim`] is that exchange as a state
//! machine; the page only carries its messages.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::lists::{PassageList, least_used};

/// The batch session's member that holds the ledger (participant id → list name).
pub const LEDGER_KEY: &str = "clozelabLists";

/// How many times a claim starts over after another participant's write came first.
pub const MAX_ATTEMPTS: u32 = 5;

/// Why no list came from JATOS's batch session.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum BatchError {
    #[error("JATOS's batch channel sent a message that is not JSON: {0}")]
    NotJson(String),
    #[error("JATOS's batch channel reported an error: {0}")]
    Server(String),
    #[error("JATOS closed the batch channel (this study run is no longer valid)")]
    Closed,
    #[error("other participants kept changing the batch session ({0} tries)")]
    Contended(u32),
}

/// What the page does next with the batch channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimStep {
    /// Send this text over the channel.
    Send(String),
    /// Nothing to do until the next message.
    Wait,
    /// Close the channel and open a new one (the claim starts over from `OPENED`).
    Reopen,
    /// The participant's list, recorded in the batch session.
    Chosen(String),
    /// No list from JATOS: the caller falls back to the URL or the participant hash.
    Failed(BatchError),
}

/// One participant's claim of a list in the batch session.
///
/// ```
/// use clozelab::game::jatos_batch::{ClaimStep, ListClaim};
/// use clozelab::game::lists::PassageList;
/// let lists = ["A", "B"].map(|n| PassageList { name: n.into(), passages: vec![] }).to_vec();
/// let mut claim = ListClaim::new(lists, "P7", None);
/// // Two participants already play A: P7 is written down for B.
/// let opened = r#"{"action":"OPENED","data":{"clozelabLists":{"P1":"A","P2":"A"}},"version":4}"#;
/// let ClaimStep::Send(patch) = claim.on_message(opened) else { panic!() };
/// assert!(patch.contains(r#""path":"/clozelabLists/P7","value":"B""#));
/// assert!(patch.contains(r#""version":4"#) && patch.contains(r#""versioning":true"#));
/// let ack = r#"{"action":"SESSION_ACK","id":0,"version":5}"#;
/// assert_eq!(claim.on_message(ack), ClaimStep::Chosen("B".into()));
/// ```
#[derive(Clone, Debug)]
pub struct ListClaim {
    lists: Vec<PassageList>,
    participant: String,
    wanted: Option<String>,
    attempt: u32,
    /// The write in flight: its id and the list it names.
    pending: Option<(u32, String)>,
}

impl ListClaim {
    /// A claim for `participant`; `wanted` is the list the URL named (recorded as it is, so
    /// that participants sent to a list by their link count towards the balance too).
    pub fn new(lists: Vec<PassageList>, participant: &str, wanted: Option<String>) -> Self {
        Self {
            lists,
            participant: participant.to_string(),
            wanted,
            attempt: 0,
            pending: None,
        }
    }

    /// The next step after the channel delivered `text`.
    pub fn on_message(&mut self, text: &str) -> ClaimStep {
        let message: Value = match serde_json::from_str(text) {
            Ok(m) => m,
            Err(e) => return ClaimStep::Failed(BatchError::NotJson(e.to_string())),
        };
        let id_matches = || {
            let id = message.get("id").and_then(Value::as_u64);
            self.pending.as_ref().map(|(p, _)| u64::from(*p)) == id && id.is_some()
        };
        match message.get("action").and_then(Value::as_str) {
            Some("OPENED") => self.on_opened(&message),
            Some("SESSION_ACK") if id_matches() => match self.pending.take() {
                Some((_, name)) => ClaimStep::Chosen(name),
                None => ClaimStep::Wait,
            },
            Some("SESSION_FAIL") if id_matches() => {
                self.pending = None;
                self.attempt += 1;
                if self.attempt >= MAX_ATTEMPTS {
                    ClaimStep::Failed(BatchError::Contended(self.attempt))
                } else {
                    ClaimStep::Reopen
                }
            }
            Some("CLOSED") => ClaimStep::Failed(BatchError::Closed),
            Some("ERROR") => ClaimStep::Failed(BatchError::Server(
                message
                    .get("errorMsg")
                    .and_then(Value::as_str)
                    .unwrap_or("no message")
                    .to_string(),
            )),
            // Others' patches, heartbeats' pongs, answers to an earlier channel's writes.
            _ => ClaimStep::Wait,
        }
    }

    fn on_opened(&mut self, message: &Value) -> ClaimStep {
        let version = message.get("version").and_then(Value::as_u64).unwrap_or(0);
        let ledger = message
            .get("data")
            .and_then(|d| d.get(LEDGER_KEY))
            .and_then(Value::as_object);
        let known = |name: &str| self.lists.iter().any(|l| l.name == name);
        if let Some(name) = ledger
            .and_then(|l| l.get(&self.participant))
            .and_then(Value::as_str)
            .filter(|name| known(name))
        {
            return ClaimStep::Chosen(name.to_string());
        }
        let mut counts = BTreeMap::new();
        for name in ledger
            .into_iter()
            .flat_map(|l| l.values())
            .filter_map(Value::as_str)
        {
            *counts.entry(name.to_string()).or_insert(0u64) += 1;
        }
        let wanted = self.wanted.as_deref().filter(|name| known(name));
        let Some(name) = wanted.or_else(|| least_used(&self.lists, &counts)) else {
            return ClaimStep::Failed(BatchError::Server("the study has no lists".into()));
        };
        let patch = match ledger {
            Some(_) => json!({
                "op": "add",
                "path": format!("/{LEDGER_KEY}/{}", json_pointer_token(&self.participant)),
                "value": name,
            }),
            None => {
                let mut first = serde_json::Map::new();
                first.insert(self.participant.clone(), json!(name));
                json!({ "op": "add", "path": format!("/{LEDGER_KEY}"), "value": first })
            }
        };
        let id = self.attempt;
        self.pending = Some((id, name.to_string()));
        ClaimStep::Send(
            json!({
                "action": "SESSION",
                "id": id,
                "patches": [patch],
                "version": version,
                "versioning": true,
            })
            .to_string(),
        )
    }
}

/// `name` as one reference token of a JSON Pointer (RFC 6901: `~` → `~0`, `/` → `~1`).
///
/// ```
/// use clozelab::game::jatos_batch::json_pointer_token;
/// assert_eq!(json_pointer_token("a/b~c"), "a~1b~0c");
/// ```
pub fn json_pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
