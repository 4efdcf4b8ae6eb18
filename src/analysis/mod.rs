//! Comparing distributions: the metrics ([`metrics`]: TVD, entropy, ECE, W1, bootstrap) and
//! Table 1 of Ilia & Aziz (2024) ([`table1`]).

pub mod metrics;
pub mod table1;
