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
//! The ledger is the session's [`LEDGER_KEY`] member, participant id → `{"list", "state", "at"}`
//! ([`LedgerEntry`]). A participant the ledger already names keeps that list (a reload asks
//! again); anyone else gets the list the URL named, else the least-used one ([`least_used`]),
//! written with versioning on, so two participants starting at once cannot both take the same
//! place: the later patch fails and its claim starts over from a newly opened channel.
//!
//! Lists are balanced by *completed* participants: a run marks its entry `complete` when it
//! ends with every answer, `ended` when the participant declined, withdrew or was screened out
//! (its place is free again at once), and a run still `playing` holds its place for
//! [`HOLD_MS`] after it started (then it counts as abandoned and frees it). [`ListClaim`] is the
//! exchange as a state machine, for claiming a list or marking how a run ended; the page only
//! carries its messages. With adaptive norming the claim chooses by the answers so far and a
//! completing mark adds the run's answers to them ([`super::norming_state`]).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::json_pointer::json_pointer_token;
use crate::game::design::adaptive_norming::NormingAssignment;
use crate::game::design::lists::{PassageList, least_used};
use crate::game::run::norming_state::{NormingPlan, ResponseCounts};

/// The batch session's member that holds the ledger (participant id → list name).
pub const LEDGER_KEY: &str = "clozelabLists";

/// How many times a claim starts over after another participant's write came first.
pub const MAX_ATTEMPTS: u32 = 5;

/// How long a run that has not ended holds its list's place: 2 hours, past the longest a
/// cloze study of a few hundred words takes (Prolific's default maximum time for a 30-minute
/// study is about 2 hours too). A run left open longer counts as abandoned.
pub const HOLD_MS: f64 = 2.0 * 60.0 * 60.0 * 1000.0;

/// Where a run in the ledger stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LedgerState {
    /// Started, not ended: holds its place for [`HOLD_MS`].
    Playing,
    /// Ended with every answer: counts for good.
    Complete,
    /// Declined, withdrew or screened out: frees its place.
    Ended,
}

/// One participant's entry in the ledger.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LedgerEntry {
    pub list: String,
    pub state: LedgerState,
    /// When the entry was written (ms since the epoch, the page's clock).
    pub at: f64,
    /// Why adaptive norming chose the list (kept, so that a reload records the same reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl LedgerEntry {
    /// An entry as the batch session holds it; a bare list name (written before runs were
    /// marked) reads as a run still playing that never expires.
    fn read(value: &Value) -> Option<Self> {
        match value {
            Value::String(list) => Some(Self {
                list: list.clone(),
                state: LedgerState::Playing,
                at: f64::INFINITY,
                reason: None,
            }),
            other => serde_json::from_value(other.clone()).ok(),
        }
    }

    /// Whether this entry takes a place in its list at `now_ms`.
    fn counts(&self, now_ms: f64) -> bool {
        match self.state {
            LedgerState::Complete => true,
            LedgerState::Playing => now_ms - self.at <= HOLD_MS,
            LedgerState::Ended => false,
        }
    }
}

/// Of a ledger (participant → entry), how many places each list has taken at `now_ms`.
///
/// ```
/// use clozelab::game::run::jatos_batch::{HOLD_MS, places_taken};
/// let ledger = serde_json::json!({
///     "P1": {"list": "A", "state": "complete", "at": 0.0},
///     "P2": {"list": "A", "state": "ended", "at": 0.0},
///     "P3": {"list": "B", "state": "playing", "at": 0.0},
///     "P4": "B",
/// });
/// let taken = places_taken(ledger.as_object().unwrap(), 1.0);
/// assert_eq!((taken["A"], taken["B"]), (1, 2));
/// // P3 started too long ago: abandoned.
/// let later = places_taken(ledger.as_object().unwrap(), HOLD_MS + 1.0);
/// assert_eq!(later["B"], 1);
/// ```
pub fn places_taken(ledger: &serde_json::Map<String, Value>, now_ms: f64) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for entry in ledger.values().filter_map(LedgerEntry::read) {
        let taken = counts.entry(entry.list.clone()).or_insert(0u64);
        if entry.counts(now_ms) {
            *taken += 1;
        }
    }
    counts
}

