//! The games and the studies around them: passages ([`passages`]), study configs ([`study`]; what their links say: [`study_link`])
//! and the plans they make ([`plan`]) with their counterbalanced lists ([`lists`], rotated from an item set by [`latin_square`]), the questions asked around the passages ([`questions`]), attention checks ([`attention`]),
//! the texts participants read in the study's language ([`participant_texts`]) and the Study
//! page's editing of it all ([`study_draft`]); the next-word game's per-participant state
//! machine ([`session`]) with its running score ([`score`]); which run an answer belongs to
//! ([`run_scope`]); where responses are stored ([`store`]) and sent ([`outbox`]); people's
//! answers per context ([`humans`]); what a dropped file is ([`imports`]); exports
//! ([`export`]) and the results they come back as ([`results`]; merged into runs by
//! [`results_merge`], with what JATOS's export says of its runs from [`jatos_export`]), made
//! the Analysis page's dataset ([`results_dataset`]) after the researcher's exclusions
//! ([`exclusions`]), and the study's tidy trial table ([`trial_table`]) with its codebook ([`codebook`]), its runs' flow ([`participant_flow`]) and its own cloze norms ([`study_norms`]); the next-token games ([`tokens`]); a participant declining
//! or withdrawing ([`withdrawal`]); a study on JATOS ([`jatos_run`]: the run inside JATOS;
//! [`jatos_batch`]: its batch session as the lists' ledger; [`jatos_archive`]: the study
//! archive JATOS imports); and the packages a study goes out in ([`package`]: the JATOS
//! archive and a static site, from the built app's files). Pure Rust; the Leptos pages only
//! wire it to the DOM.

pub mod attention;
pub mod codebook;
pub mod exclusions;
pub mod export;
pub mod humans;
pub mod imports;
pub mod jatos_archive;
pub mod jatos_batch;
pub mod jatos_export;
pub mod jatos_run;
pub mod latin_square;
pub mod lists;
pub mod outbox;
pub mod package;
pub mod participant_flow;
pub mod participant_texts;
pub mod passages;
pub mod plan;
pub mod questions;
pub mod results;
pub mod results_dataset;
pub mod results_merge;
pub mod run_scope;
pub mod score;
pub mod session;
pub mod store;
pub mod study;
pub mod study_draft;
pub mod study_link;
pub mod study_norms;
pub mod tokens;
pub mod trial_table;
pub mod withdrawal;
