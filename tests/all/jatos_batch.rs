//! Counterbalancing through JATOS's batch session: claims against a batch that behaves as JATOS's
//! `BatchActionHandler` does (versioned JSON Patch writes), one after another and interleaved.

use std::collections::BTreeMap;

use clozelab::game::design::jatos_run::JatosRun;
use clozelab::game::design::lists::PassageList;
use clozelab::game::design::study::StudyConfig;
use clozelab::game::run::jatos_batch::{
    BatchError, ClaimStep, HOLD_MS, LEDGER_KEY, LedgerState, ListClaim, MAX_ATTEMPTS,
    batch_list_claim,
};
use serde_json::{Value, json};

fn lists(names: &[&str]) -> Vec<PassageList> {
    names
        .iter()
        .map(|n| PassageList {
            name: n.to_string(),
            passages: vec!["storm".into()],
        })
        .collect()
}

/// JATOS's side of one batch: the session, its version, and what a `SESSION` write does.
pub(crate) struct Batch {
    pub(crate) data: Value,
    version: u64,
}

impl Batch {
    pub(crate) fn new() -> Self {
        Self {
            data: json!({}),
            version: 1,
        }
    }

    pub(crate) fn opened(&self) -> String {
        json!({"action": "OPENED", "data": self.data, "version": self.version}).to_string()
    }

    /// The answer to the sender (the patch broadcast to all is left out: claims ignore it).
    pub(crate) fn write(&mut self, text: &str) -> String {
        let msg: Value = serde_json::from_str(text).unwrap();
        assert_eq!(msg["action"], "SESSION");
        let id = msg["id"].clone();
        let stale = msg["versioning"] == json!(true) && msg["version"] != json!(self.version);
        let patched = apply(self.data.clone(), &msg["patches"]);
        match patched {
            Some(data) if !stale => {
                self.data = data;
                self.version += 1;
                json!({"action": "SESSION_ACK", "id": id, "version": self.version}).to_string()
            }
            _ => json!({"action": "SESSION_FAIL", "id": id, "version": self.version}).to_string(),
        }
    }

    /// Participant → list name, of entries as the page writes them.
    pub(crate) fn ledger(&self) -> BTreeMap<String, String> {
        self.data[LEDGER_KEY]
            .as_object()
            .unwrap()
            .iter()
            .map(|(who, entry)| (who.clone(), entry["list"].as_str().unwrap().to_string()))
            .collect()
    }

    /// Carries `exchange` (a claim or a mark) to its end with no one else in between.
    pub(crate) fn carry(&mut self, mut exchange: ListClaim) -> String {
        let mut inbox = self.opened();
        loop {
            match exchange.on_message(&inbox) {
                ClaimStep::Send(out) => inbox = self.write(&out),
                ClaimStep::Chosen(name) => return name,
                ClaimStep::Reopen => inbox = self.opened(),
                other => panic!("unexpected {other:?}"),
            }
        }
    }
}

/// RFC 6902 `add` (all a claim writes): fails where the parent is missing, as diffson does.
fn apply(mut doc: Value, patches: &Value) -> Option<Value> {
    for patch in patches.as_array()? {
        assert_eq!(patch["op"], "add");
        let path = patch["path"].as_str()?;
        let tokens: Vec<String> = path
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        let (last, parents) = tokens.split_last()?;
        let mut parent = &mut doc;
        for t in parents {
            parent = parent.get_mut(t)?;
        }
        parent
            .as_object_mut()?
            .insert(last.clone(), patch["value"].clone());
    }
    Some(doc)
}

/// One participant's claim, carried to its end against `batch` with no one else in between.
fn claim(batch: &mut Batch, names: &[&str], participant: &str, wanted: Option<&str>) -> String {
    batch.carry(ListClaim::new(
        lists(names),
        participant,
        wanted.map(String::from),
        0.0,
    ))
}

#[test]
fn lists_balance_by_completed_participants() {
    let mut batch = Batch::new();
    let at = |batch: &mut Batch, who: &str, now: f64| {
        batch.carry(ListClaim::new(lists(&["A", "B"]), who, None, now))
    };
    assert_eq!(at(&mut batch, "P1", 0.0), "A");
    assert_eq!(at(&mut batch, "P2", 0.0), "B");
    // P1 completes; P2 withdraws: B's place is free again at once.
    batch.carry(ListClaim::mark("P1", "A", LedgerState::Complete, 10.0));
    batch.carry(ListClaim::mark("P2", "B", LedgerState::Ended, 10.0));
    assert_eq!(batch.data[LEDGER_KEY]["P1"]["state"], "complete");
    assert_eq!(at(&mut batch, "P3", 20.0), "B");
    // P3 starts B and leaves without a word: B stays taken for the hold, then frees.
    assert_eq!(at(&mut batch, "P4", 30.0), "A");
    batch.carry(ListClaim::mark("P4", "A", LedgerState::Complete, 40.0));
    assert_eq!(at(&mut batch, "P5", 50.0), "B", "A 2 complete, B 1 playing");
    assert_eq!(
        at(&mut batch, "P6", HOLD_MS + 60.0),
        "B",
        "P3 and P5 abandoned"
    );
    // Without the marks, assigned places would have counted: P2's withdrawal kept B's.
    let mut unmarked = Batch::new();
    for who in ["P1", "P2", "P3"] {
        claim(&mut unmarked, &["A", "B"], who, None);
    }
    assert_eq!(unmarked.ledger()["P3"], "A");
    // A reload of a run that completed keeps its list.
    assert_eq!(at(&mut batch, "P1", 70.0), "A");
}