/// Of a ledger, how many runs of each list are still playing (and not yet abandoned) at
/// `now_ms`.
///
/// ```
/// use clozelab::game::run::jatos_batch::playing;
/// let ledger = serde_json::json!({
///     "P1": {"list": "A", "state": "complete", "at": 0.0},
///     "P2": {"list": "A", "state": "playing", "at": 0.0},
/// });
/// assert_eq!(playing(ledger.as_object().unwrap(), 1.0)["A"], 1);
/// ```
pub fn playing(ledger: &serde_json::Map<String, Value>, now_ms: f64) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for entry in ledger.values().filter_map(LedgerEntry::read) {
        let running = entry.state == LedgerState::Playing && entry.counts(now_ms);
        *counts.entry(entry.list.clone()).or_insert(0u64) += u64::from(running);
    }
    counts
}

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
    /// Adaptive norming's target is met: no list for a new participant (why, in words).
    Full(String),
    /// No list from JATOS: the caller falls back to the URL or the participant hash.
    Failed(BatchError),
}

/// How a claim ended for the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchOutcome {
    /// The participant's list, with adaptive norming's reason where it chose it.
    List {
        name: String,
        reason: Option<String>,
    },
    /// Adaptive norming's target is met: the study is full (why, in words).
    Full(String),
}

/// One participant's claim of a list in the batch session.
///
/// ```
/// use clozelab::game::run::jatos_batch::{ClaimStep, ListClaim};
/// use clozelab::game::design::lists::PassageList;
/// let lists = ["A", "B"].map(|n| PassageList { name: n.into(), passages: vec![] }).to_vec();
/// let mut claim = ListClaim::new(lists, "P7", None, 1000.0);
/// // Two participants already play A: P7 is written down for B.
/// let opened = r#"{"action":"OPENED","data":{"clozelabLists":{"P1":"A","P2":"A"}},"version":4}"#;
/// let ClaimStep::Send(patch) = claim.on_message(opened) else { panic!() };
/// assert!(patch.contains(r#""path":"/clozelabLists/P7","value":{"at":1000.0,"list":"B""#));
/// assert!(patch.contains(r#""version":4"#) && patch.contains(r#""versioning":true"#));
/// let ack = r#"{"action":"SESSION_ACK","id":0,"version":5}"#;
/// assert_eq!(claim.on_message(ack), ClaimStep::Chosen("B".into()));
/// ```
#[derive(Clone, Debug)]
pub struct ListClaim {
    lists: Vec<PassageList>,
    participant: String,
    wanted: Option<String>,
    /// Set when the exchange marks how the run ended instead of claiming a list.
    marking: Option<(String, LedgerState)>,
    now_ms: f64,
    attempt: u32,
    /// The write in flight: its id and the list it names.
    pending: Option<(u32, String)>,
    /// Adaptive norming's plan: a claim chooses by it, a completing mark adds `answers`.
    norming: Option<NormingPlan>,
    /// A completed run's answers (context key, word as given), added to the norming counts.
    answers: Vec<(String, String)>,
    /// Why adaptive norming chose the list.
    reason: Option<String>,
}

impl ListClaim {
    /// A claim for `participant` at `now_ms` (the page's clock); `wanted` is the list the URL
    /// named (recorded as it is, so that participants sent to a list by their link count
    /// towards the balance too).
    pub fn new(
        lists: Vec<PassageList>,
        participant: &str,
        wanted: Option<String>,
        now_ms: f64,
    ) -> Self {
        Self {
            lists,
            participant: participant.to_string(),
            wanted,
            marking: None,
            now_ms,
            attempt: 0,
            pending: None,
            norming: None,
            answers: Vec::new(),
            reason: None,
        }
    }

    /// The claim chooses by adaptive norming's `plan` (a list the URL names still wins), and
    /// a completing mark adds `answers` to its counts.
    pub fn with_norming(mut self, plan: NormingPlan, answers: Vec<(String, String)>) -> Self {
        self.norming = Some(plan);
        self.answers = answers;
        self
    }

