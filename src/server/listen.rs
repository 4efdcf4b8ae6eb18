//! Starting `clozelab serve`: the site opened, the database opened (its export token made the
//! first time), and the connections accepted over hyper, in TLS (rustls) when given a
//! certificate. A client that sends its headers too slowly is cut off, so that slow clients
//! cannot hold connections open for ever.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderValue;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::http::{App, EXPORT_PATH, router};
use super::site::{SiteError, open_site};
use super::store::{Store, StoreError};
use super::writer::Writer;

/// How long a client may take to send a request's headers, or a TLS handshake, by default.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Site(#[from] SiteError),
    #[error("{path}: {source}")]
    Store { path: PathBuf, source: StoreError },
    #[error("cannot listen on {addr}: {message}")]
    Listen { addr: SocketAddr, message: String },
    #[error("TLS: {0}")]
    Tls(String),
    #[error("--study-origin {0:?} is not an origin such as https://study.example.org")]
    Origin(String),
}

/// What `clozelab serve` is given.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// A Website package: its folder or its ZIP.
    pub site: PathBuf,
    /// The SQLite file the answers go into (made when missing).
    pub data: PathBuf,
    pub addr: SocketAddr,
    /// A certificate chain and its private key, both PEM.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The origin the study's pages are served from when it is not this server.
    pub study_origin: Option<String>,
    /// Replace the export token (the old one stops working).
    pub new_export_token: bool,
    /// Refuse answers (503) once the database holds this many bytes.
    pub max_data_bytes: Option<u64>,
    /// How long a client may take to send a request's headers (or a TLS handshake).
    pub header_timeout: Duration,
}

/// A server that is running.
pub struct Running {
    pub addr: SocketAddr,
    pub scheme: &'static str,
    pub title: String,
    /// The export token, when it was made now (it is shown once; the database keeps its hash).
    pub new_export_token: Option<String>,
    pub submit_path: Option<String>,
    pub task: tokio::task::JoinHandle<()>,
}

impl Running {
    /// The participants' link (Prolific's placeholders for the ids).
    pub fn participants_link(&self, host: &str) -> String {
        format!(
            "{}://{host}/?study=study.json&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}",
            self.scheme
        )
    }

    pub fn export_path(&self) -> &'static str {
        EXPORT_PATH
    }
}

/// Where a ZIP package is unpacked: beside the database, named after it.
pub fn unpack_folder(data: &Path) -> PathBuf {
    let mut name = data.file_name().unwrap_or_default().to_os_string();
    name.push(".site");
    data.with_file_name(name)
}

/// Opens everything and starts accepting on the current tokio runtime; `clock` stamps each
/// stored batch, `random` seeds a new export token.
pub async fn start(
    config: &ServeConfig,
    clock: fn() -> String,
    random: [u8; 24],
) -> Result<Running, ServeError> {
    let site = open_site(&config.site, &unpack_folder(&config.data))?;
    let store_error = |source| ServeError::Store {
        path: config.data.clone(),
        source,
    };
    let store = Store::open(&config.data, &site.study.study_id()).map_err(store_error)?;
    let new_export_token =
        if config.new_export_token || !store.has_export_token().map_err(store_error)? {
            Some(store.new_export_token(random).map_err(store_error)?)
        } else {
            None
        };
    let study_origin = match &config.study_origin {
        Some(origin) => Some(check_origin(origin)?),
        None => None,
    };
    let tls = match &config.tls {
        Some((cert, key)) => Some(acceptor(cert, key)?),
        None => None,
    };
    if let Some(max) = config.max_data_bytes {
        store.limit_size(max).map_err(store_error)?;
    }
    let writer = Writer::start(store, clock).map_err(store_error)?;
    let title = site.study.title.clone();
    let submit_path = site.submit_path();
    let app = Arc::new(App {
        site,
        writer,
        study_origin,
    });
    let listener = TcpListener::bind(config.addr)
        .await
        .map_err(|e| ServeError::Listen {
            addr: config.addr,
            message: e.to_string(),
        })?;
    let addr = listener.local_addr().map_err(|e| ServeError::Listen {
        addr: config.addr,
        message: e.to_string(),
    })?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let task = tokio::spawn(accept(listener, router(app), tls, config.header_timeout));
    Ok(Running {
        addr,
        scheme,
        title,
        new_export_token,
        submit_path,
        task,
    })
}

fn check_origin(origin: &str) -> Result<HeaderValue, ServeError> {
    let fine = (origin.starts_with("https://") || origin.starts_with("http://"))
        && !origin
            .trim_end_matches('/')
            .split("://")
            .nth(1)
            .unwrap_or("/")
            .contains('/');
    match HeaderValue::from_str(origin.trim_end_matches('/')) {
        Ok(value) if fine => Ok(value),
        _ => Err(ServeError::Origin(origin.to_string())),
    }
}

fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, ServeError> {
    let tls = |what: &Path, e: &dyn std::fmt::Display| {
        ServeError::Tls(format!("{}: {e}", what.display()))
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| tls(cert, &e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls(cert, &e))?;
    if chain.is_empty() {
        return Err(tls(cert, &"no certificate in the file"));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| tls(key, &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ServeError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| ServeError::Tls(e.to_string()))?;
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(server)))
}

async fn accept(
    listener: TcpListener,
    router: axum::Router,
    tls: Option<TlsAcceptor>,
    header_timeout: Duration,
) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors, or a connection reset before it was accepted: go on.
            Err(e) => {
                eprintln!("accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let tls = tls.clone();
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            match tls {
                Some(acceptor) => {
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(header_timeout, acceptor.accept(stream)).await
                    {
                        let _ = http.serve_connection(TokioIo::new(stream), service).await;
                    }
                }
                None => {
                    let _ = http.serve_connection(TokioIo::new(stream), service).await;
                }
            }
        });
    }
}
