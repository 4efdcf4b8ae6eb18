//! Comparing people with models. The metrics ([`metrics`]: TVD, ECE, W1, bootstrap, densities)
//! over a dataset of norms and systems' samples ([`dataset`], answers placed on the text their study gave: [`passage_texts`]); Table 1 of Ilia & Aziz (2024)
//! ([`table1`]), its syntactic and semantic rows ([`classes`], with the meaning clusters of
//! [`clusters`]) and its token-level companion ([`token_level`], Appendix D); one participant
//! beside the models ([`participant`]); a model's surprisal of each target word
//! ([`predictors`]); how precise norms are and what adaptive norming saves ([`norming`]);
//! human perplexity from the two-token game
//! ([`perplexity`]); the production probes of Giulianelli et al. 2023 ([`variability`]); the
//! papers' figures ([`figures`]); and everything the Analysis page shows, in one payload
//! ([`report`]).

pub mod classes;
pub mod clusters;
pub mod dataset;
pub mod figures;
pub mod metrics;
pub mod norming;
pub mod participant;
pub mod passage_texts;
pub mod perplexity;
pub mod predictors;
pub mod report;
pub mod table1;
pub mod token_level;
pub mod variability;
