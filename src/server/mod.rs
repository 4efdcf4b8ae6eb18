//! `clozelab serve` (native only): a study's own server. It hosts a Website package with the
//! headers the package asks for, keeps every answer sent to the study's `submit_url` in SQLite
//! (durable before it is acknowledged, each idempotency key once), honours withdrawals, and
//! gives the results back as a ZIP the Analysis page reads.
//!
//! - [`intake`]: what a POST must be to be stored, and each refusal's status;
//! - [`store`]: the SQLite schema and its writes; [`writer`]: the one thread that writes
//!   (group commit); [`export`]: the results ZIP;
//! - [`site`]: the package opened (a folder or its ZIP); [`http`]: the routes and headers;
//!   [`listen`]: start-up, connections and TLS;
//! - [`load`]: simulated participants, for the benchmark and the fault tests.

pub mod export;
pub mod http;
pub mod intake;
pub mod listen;
pub mod load;
pub mod site;
pub mod store;
pub mod writer;
