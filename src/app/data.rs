//! What the user brought in ("Your data"): human counts from norms and exports, their own
//! passages, a study config from a file. Shared by every page through context.

use leptos::prelude::*;

use crate::app::web::files::read_file_list;
use crate::data::ResponseRecord;
use crate::data::participant_run::ParticipantRun;
use crate::game::design::passages::{Passage, built_in_passages, from_norms};
use crate::game::design::study::StudyConfig;
use crate::game::readback::imports::{Imported, import_file};
use crate::game::run::humans::HumanCounts;
use crate::game::tokens::records::TokenRecords;

#[derive(Clone, Copy)]
pub struct LabData {
    pub humans: RwSignal<HumanCounts>,
    /// Responses from imported exports (shown in a table).
    pub imported: RwSignal<Vec<ResponseRecord>>,
    /// Passages to play: the built-in ones, then imported ones.
    pub passages: RwSignal<Vec<Passage>>,
    /// A study config picked as a file (runs like `?study=URL`).
    pub study: RwSignal<Option<StudyConfig>>,
    pub import_status: RwSignal<String>,
    /// Next-token game answers from imported exports.
    pub top1: RwSignal<Vec<crate::game::tokens::top1::Top1Record>>,
    pub two_token: RwSignal<Vec<crate::game::tokens::two_token::TwoTokenRecord>>,
    /// Participants of imported study results (JATOS's export, a study server's bundles).
    pub participant_runs: RwSignal<Vec<ParticipantRun>>,
}

pub fn provide_lab_data() {
    provide_context(LabData {
        humans: RwSignal::new(HumanCounts::default()),
        imported: RwSignal::new(Vec::new()),
        passages: RwSignal::new(built_in_passages()),
        study: RwSignal::new(None),
        import_status: RwSignal::new(String::new()),
        top1: RwSignal::new(Vec::new()),
        two_token: RwSignal::new(Vec::new()),
        participant_runs: RwSignal::new(Vec::new()),
    });
}

pub fn use_lab_data() -> LabData {
    expect_context::<LabData>()
}

impl LabData {
    /// Reads the picked files and merges what they hold; says what was read, file by file.
    pub async fn import(self, files: web_sys::FileList) {
        let files = match read_file_list(&files).await {
            Ok(f) => f,
            Err(e) => return self.import_status.set(e.to_string()),
        };
        let mut messages = Vec::new();
        for (name, bytes) in files {
            let imported = match import_file(&name, &bytes) {
                Ok(i) => i,
                Err(e) => {
                    messages.push(e.to_string());
                    continue;
                }
            };
            messages.push(format!("{name}: {}", imported.summary()));
            match imported {
                Imported::Passages(new) => self.add_passages(new),
                Imported::Study(config) => self.study.set(Some(*config)),
                Imported::Responses(records) => {
                    self.humans.update(|h| h.add_responses(&records));
                    self.imported.update(|all| all.extend(records));
                }
                Imported::Norms { norms, .. } => {
                    self.humans.update(|h| h.add_norms(&norms));
                    self.add_passages(from_norms(&norms));
                }
                Imported::TokenRecords(TokenRecords::Top1(r)) => self.top1.update(|a| a.extend(r)),
                Imported::TokenRecords(TokenRecords::TwoToken(r)) => {
                    self.two_token.update(|a| a.extend(r))
                }
                Imported::Results(results) => self.add_results(*results),
            }
        }
        self.import_status.set(messages.join("; "));
    }

    /// Adds study results: their answers to the counts and tables, their participants to the
    /// list (a participant imported again is replaced: the newer file holds more).
    fn add_results(self, results: crate::game::readback::results::StudyResults) {
        self.humans.update(|h| h.add_responses(&results.responses));
        self.top1.update(|a| a.extend(results.top1));
        self.two_token.update(|a| a.extend(results.two_token));
        self.imported.update(|all| all.extend(results.responses));
        self.participant_runs.update(|all| {
            all.retain(|p| {
                !results
                    .participants
                    .iter()
                    .any(|n| n.participant == p.participant)
            });
            all.extend(results.participants);
        });
    }

    /// Adds passages (a passage with the id of one already there replaces it).
    fn add_passages(self, new: Vec<Passage>) {
        self.passages.update(|all| {
            all.retain(|p| !new.iter().any(|n| n.id == p.id));
            all.extend(new);
        });
    }
}