#[test]
fn participants_one_after_another_balance_the_lists() {
    let mut batch = Batch::new();
    let mut counts = BTreeMap::from(["A", "B", "C"].map(|n| (n.to_string(), 0usize)));
    for i in 0..30 {
        // Every fourth participant comes with a link that names list C: they count too.
        let wanted = (i % 4 == 3).then_some("C");
        let name = claim(&mut batch, &["A", "B", "C"], &format!("P{i}"), wanted);
        *counts.get_mut(&name).unwrap() += 1;
        let (min, max) = (counts.values().min(), counts.values().max());
        assert!(max.unwrap() - min.unwrap() <= 1, "after P{i}: {counts:?}");
    }
    assert_eq!(counts.values().sum::<usize>(), 30);
    assert!(counts.values().all(|&n| n == 10), "{counts:?}");
    assert_eq!(batch.ledger().len(), 30);
}

#[test]
fn a_reload_keeps_the_list_and_writes_nothing() {
    let mut batch = Batch::new();
    assert_eq!(claim(&mut batch, &["A", "B"], "P1", None), "A");
    assert_eq!(claim(&mut batch, &["A", "B"], "P2", None), "B");
    let version = batch.version;
    let mut again = ListClaim::new(lists(&["A", "B"]), "P2", None, 0.0);
    assert_eq!(
        again.on_message(&batch.opened()),
        ClaimStep::Chosen("B".into())
    );
    assert_eq!(batch.version, version);
    // A list the study no longer has is claimed afresh, the entry replaced.
    let mut renamed = ListClaim::new(lists(&["A", "C"]), "P2", None, 0.0);
    let ClaimStep::Send(out) = renamed.on_message(&batch.opened()) else {
        panic!("expected a write")
    };
    assert!(batch.write(&out).contains("SESSION_ACK"));
    assert_eq!(batch.ledger()["P2"], "C");
}

