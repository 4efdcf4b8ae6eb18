//! Comparing distributions: the metrics ([`metrics`]: TVD, entropy, ECE, W1, bootstrap),
//! Table 1 of Ilia & Aziz (2024) ([`table1`]), and human perplexity from the two-token game
//! ([`perplexity`]).

pub mod classes;
pub mod clusters;
pub mod dataset;
pub mod figures;
pub mod metrics;
pub mod participant;
pub mod perplexity;
pub mod report;
pub mod table1;
pub mod token_level;
pub mod variability;
