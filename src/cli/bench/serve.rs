//! `clozelab bench serve`: simulated participants (see [`crate::server::load`]) send their
//! answers one request each to `clozelab serve` over loopback, every answer durable in SQLite
//! before its 2xx: once paced (each participant pausing before each answer: the latency a
//! participant sees at a given load) and once saturated (no pauses: the most answers/s). The
//! baseline is the same requests, read and checked the same way, answered without a database,
//! in the same run on the same machine.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::routing::post;

use super::args::BenchServeArgs;
use crate::cli::error::CliError;
use crate::game::design::study::StudyConfig;
use crate::server::intake::{MAX_BODY_BYTES, read_submission};
use crate::server::listen::{ServeConfig, start};
use crate::server::load::{Load, LoadReport, drive};
use crate::server::store::Store;

const STUDY: &str = r#"{"title": "Bench", "study_id": "bench", "submit_url": "/submit"}"#;

fn usage(e: impl std::fmt::Display) -> CliError {
    CliError::usage(e.to_string())
}

pub fn serve_bench(args: &BenchServeArgs) -> Result<(), CliError> {
    let dir = std::env::temp_dir().join(format!("clozelab-bench-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(CliError::io("make", &dir))?;
    std::fs::write(dir.join("index.html"), "<html></html>").map_err(CliError::io("write", &dir))?;
    std::fs::write(dir.join("study.json"), STUDY).map_err(CliError::io("write", &dir))?;
    let data = dir.join("bench.sqlite");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(usage)?;
    let (stored, baseline) = runtime.block_on(async {
        let config = ServeConfig {
            site: dir.clone(),
            data: data.clone(),
            addr: "127.0.0.1:0".parse().unwrap(),
            tls: None,
            study_origin: None,
            new_export_token: false,
            max_data_bytes: None,
            header_timeout: crate::server::listen::HEADER_TIMEOUT,
        };
        let running = start(&config, || "2026-12-02T10:00:00Z".into(), [7; 24])
            .await
            .map_err(usage)?;
        let load = |base: &str, prefix: &str, think: u64| Load {
            base: base.to_string(),
            submit_path: "/submit".into(),
            study_id: "bench".into(),
            participants: args.participants,
            answers: args.answers,
            prefix: prefix.into(),
            give_up: Duration::from_secs(60),
            think: Duration::from_millis(think),
        };
        let ours = format!("http://{}", running.addr);
        let paced = drive(&load(&ours, "P", args.think_ms)).await;
        let saturated = drive(&load(&ours, "S", 0)).await;
        running.task.abort();
        let base = no_store_server().await?;
        let baseline_paced = drive(&load(&base, "BP", args.think_ms)).await;
        let baseline = drive(&load(&base, "B", 0)).await;
        let stored = [paced, saturated];
        let baseline = [baseline_paced, baseline];
        Ok::<_, CliError>((stored, baseline))
    })?;
    let kept = Store::open_existing(&data)
        .and_then(|s| s.counts())
        .map_err(usage)?;
    let _ = std::fs::remove_dir_all(&dir);
    let line = |name: &str, r: &LoadReport| {
        let rate = r.accepted.len() as f64 / r.elapsed_s;
        let p50 = r.latency_quantile_ms(0.5).unwrap_or(f64::NAN);
        let p99 = r.latency_quantile_ms(0.99).unwrap_or(f64::NAN);
        println!(
            "{name:<26} {:>7} answers in {:>6.2} s: {rate:>8.0} answers/s, p50 {p50:>6.1} ms, p99 {p99:>6.1} ms, {} retried, {} failed",
            r.accepted.len(),
            r.elapsed_s,
            r.retries,
            r.failed.len()
        );
        serde_json::json!({"answers": r.accepted.len(), "seconds": r.elapsed_s, "answers_per_s": rate,
            "p50_ms": p50, "p99_ms": p99, "retries": r.retries, "failed": r.failed.len()})
    };
    println!(
        "{} participants x {} answers, one POST each, over loopback; paced: a pause of up to {} ms before each answer",
        args.participants, args.answers, args.think_ms
    );
    let s = [
        line("paced, stored (fsync'd)", &stored[0]),
        line("saturated, stored", &stored[1]),
    ];
    let b = [
        line("paced, no database", &baseline[0]),
        line("saturated, no database", &baseline[1]),
    ];
    let rate = |r: &LoadReport| r.accepted.len() as f64 / r.elapsed_s;
    let ratio = rate(&stored[1]) / rate(&baseline[1]);
    let acknowledged = stored[0].accepted.len() + stored[1].accepted.len();
    println!(
        "saturated stored/no-database answers/s: {ratio:.2}; rows in the database: {} of {acknowledged} acknowledged",
        kept.answers
    );
    if kept.answers as usize != acknowledged {
        return Err(CliError::usage(
            "the database does not hold every acknowledged answer",
        ));
    }
    let json = serde_json::json!({"participants": args.participants, "answers": args.answers,
        "think_ms": args.think_ms, "paced": s[0], "saturated": s[1], "baseline_paced": b[0],
        "baseline_saturated": b[1], "ratio": ratio});
    std::fs::write(&args.out, serde_json::to_string_pretty(&json)?)
        .map_err(CliError::io("write", &args.out))?;
    Ok(())
}

/// The baseline: the same route, each request read and checked as `clozelab serve` does, and
/// answered 200 without storing.
async fn no_store_server() -> Result<String, CliError> {
    let study = Arc::new(StudyConfig::from_json(STUDY).map_err(usage)?);
    let route = post(move |request: Request| {
        let study = study.clone();
        async move {
            let headers = request.headers().clone();
            let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
            let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES + 1).await
            else {
                return StatusCode::PAYLOAD_TOO_LARGE;
            };
            match read_submission(&study, text("content-type"), text("idempotency-key"), &body) {
                Ok(_) => StatusCode::OK,
                Err(_) => StatusCode::BAD_REQUEST,
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(usage)?;
    let addr = listener.local_addr().map_err(usage)?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, axum::Router::new().route("/submit", route)).await;
    });
    Ok(format!("http://{addr}"))
}