    /// Why adaptive norming chose the list (once [`ClaimStep::Chosen`]); `None` otherwise.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The exchange that records how `participant`'s run of `list` ended (`state`): it ends
    /// with [`ClaimStep::Chosen`] once the batch session holds it.
    ///
    /// ```
    /// use clozelab::game::run::jatos_batch::{ClaimStep, LedgerState, ListClaim};
    /// let mut mark = ListClaim::mark("P7", "B", LedgerState::Complete, 5.0);
    /// let opened = r#"{"action":"OPENED","data":{"clozelabLists":{"P7":"B"}},"version":9}"#;
    /// let ClaimStep::Send(patch) = mark.on_message(opened) else { panic!() };
    /// assert!(patch.contains(r#""value":{"at":5.0,"list":"B","state":"complete"}"#), "{patch}");
    /// let ack = r#"{"action":"SESSION_ACK","id":0,"version":10}"#;
    /// assert_eq!(mark.on_message(ack), ClaimStep::Chosen("B".into()));
    /// ```
    pub fn mark(participant: &str, list: &str, state: LedgerState, now_ms: f64) -> Self {
        Self {
            lists: Vec::new(),
            participant: participant.to_string(),
            wanted: None,
            marking: Some((list.to_string(), state)),
            now_ms,
            attempt: 0,
            pending: None,
            norming: None,
            answers: Vec::new(),
            reason: None,
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
        let data = message.get("data").unwrap_or(&Value::Null);
        let ledger = data.get(LEDGER_KEY).and_then(Value::as_object);
        let known = |name: &str| self.lists.iter().any(|l| l.name == name);
        let (name, state) = if let Some((list, state)) = &self.marking {
            (list.clone(), *state)
        } else {
            if let Some(entry) = ledger
                .and_then(|l| l.get(&self.participant))
                .and_then(LedgerEntry::read)
                .filter(|entry| known(&entry.list))
            {
                self.reason = entry.reason;
                return ClaimStep::Chosen(entry.list);
            }
            let counts = ledger
                .map(|l| places_taken(l, self.now_ms))
                .unwrap_or_default();
            let wanted = self.wanted.as_deref().filter(|name| known(name));
            let adaptive = match (&self.norming, wanted) {
                (Some(plan), None) => {
                    let running = ledger.map(|l| playing(l, self.now_ms)).unwrap_or_default();
                    let answers = ResponseCounts::from_session(data);
                    match plan.choose(&answers, &counts, &running) {
                        NormingAssignment::Full { reason } => return ClaimStep::Full(reason),
                        NormingAssignment::List { name, reason } => {
                            self.reason = Some(reason);
                            Some(name)
                        }
                    }
                }
                _ => None,
            };
            let Some(name) = adaptive.or_else(|| {
                wanted
                    .or_else(|| least_used(&self.lists, &counts))
                    .map(str::to_string)
            }) else {
                return ClaimStep::Failed(BatchError::Server("the study has no lists".into()));
            };
            (name, LedgerState::Playing)
        };
        let entry = serde_json::to_value(LedgerEntry {
            list: name.clone(),
            state,
            at: self.now_ms,
            reason: self.reason.clone().filter(|_| self.marking.is_none()),
        })
        .unwrap_or(Value::Null);
        let patch = match ledger {
            Some(_) => json!({
                "op": "add",
                "path": format!("/{LEDGER_KEY}/{}", json_pointer_token(&self.participant)),
                "value": entry,
            }),
            None => {
                let mut first = serde_json::Map::new();
                first.insert(self.participant.clone(), entry);
                json!({ "op": "add", "path": format!("/{LEDGER_KEY}"), "value": first })
            }
        };
        let mut patches = vec![patch];
        if let (Some(plan), Some((_, LedgerState::Complete))) = (&self.norming, &self.marking) {
            patches.extend(plan.completion_patches(data, &self.answers, self.now_ms));
        }
        let id = self.attempt;
        self.pending = Some((id, name));
        ClaimStep::Send(
            json!({
                "action": "SESSION",
                "id": id,
                "patches": patches,
                "version": version,
                "versioning": true,
            })
            .to_string(),
        )
    }
}

/// The batch channel's path on which a run of `config` keeps the lists' ledger: inside JATOS,
/// for a study with lists; `None` elsewhere, and for previews and JATOS's test runs (its "Run"
/// button) — a researcher trying the study must neither take nor mark a list place, or the
/// real sample's counterbalancing shifts (they get a list as outside JATOS).
pub fn ledger_channel(config: &crate::game::design::study::StudyConfig) -> Option<String> {
    let run = config
        .jatos
        .as_ref()
        .filter(|run| !config.preview && !run.is_test_run())?;
    (!config.lists.is_empty()).then(|| run.batch_channel_path())
}

/// The claim of `participant`'s list in JATOS's batch session, and the channel's path to open
/// it on (the list it gives goes in [`crate::game::design::jatos_run::JatosRun::batch_list`]);
/// `None` where the run keeps no ledger ([`ledger_channel`]).
pub fn batch_list_claim(
    config: &crate::game::design::study::StudyConfig,
    participant: &str,
    params: &std::collections::BTreeMap<String, String>,
    now_ms: f64,
) -> Option<(String, ListClaim)> {
    let path = ledger_channel(config)?;
    let wanted = config
        .parameters(params)
        .get(crate::game::design::lists::LIST_PARAM)
        .cloned();
    let mut claim = ListClaim::new(config.lists.clone(), participant, wanted, now_ms);
    if let Some(plan) = NormingPlan::of(config) {
        claim = claim.with_norming(plan, Vec::new());
    }
    Some((path, claim))
}
