//! Simulated participants for `clozelab bench serve` and the server's fault tests: each sends
//! its answers one by one as the page does with `send_each_response` (a bundle of one answer
//! under the answer's own key) and, like the page's outbox, sends an answer again until the
//! server acknowledges it (2xx) or refuses it for good (4xx).

use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::game::design::run_scope::response_key_in;
use crate::game::run::outbox::refused_for_good;
use crate::rng::SplitMix64;

/// The work: `participants` people answering `answers` times each.
#[derive(Clone, Debug)]
pub struct Load {
    /// `http://host:port` of the server.
    pub base: String,
    pub submit_path: String,
    pub study_id: String,
    pub participants: usize,
    pub answers: usize,
    /// Participant ids are `{prefix}{n}`, so that runs of one test do not share ids.
    pub prefix: String,
    /// Give up on an answer after this long without an acknowledgement.
    pub give_up: Duration,
    /// The longest pause before each answer (each a uniform draw up to it): people think
    /// before they type; zero sends as fast as the server answers.
    pub think: Duration,
}

/// What the participants saw.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Every answer the server acknowledged: (participant, run, answer key).
    pub accepted: Vec<(String, String, String)>,
    /// Answers refused for good (status and key) or given up on.
    pub failed: Vec<(u16, String)>,
    /// Milliseconds from each acknowledged answer's first send to its acknowledgement.
    pub latencies_ms: Vec<f64>,
    /// Sends that had to be repeated (no answer, or 5xx).
    pub retries: u64,
    pub elapsed_s: f64,
}

impl LoadReport {
    /// The `q`-quantile (0 to 1) of the latencies, by nearest rank; `None` without any.
    pub fn latency_quantile_ms(&self, q: f64) -> Option<f64> {
        let mut sorted = self.latencies_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let rank = ((q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize).max(1);
        sorted.get(rank - 1).copied()
    }
}

/// One answer's body, as the page's per-answer send makes it.
pub fn answer_body(
    study_id: &str,
    participant: &str,
    run: &str,
    position: usize,
) -> (String, String) {
    let passage = format!("passage{}", position / 20);
    let key = response_key_in(participant, run, &passage, position as u32);
    let body = serde_json::json!({
        "manifest": {
            "app": "clozelab", "app_version": "load", "model_name": "", "tokenizer": "",
            "backend": "", "adapter": "", "weight_sha256": "", "participant": participant, "study_id": study_id,
            "run": run, "order_seed": 0, "sampling_seed": 0, "study": {"study_id": study_id},
            "url_ids": {}, "exported_at": "2026-12-02T10:00:00Z",
        },
        "responses": [{
            "participant": participant, "passage": passage, "position": position,
            "response": format!("word{position}"), "response_time_ms": 900 + position,
            "timestamp": "2026-12-02T10:00:00Z", "idempotency_key": key,
        }],
    });
    (key, body.to_string())
}

/// Runs the participants at once on the current runtime; returns when each has sent every answer.
pub async fn drive(load: &Load) -> LoadReport {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(connector);
    let started = Instant::now();
    let tasks: Vec<_> = (0..load.participants)
        .map(|n| {
            let client = client.clone();
            let load = load.clone();
            tokio::spawn(async move { participant(&client, &load, n).await })
        })
        .collect();
    let mut report = LoadReport::default();
    for task in tasks {
        let Ok(part) = task.await else { continue };
        report.accepted.extend(part.accepted);
        report.failed.extend(part.failed);
        report.latencies_ms.extend(part.latencies_ms);
        report.retries += part.retries;
    }
    report.elapsed_s = started.elapsed().as_secs_f64();
    report
}

async fn participant(
    client: &Client<HttpConnector, Full<Bytes>>,
    load: &Load,
    n: usize,
) -> LoadReport {
    let id = format!("{}{n}", load.prefix);
    let run = format!("run-{n}");
    let url = format!("{}{}", load.base, load.submit_path);
    let mut rng = SplitMix64::new(n as u64 + 1);
    let mut report = LoadReport::default();
    for position in 0..load.answers {
        if !load.think.is_zero() {
            tokio::time::sleep(load.think.mul_f32(rng.next_unit())).await;
        }
        let (key, body) = answer_body(&load.study_id, &id, &run, position);
        let first = Instant::now();
        let mut attempt = 0u32;
        loop {
            let status = send(client, &url, &key, &body).await;
            match status {
                Some(s) if (200..300).contains(&s) => {
                    report
                        .latencies_ms
                        .push(first.elapsed().as_secs_f64() * 1e3);
                    report.accepted.push((id.clone(), run.clone(), key.clone()));
                    break;
                }
                Some(s) if refused_for_good(s) => {
                    report.failed.push((s, key.clone()));
                    break;
                }
                _ if first.elapsed() > load.give_up => {
                    report.failed.push((status.unwrap_or(0), key.clone()));
                    break;
                }
                _ => {
                    report.retries += 1;
                    attempt += 1;
                    let wait = 10.0
                        * 2f64.powi(attempt.min(5) as i32)
                        * (0.5 + f64::from(rng.next_unit()) / 2.0);
                    tokio::time::sleep(Duration::from_secs_f64(wait / 1e3)).await;
                }
            }
        }
    }
    report
}

/// One POST; its status, or `None` when no answer came (refused connection, reset, timeout).
async fn send(
    client: &Client<HttpConnector, Full<Bytes>>,
    url: &str,
    key: &str,
    body: &str,
) -> Option<u16> {
    let request = hyper::Request::post(url)
        .header("content-type", "application/json")
        .header("idempotency-key", key)
        .body(Full::new(Bytes::from(body.to_string())))
        .ok()?;
    let response = tokio::time::timeout(Duration::from_secs(10), client.request(request))
        .await
        .ok()?
        .ok()?;
    let status = response.status().as_u16();
    // The answer is read whole, so that a 2xx means its body arrived too.
    response.into_body().collect().await.ok()?;
    Some(status)
}
