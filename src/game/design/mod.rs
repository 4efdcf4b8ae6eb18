//! The study and its design: passages ([`passages`]), study configs ([`study`]; what their links
//! say: [`study_link`]; their addresses: [`study_urls`]) and the plans they make ([`plan`]), counterbalanced lists ([`lists`],
//! rotated from an item set by [`latin_square`]; a precision target that picks among them,
//! [`adaptive_norming`]), the questions asked around the passages
//! ([`questions`]), attention checks ([`attention`]), the texts participants read in the study's
//! language ([`participant_texts`]) and the Study page's editing of it all ([`study_draft`]).

pub mod adaptive_norming;
pub mod attention;
pub mod jatos_run;
pub mod latin_square;
pub mod lists;
pub mod participant_texts;
pub mod passages;
pub mod plan;
pub mod questions;
pub mod run_scope;
pub mod study;
pub mod study_draft;
pub mod study_link;
pub mod study_urls;
