//! `clozelab serve` killed with SIGKILL at random moments while participants send their
//! answers one by one, and started again on the same database, 50 times: every answer a
//! participant saw acknowledged is in the database once, none is lost or doubled, and none
//! sits in another participant's run.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clozelab::rng::SplitMix64;
use clozelab::server::load::{Load, drive};
use clozelab::server::store::Store;

use crate::serve::{STUDY, scratch, site};

const KILLS: usize = 50;

/// Starts the server's process on `addr` and waits for its "listening on" line.
fn start(site: &std::path::Path, data: &std::path::Path, addr: &str) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args(["serve", "--site"])
        .arg(site)
        .arg("--data")
        .arg(data)
        .args(["--addr", addr])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines
        .next()
        .expect("the server prints where it listens")
        .unwrap();
    let bound = first
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{first}"))
        .parse()
        .unwrap();
    // The rest of its output is read and dropped, so that it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, bound)
}

#[test]
fn killed_fifty_times_under_load_it_loses_and_doubles_nothing() {
    let dir = scratch("faults");
    let site = site(&dir, STUDY);
    let data = dir.join("answers.sqlite");
    let (mut child, addr) = start(&site, &data, "127.0.0.1:0");
    let load = Load {
        base: format!("http://{addr}"),
        submit_path: "/submit".into(),
        study_id: "storm-1".into(),
        participants: 24,
        answers: 120,
        prefix: "F".into(),
        give_up: Duration::from_secs(120),
        think: Duration::from_millis(120),
    };
    let participants = std::thread::spawn(move || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(drive(&load))
    });
    let mut rng = SplitMix64::new(2026);
    let mut kills = 0;
    let started = Instant::now();
    while kills < KILLS && !participants.is_finished() {
        std::thread::sleep(Duration::from_millis(20 + (rng.next_u64() % 120)));
        child.kill().unwrap(); // SIGKILL: no chance to finish anything
        child.wait().unwrap();
        kills += 1;
        let (next, _) = start(&site, &data, &addr.to_string());
        child = next;
    }
    let report = participants.join().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        kills,
        KILLS,
        "the load lasted through every kill ({:?})",
        started.elapsed()
    );
    assert!(
        report.failed.is_empty(),
        "every answer was acknowledged in the end: {:?}",
        &report.failed[..report.failed.len().min(5)]
    );
    assert!(report.retries > 0, "the kills cut off sends");

    let stored = Store::open_existing(&data).unwrap().answer_keys().unwrap();
    let mut seen = BTreeMap::new();
    for (key, participant, run) in &stored {
        *seen.entry(key.clone()).or_insert(0) += 1;
        assert!(
            key.starts_with(&format!("{participant}/{run}/")),
            "{key} stored in {participant}/{run}"
        );
    }
    let accepted: BTreeSet<&String> = report.accepted.iter().map(|(_, _, k)| k).collect();
    let lost: Vec<_> = accepted
        .iter()
        .filter(|k| !seen.contains_key(**k))
        .collect();
    let doubled: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    let unasked: Vec<_> = seen.keys().filter(|k| !accepted.contains(k)).collect();
    assert_eq!(accepted.len(), 24 * 120);
    assert!(lost.is_empty(), "lost: {lost:?}");
    assert!(doubled.is_empty(), "doubled: {doubled:?}");
    assert!(
        unasked.is_empty(),
        "stored but never acknowledged: {unasked:?}"
    );
    let submissions = Store::open_existing(&data).unwrap().submissions().unwrap();
    assert_eq!(submissions.len(), 24 * 120, "one submission per key");
}
