//! `clozelab serve` (a study's own server, [`crate::server`]) and `clozelab export` (what it
//! kept, as the results ZIP).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use super::error::CliError;
use crate::server::export::results_zip;
use crate::server::listen::{HEADER_TIMEOUT, ServeConfig, start};
use crate::server::store::Store;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The study's Website package (from the Study page or `clozelab site-package`): its ZIP,
    /// or the folder it was unpacked into.
    #[arg(long, value_name = "DIR|ZIP")]
    pub site: PathBuf,
    /// The SQLite database the answers go into (made when missing; one per study).
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// Where to listen (0.0.0.0:8080 to be reached from other machines).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// HTTPS: the certificate chain (PEM), with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// HTTPS: the certificate's private key (PEM), with --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The origin the study's pages are served from, when another host serves them and this
    /// server only collects the answers (the study's submit_url is then a full https:// URL):
    /// CORS is answered for that origin alone.
    #[arg(long, value_name = "ORIGIN")]
    pub study_origin: Option<String>,
    /// Replace the export token (printed once; the old one stops working).
    #[arg(long)]
    pub new_export_token: bool,
    /// Refuse answers (with 503, so that pages keep them and send again) once the database
    /// holds this many megabytes, before the disk itself fills.
    #[arg(long, value_name = "MB")]
    pub max_data_mb: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The database `clozelab serve` wrote.
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// The results ZIP to write (for the Analysis page or `clozelab results`).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// The time each stored batch is stamped with.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

pub fn serve(args: &ServeArgs) -> Result<(), CliError> {
    let config = ServeConfig {
        site: args.site.clone(),
        data: args.data.clone(),
        addr: args.addr,
        tls: args.tls_cert.clone().zip(args.tls_key.clone()),
        study_origin: args.study_origin.clone(),
        new_export_token: args.new_export_token,
        max_data_bytes: args.max_data_mb.map(|mb| mb.saturating_mul(1 << 20)),
        header_timeout: HEADER_TIMEOUT,
    };
    let mut random = [0u8; 24];
    getrandom_03::fill(&mut random)
        .map_err(|e| CliError::usage(format!("no randomness for the export token: {e}")))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::usage(format!("cannot start the server's runtime: {e}")))?;
    runtime.block_on(async {
        let running = start(&config, now, random)
            .await
            .map_err(|e| CliError::usage(e.to_string()))?;
        let host = if running.addr.ip().is_unspecified() {
            format!("your.host:{}", running.addr.port())
        } else {
            running.addr.to_string()
        };
        println!("listening on {}", running.addr);
        println!(
            "serving {:?} at {}://{host}/",
            running.title, running.scheme
        );
        println!("participants' link: {}", running.participants_link(&host));
        match &running.submit_path {
            Some(path) => println!("answers: POST {path}, kept in {}", args.data.display()),
            None => println!(
                "this study has no submit_url: its answers stay in the participants' browsers"
            ),
        }
        if let Some(token) = &running.new_export_token {
            println!(
                "export token (shown this once; the database keeps only its hash): {token}\n  \
                 curl -H 'Authorization: Bearer {token}' -o results.zip {}://{host}{}\n  \
                 or: clozelab export --data {} --out results.zip",
                running.scheme,
                running.export_path(),
                args.data.display()
            );
        }
        println!("Ctrl-C stops the server");
        tokio::signal::ctrl_c()
            .await
            .map_err(|e| CliError::usage(format!("cannot wait for Ctrl-C: {e}")))?;
        println!(
            "stopped; every acknowledged answer is in {}",
            args.data.display()
        );
        Ok(())
    })
}

pub fn export(args: &ExportArgs) -> Result<(), CliError> {
    if !args.data.is_file() {
        return Err(CliError::usage(format!(
            "{}: no such database",
            args.data.display()
        )));
    }
    let store = Store::open_existing(&args.data)
        .map_err(|e| CliError::usage(format!("{}: {e}", args.data.display())))?;
    let zip = results_zip(&store)
        .map_err(|e| CliError::usage(format!("{}: {e}", args.data.display())))?;
    let counts = store
        .counts()
        .map_err(|e| CliError::usage(format!("{}: {e}", args.data.display())))?;
    std::fs::write(&args.out, zip).map_err(CliError::io("write", &args.out))?;
    eprintln!(
        "wrote {}: {} submissions ({} answers, {} withdrawn runs); {} requests were refused",
        args.out.display(),
        counts.submissions,
        counts.answers,
        counts.withdrawn,
        counts.refusals
    );
    Ok(())
}