#[test]
fn two_participants_starting_at_once_get_different_lists() {
    let mut batch = Batch::new();
    let mut first = ListClaim::new(lists(&["A", "B"]), "P1", None, 0.0);
    let mut second = ListClaim::new(lists(&["A", "B"]), "P2", None, 0.0);
    // Both channels open on the same version and both would take A.
    let opened = batch.opened();
    let (ClaimStep::Send(w1), ClaimStep::Send(w2)) =
        (first.on_message(&opened), second.on_message(&opened))
    else {
        panic!("both write")
    };
    assert!(w1.contains(r#""value":{"P1":{"at":0.0,"list":"A""#), "{w1}");
    assert!(w2.contains(r#""value":{"P2":{"at":0.0,"list":"A""#), "{w2}");
    assert_eq!(
        first.on_message(&batch.write(&w1)),
        ClaimStep::Chosen("A".into())
    );
    // The second write is stale: JATOS refuses it and the claim starts over on a new channel.
    assert_eq!(second.on_message(&batch.write(&w2)), ClaimStep::Reopen);
    let ClaimStep::Send(retry) = second.on_message(&batch.opened()) else {
        panic!("a second write")
    };
    assert_eq!(
        second.on_message(&batch.write(&retry)),
        ClaimStep::Chosen("B".into())
    );
    assert_eq!(
        batch.ledger(),
        BTreeMap::from([("P1".into(), "A".into()), ("P2".into(), "B".into())])
    );
}

#[test]
fn a_claim_that_keeps_losing_gives_up() {
    let mut claim = ListClaim::new(lists(&["A", "B"]), "P1", None, 0.0);
    let opened = r#"{"action":"OPENED","data":{},"version":1}"#;
    for attempt in 1..=MAX_ATTEMPTS {
        let ClaimStep::Send(out) = claim.on_message(opened) else {
            panic!("a write")
        };
        let id = serde_json::from_str::<Value>(&out).unwrap()["id"].clone();
        let fail = json!({"action": "SESSION_FAIL", "id": id, "version": 9}).to_string();
        let expected = if attempt < MAX_ATTEMPTS {
            ClaimStep::Reopen
        } else {
            ClaimStep::Failed(BatchError::Contended(MAX_ATTEMPTS))
        };
        assert_eq!(claim.on_message(&fail), expected);
    }
}

#[test]
fn odd_messages_and_odd_sessions() {
    let mut claim = ListClaim::new(lists(&["A", "B"]), "a/b~c", None, 0.0);
    // Heartbeats, others' patches and answers to someone else's write change nothing.
    for text in [
        r#"{"heartbeat":"pong"}"#,
        r#"{"action":"SESSION","patches":[],"version":3}"#,
        r#"{"action":"SESSION_ACK","id":0,"version":3}"#,
        r#"[1,2]"#,
    ] {
        assert_eq!(claim.on_message(text), ClaimStep::Wait, "{text}");
    }
    assert!(matches!(
        claim.on_message("not json"),
        ClaimStep::Failed(BatchError::NotJson(_))
    ));
    assert_eq!(
        claim.on_message(r#"{"action":"CLOSED"}"#),
        ClaimStep::Failed(BatchError::Closed)
    );
    assert_eq!(
        claim.on_message(r#"{"action":"ERROR","errorMsg":"Couldn't find batch"}"#),
        ClaimStep::Failed(BatchError::Server("Couldn't find batch".into()))
    );
    // Someone else's data under the ledger's name (not an object) is replaced, not patched into;
    // ids with `/` and `~` become one JSON Pointer token.
    let mut batch = Batch::new();
    batch.data = json!({LEDGER_KEY: "oops", "other": {"keep": 1}});
    let ClaimStep::Send(out) = claim.on_message(&batch.opened()) else {
        panic!("a write")
    };
    assert!(batch.write(&out).contains("SESSION_ACK"));
    assert_eq!(batch.ledger()["a/b~c"], "A");
    assert_eq!(batch.data["other"], json!({"keep": 1}));
    let mut next = ListClaim::new(lists(&["A", "B"]), "x~y/z", None, 0.0);
    let ClaimStep::Send(out) = next.on_message(&batch.opened()) else {
        panic!("a write")
    };
    assert!(out.contains(r#""path":"/clozelabLists/x~0y~1z""#), "{out}");
    assert!(batch.write(&out).contains("SESSION_ACK"));
    assert_eq!(batch.ledger()["x~y/z"], "B");
    // Counts of names that are not the study's lists (or not strings) are ignored.
    batch.data[LEDGER_KEY] = json!({"q": "Z", "r": 3, "s": "B"});
    let mut third = ListClaim::new(lists(&["A", "B"]), "P3", None, 0.0);
    let ClaimStep::Send(out) = third.on_message(&batch.opened()) else {
        panic!("a write")
    };
    assert!(out.contains(r#""list":"A""#), "{out}");
}

#[test]
fn only_a_jatos_run_of_a_study_with_lists_claims() {
    let json = r#"{"passages": ["storm", "bees"], "lists": [
        {"name": "A", "passages": ["storm"]}, {"name": "B", "passages": ["bees"]}]}"#;
    let config = StudyConfig::from_json(json).unwrap();
    let params = BTreeMap::new();
    assert!(
        batch_list_claim(&config, "P1", &params, 0.0).is_none(),
        "not in JATOS"
    );
    let run = JatosRun::detect(
        "/publix/8a2c-01/5b1d-02/start",
        "JATOS_ID_1=studyResultUuid=8a2c-01&urlBasePath=/",
    )
    .unwrap();
    let mut in_jatos = config.clone().in_jatos(run);
    let (path, _) = batch_list_claim(&in_jatos, "P1", &params, 0.0).unwrap();
    assert_eq!(path, "/publix/8a2c-01/batch/open");
    assert!(batch_list_claim(&in_jatos.clone().for_preview(), "P1", &params, 0.0).is_none());
    // JATOS's test run (its "Run" button, worker type Jatos) takes no list place either.
    let test_run = JatosRun::detect(
        "/publix/8a2c-01/5b1d-02/start",
        "JATOS_ID_1=studyResultUuid=8a2c-01&workerType=Jatos&urlBasePath=/",
    )
    .unwrap();
    assert!(test_run.is_test_run());
    assert!(batch_list_claim(&config.clone().in_jatos(test_run), "P1", &params, 0.0).is_none());
    let no_lists = StudyConfig::from_json(r#"{"passages": ["storm"]}"#)
        .unwrap()
        .in_jatos(in_jatos.jatos.clone().unwrap());
    assert!(batch_list_claim(&no_lists, "P1", &params, 0.0).is_none());
    // The batch's list goes into the plan, recorded as chosen by JATOS; a link's list wins.
    in_jatos.jatos.as_mut().unwrap().batch_list = Some("B".into());
    let plan = in_jatos.plan("P1", &params).unwrap();
    let list = plan.list.unwrap();
    assert_eq!(list.name, "B");
    assert_eq!(
        list.how,
        clozelab::game::design::lists::ListAssignment::JatosBatch
    );
    let linked = in_jatos
        .plan("P1", &BTreeMap::from([("list".into(), "A".into())]))
        .unwrap();
    assert_eq!(linked.list.unwrap().name, "A");
}
