//! `clozelab serve` over real sockets and a real SQLite file: each answer kept once, withdrawals
//! honoured, the export read back as results, every bad request refused with its status and
//! nothing stored, a locked or full database answered 503, the site's headers, CORS and TLS.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clozelab::game::readback::results::StudyResults;
use clozelab::game::run::withdrawal::WithdrawalNotice;
use clozelab::server::listen::{Running, ServeConfig, start};
use clozelab::server::load::answer_body;
use clozelab::server::store::Store;

pub const STUDY: &str = r#"{"title": "Storm", "study_id": "storm-1", "submit_url": "/submit", "send_each_response": true}"#;

/// A folder for one test, emptied.
pub fn scratch(name: &str) -> PathBuf {
    let dir = crate::common::repo_root()
        .join("target")
        .join(format!("serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A Website package's files: the page with its policy, the config, a hashed script, a model.
pub fn site(dir: &Path, study: &str) -> PathBuf {
    let site = dir.join("site");
    std::fs::create_dir_all(site.join("models/m")).unwrap();
    std::fs::write(
        site.join("index.html"),
        "<html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'\" /></head><body>app</body></html>",
    )
    .unwrap();
    std::fs::write(site.join("study.json"), study).unwrap();
    std::fs::write(site.join("worker_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(
        site.join("app-0123456789abcdef.js"),
        "export {};\n".repeat(400),
    )
    .unwrap();
    let model: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(site.join("models/m/model.safetensors"), model).unwrap();
    std::fs::write(dir.join("secret.txt"), "SECRET").unwrap();
    site
}

pub struct Server {
    pub running: Running,
    pub data: PathBuf,
    _runtime: tokio::runtime::Runtime,
}

/// The server's settings for `site` with the database in `dir`, on a free loopback port.
fn config_for(dir: &Path, site: PathBuf) -> ServeConfig {
    ServeConfig {
        site,
        data: dir.join("answers.sqlite"),
        addr: "127.0.0.1:0".parse().unwrap(),
        tls: None,
        study_origin: None,
        new_export_token: false,
        max_data_bytes: None,
        header_timeout: Duration::from_secs(10),
    }
}

fn serve(dir: &Path, study: &str, tune: impl FnOnce(&mut ServeConfig)) -> Server {
    let mut config = config_for(dir, site(dir, study));
    tune(&mut config);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let running = runtime
        .block_on(start(
            &config,
            || "2026-12-02T10:00:00.000Z".into(),
            [9; 24],
        ))
        .unwrap();
    Server {
        running,
        data: config.data,
        _runtime: runtime,
    }
}

/// The status, headers (lower-case names) and body of one raw HTTP/1.1 exchange.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `head` (request line and headers, without the blank line) and `body`, reads the reply
/// to the end (the request asks the server to close).
pub fn exchange(addr: SocketAddr, head: &str, body: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let request = format!("{head}\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_reply(&raw)
}

fn parse_reply(raw: &[u8]) -> Reply {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no reply: {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v == "chunked")
    {
        body = unchunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn unchunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap().trim(), 16)
                .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[line_end + 2..line_end + 2 + size]);
        data = &data[line_end + 4 + size..];
    }
}

/// A POST of JSON to the submit path under `key`.
pub fn post(addr: SocketAddr, key: &str, body: &str) -> Reply {
    let head = format!(
        "POST /submit HTTP/1.1\r\nContent-Type: application/json\r\nIdempotency-Key: {key}\r\nContent-Length: {}",
        body.len()
    );
    exchange(addr, &head, body.as_bytes())
}

fn counts(data: &Path) -> (u64, u64, u64) {
    let c = Store::open_existing(data).unwrap().counts().unwrap();
    (c.submissions, c.answers, c.withdrawn)
}

#[test]
fn each_answer_is_kept_once_withdrawals_are_honoured_and_the_export_reads_back() {
    let dir = scratch("once");
    let server = serve(&dir, STUDY, |_| {});
    let addr = server.running.addr;
    let token = server
        .running
        .new_export_token
        .clone()
        .expect("a new database makes a token");

    let (k1, a1) = answer_body("storm-1", "P1", "r1", 0);
    let first = post(addr, &k1, &a1);
    assert_eq!(first.status, 200, "{}", first.text());
    assert!(first.text().contains("\"stored\":true"));
    let again = post(addr, &k1, &a1);
    assert_eq!(again.status, 200);
    assert!(again.text().contains("\"repeat\""), "{}", again.text());
    let (k2, a2) = answer_body("storm-1", "P1", "r1", 1);
    assert_eq!(post(addr, &k2, &a2).status, 200);
    // The final bundle carries both answers again: kept as sent, each answer still once.
    let final_body = a1.replace(
        "\"responses\":[",
        &format!(
            "\"responses\":[{},",
            serde_json::from_str::<serde_json::Value>(&a2).unwrap()["responses"][0]
        ),
    );
    assert_eq!(post(addr, "P1/r1/final", &final_body).status, 200);
    assert_eq!(counts(&server.data), (3, 2, 0));

    // P2 answers, then withdraws: what P2 sent is deleted, a late resend is dropped.
    let (k3, a3) = answer_body("storm-1", "P2", "r2", 0);
    assert_eq!(post(addr, &k3, &a3).status, 200);
    let notice = WithdrawalNotice {
        participant: "P2".into(),
        study: "Storm".into(),
        withdrawn_at: "2026-12-02T10:05:00Z".into(),
        run: "r2".into(),
    };
    assert_eq!(post(addr, &notice.key(), &notice.to_json()).status, 200);
    let (k4, a4) = answer_body("storm-1", "P2", "r2", 1);
    let late = post(addr, &k4, &a4);
    assert_eq!(
        late.status, 200,
        "acknowledged, so that the page stops sending"
    );
    assert!(late.text().contains("withdrawn"), "{}", late.text());
    assert_eq!(counts(&server.data), (4, 2, 1));

    // The export, over HTTP with the token and by the CLI, reads back as results.
    let head = format!("GET /clozelab/export HTTP/1.1\r\nAuthorization: Bearer {token}");
    let zip = exchange(addr, &head, b"");
    assert_eq!(zip.status, 200);
    assert_eq!(zip.header("content-type"), Some("application/zip"));
    let out = dir.join("results.zip");
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args(["export", "--data"])
        .arg(&server.data)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        zip.body,
        "the CLI's export is the server's"
    );
    let results = StudyResults::read(vec![("results.zip".into(), zip.body)]).unwrap();
    let p1: Vec<_> = results
        .responses
        .iter()
        .filter(|r| r.participant == "P1")
        .collect();
    assert_eq!(p1.len(), 2, "each answer once: {:?}", results.summary());
    assert!(results.responses.iter().all(|r| r.participant != "P2"));
    let p2 = results
        .participants
        .iter()
        .find(|p| p.participant == "P2")
        .expect("P2 is a run");
    assert_eq!(
        p2.state,
        clozelab::data::participant_run::RunState::Withdrawn
    );
}

#[test]
fn bad_requests_get_their_status_and_leave_the_data_as_it_was() {
    let dir = scratch("bad");
    let server = serve(&dir, STUDY, |c| c.header_timeout = Duration::from_secs(1));
    let addr = server.running.addr;
    let (k, a) = answer_body("storm-1", "P1", "r1", 0);
    assert_eq!(post(addr, &k, &a).status, 200);
    let before = counts(&server.data);

    let with = |ct: &str, key: &str, body: &[u8]| {
        let head = format!(
            "POST /submit HTTP/1.1\r\nContent-Type: {ct}\r\nIdempotency-Key: {key}\r\nContent-Length: {}",
            body.len()
        );
        exchange(addr, &head, body).status
    };
    let (k2, a2) = answer_body("storm-1", "P1", "r1", 1);
    assert_eq!(with("text/plain", &k2, a2.as_bytes()), 415);
    assert_eq!(
        with("application/json", &k2, &a2.as_bytes()[..a2.len() - 9]),
        400
    );
    assert_eq!(
        with("application/json", &k2, b"{\"manifest\": \"\xff\xfe\"}"),
        400
    );
    assert_eq!(with("application/json", &k2, &vec![b' '; 5 << 20]), 413);
    let other = a2.replace("storm-1", "another-study");
    assert_eq!(with("application/json", &k2, other.as_bytes()), 422);
    let stolen = a2.replacen("\"participant\":\"P1\"", "\"participant\":\"P9\"", 1);
    assert_eq!(
        with("application/json", &k2, stolen.as_bytes()),
        422,
        "an answer in another's bundle"
    );
    let hostile = a2.replace("P1", "P1\\u0000<script>");
    assert_eq!(with("application/json", &k2, hostile.as_bytes()), 400);
    let long_key = "k".repeat(600);
    assert_eq!(with("application/json", &long_key, a2.as_bytes()), 400);
    let no_key = format!(
        "POST /submit HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}",
        a2.len()
    );
    assert_eq!(exchange(addr, &no_key, a2.as_bytes()).status, 400);
    // A body cut short: the connection ends before Content-Length bytes came.
    let mut cut = TcpStream::connect(addr).unwrap();
    cut.write_all(format!("POST /submit HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nIdempotency-Key: {k2}\r\nContent-Length: {}\r\n\r\n", a2.len()).as_bytes()).unwrap();
    cut.write_all(&a2.as_bytes()[..20]).unwrap();
    cut.shutdown(std::net::Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    let _ = cut.read_to_end(&mut rest);
    assert!(rest.is_empty() || parse_reply(&rest).status >= 400);

    // A client that never finishes its headers is cut off, and holds nobody up meanwhile.
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.write_all(b"POST /submit HTTP/1.1\r\nHost: t\r\n")
        .unwrap();
    assert_eq!(exchange(addr, "GET /study.json HTTP/1.1", b"").status, 200);
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = Vec::new();
    let closed = slow.read_to_end(&mut got).is_ok();
    assert!(
        closed,
        "the slow client is disconnected within the header timeout"
    );

    // Paths out of the site, and the export without or with a wrong token.
    for path in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/models/..%2f..%2fsecret.txt",
        "/..%5csecret.txt",
    ] {
        let reply = exchange(addr, &format!("GET {path} HTTP/1.1"), b"");
        assert!(
            !reply.text().contains("SECRET"),
            "{path} reached the file beside the site"
        );
    }
    assert_eq!(
        exchange(addr, "GET /clozelab/export HTTP/1.1", b"").status,
        401
    );
    assert_eq!(
        exchange(
            addr,
            "GET /clozelab/export HTTP/1.1\r\nAuthorization: Bearer nope",
            b""
        )
        .status,
        403
    );
    assert_eq!(
        exchange(addr, "GET /clozelab/export?token=nope HTTP/1.1", b"").status,
        403
    );
    assert_eq!(
        exchange(addr, "DELETE /study.json HTTP/1.1", b"").status,
        405
    );

    assert_eq!(counts(&server.data), before, "nothing refused was stored");
    let refusals = Store::open_existing(&server.data)
        .unwrap()
        .counts()
        .unwrap()
        .refusals;
    assert!(refusals >= 12, "each refusal is logged: {refusals}");
}

#[test]
fn a_locked_or_full_database_answers_503_and_a_resend_then_lands() {
    let dir = scratch("locked");
    let server = serve(&dir, STUDY, |c| c.max_data_bytes = Some(200 << 10));
    let addr = server.running.addr;
    let (k, a) = answer_body("storm-1", "P1", "r1", 0);
    let other = rusqlite::Connection::open(&server.data).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let locked = post(addr, &k, &a);
    assert_eq!(locked.status, 503, "{}", locked.text());
    assert!(locked.header("retry-after").is_some());
    other.execute_batch("COMMIT").unwrap();
    assert_eq!(post(addr, &k, &a).status, 200);

    // Large answers until the size limit: then 503, and every 200 is in the database.
    let mut ok = 1;
    let mut full = None;
    for position in 1..200 {
        let (key, body) = answer_body("storm-1", "P1", "r1", position);
        let body = body.replace(
            "\"response\":\"",
            &format!("\"response\":\"{}", "x".repeat(20_000)),
        );
        let reply = post(addr, &key, &body);
        match reply.status {
            200 => ok += 1,
            503 => {
                full = Some(reply.text());
                break;
            }
            other => panic!("{other}: {}", reply.text()),
        }
    }
    let full = full.expect("the size limit is reached");
    assert!(full.contains("full"), "{full}");
    assert_eq!(counts(&server.data).1, ok);
}

#[test]
fn the_site_is_served_with_the_packages_headers_ranges_and_compression() {
    let dir = scratch("site");
    let server = serve(&dir, STUDY, |_| {});
    let addr = server.running.addr;
    let page = exchange(addr, "GET / HTTP/1.1", b"");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-security-policy"),
        Some("default-src 'self'")
    );
    assert_eq!(
        page.header("cross-origin-opener-policy"),
        Some("same-origin")
    );
    assert_eq!(
        page.header("cross-origin-embedder-policy"),
        Some("require-corp")
    );
    assert_eq!(page.header("cache-control"), Some("no-cache"));
    let route = exchange(addr, "GET /play/storm HTTP/1.1", b"");
    assert_eq!(
        (route.status, route.body.clone()),
        (200, page.body.clone()),
        "a route gets the page"
    );
    assert_eq!(exchange(addr, "GET /missing.js HTTP/1.1", b"").status, 404);
    let script = exchange(
        addr,
        "GET /app-0123456789abcdef.js HTTP/1.1\r\nAccept-Encoding: gzip",
        b"",
    );
    assert_eq!(
        script.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(script.header("content-encoding"), Some("gzip"));
    assert!(
        script.body.len() < 4000,
        "compressed: {} bytes",
        script.body.len()
    );
    let model: Vec<u8> = std::fs::read(dir.join("site/models/m/model.safetensors")).unwrap();
    let part = exchange(
        addr,
        "GET /models/m/model.safetensors HTTP/1.1\r\nRange: bytes=1000-1999\r\nAccept-Encoding: gzip",
        b"",
    );
    assert_eq!(part.status, 206);
    assert_eq!(
        part.header("content-encoding"),
        None,
        "a range is sent as it is"
    );
    assert_eq!(part.body, &model[1000..2000]);
    let config = exchange(addr, "HEAD /study.json HTTP/1.1", b"");
    assert_eq!(config.header("content-type"), Some("application/json"));
    let wasm = exchange(addr, "HEAD /worker_bg.wasm HTTP/1.1", b"");
    assert_eq!(wasm.header("content-type"), Some("application/wasm"));
    assert_eq!(
        wasm.header("cache-control"),
        Some("no-cache"),
        "no hash in its name"
    );
}

#[test]
fn answers_from_the_studys_own_origin_alone_pass_cors() {
    let dir = scratch("cors");
    let study = STUDY.replace("\"/submit\"", "\"https://lab.example.org/submit\"");
    let server = serve(&dir, &study, |c| {
        c.study_origin = Some("https://study.example.org".into())
    });
    let addr = server.running.addr;
    let preflight = |origin: &str| {
        exchange(
            addr,
            &format!(
                "OPTIONS /submit HTTP/1.1\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type, idempotency-key"
            ),
            b"",
        )
    };
    let ours = preflight("https://study.example.org");
    assert_eq!(
        ours.header("access-control-allow-origin"),
        Some("https://study.example.org")
    );
    assert!(
        ours.header("access-control-allow-headers")
            .unwrap_or_default()
            .contains("idempotency-key")
    );
    assert_eq!(
        preflight("https://evil.example").header("access-control-allow-origin"),
        None
    );
    let (k, a) = answer_body("storm-1", "P1", "r1", 0);
    assert_eq!(
        post(addr, &k, &a).status,
        200,
        "the submit path is the URL's path"
    );
}

#[test]
fn https_with_the_given_certificate() {
    let dir = scratch("tls");
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl makes the test's certificate");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let server = serve(&dir, STUDY, |c| c.tls = Some((cert.clone(), key.clone())));
    assert_eq!(server.running.scheme, "https");
    let url = format!(
        "https://127.0.0.1:{}/study.json",
        server.running.addr.port()
    );
    let fetched = std::process::Command::new("curl")
        .args(["-sS", "--cacert"])
        .arg(&cert)
        .arg(&url)
        .output()
        .expect("curl fetches over TLS");
    assert!(
        fetched.status.success(),
        "{}",
        String::from_utf8_lossy(&fetched.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&fetched.stdout), STUDY);
    let bad = TcpStream::connect(server.running.addr).and_then(|mut s| {
        s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")?;
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        Ok(buf)
    });
    assert!(
        !String::from_utf8_lossy(&bad.unwrap()).contains("study_id"),
        "no plain HTTP on the TLS port"
    );
}

#[test]
fn a_database_of_another_study_or_a_folder_that_is_no_package_is_refused_saying_why() {
    let dir = scratch("other");
    drop(serve(&dir, STUDY, |_| {}));
    let other = STUDY.replace("storm-1", "storm-2");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let refusal = |site: PathBuf| {
        let refused = runtime.block_on(start(&config_for(&dir, site), String::new, [0; 24]));
        refused.err().expect("refused").to_string()
    };
    let another = refusal(site(&dir, &other));
    assert!(another.contains("\"storm-1\""), "{another}");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let refused = refusal(empty);
    assert!(
        refused.contains("not a clozelab Website package"),
        "{refused}"
    );
}
