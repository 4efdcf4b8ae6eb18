//! The end of a session: its export manifest, downloads, and sending the responses before the
//! redirect (only once every response is confirmed in storage).

use leptos::prelude::*;

use super::{AnyStore, GameController};
use crate::app::components::completion::leave_study;
use crate::app::web::WebError;
use crate::app::web::clock::timestamp;
use crate::app::web::files::download_text;
use crate::game::design::participant_texts::Say;
use crate::game::run::export::{ExportError, ExportKind, Manifest};
use crate::game::run::session::{Keepers, confirm_saved};
use crate::game::run::store::ResponseStore;

/// Why an export could not be offered (shown; never an empty file).
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    Browser(#[from] WebError),
    #[error(transparent)]
    Data(#[from] crate::data::DataError),
}

impl GameController {
    /// The export manifest of this session (`None` before it starts).
    pub fn manifest(self) -> Option<Manifest> {
        let ctx = self.runtime;
        let plan = self
            .session
            .with_value(|s| s.as_ref().map(|g| g.plan().clone()))?;
        let info = ctx.model_info();
        Some(
            Manifest::new(&info, &self.study.get_value(), &plan, 0, &timestamp()).with_details(
                self.questionnaire
                    .details(self.attention.results.get_untracked()),
            ),
        )
    }

    /// Offers one export as a download; problems are shown, never an empty file.
    /// Downloads an export; `spreadsheet_safe` turns a CSV into its variant for spreadsheets
    /// (formula-like cells made inert, see [`crate::data::spreadsheet_safe_csv`]).
    pub fn download(self, kind: ExportKind, spreadsheet_safe: bool) -> Result<(), DownloadError> {
        let mut text = self
            .records
            .with_untracked(|all| kind.render(all, &self.passages(), self.manifest().as_ref()))?;
        let mut name = kind.file_name(&self.participant());
        if spreadsheet_safe && kind != ExportKind::Bundle {
            text = crate::data::spreadsheet_safe_csv(&name, &text)?;
            name = name.replace(".csv", "-spreadsheet.csv");
        }
        Ok(download_text(&name, kind.mime(), &text)?)
    }

    /// With `send_each_response`, sends a just-saved answer: a bundle of one under the
    /// response's own idempotency key (in JATOS appended to the run's result data), kept in
    /// the outbox before this returns and sent in the background (see
    /// [`keep_then_send_in_background`](crate::app::web::outbox::keep_then_send_in_background));
    /// the final bundle holds it anyway. A refusal for good stops the game, saying so.
    pub(super) async fn send_response(self, record: &crate::data::ResponseRecord) {
        let study = self.study.get_value();
        if !study.send_each_response {
            return;
        }
        let rendered =
            ExportKind::Bundle.render(std::slice::from_ref(record), &[], self.manifest().as_ref());
        let key = self
            .session
            .with_value(|s| s.as_ref().map(|g| g.plan().scope()))
            .unwrap_or_default()
            .response_key(&record.passage, record.position);
        let Some(pending) = rendered
            .ok()
            .and_then(|body| crate::game::run::outbox::submission(&study, key, body))
        else {
            return;
        };
        let on_refused = move |reason: String| {
            self.phase.set(super::Phase::Failed(
                self.say.fill(Say::RefusedMidStudy, &[("error", &reason)]),
            ));
        };
        crate::app::web::outbox::keep_then_send_in_background(pending, 5_000.0, on_refused).await;
    }

    /// Records in JATOS's batch session how this run of its list ended (nothing outside JATOS,
    /// or without lists), with a completed run's `answers` for adaptive norming.
    pub(super) async fn mark_list(
        self,
        state: crate::game::run::jatos_batch::LedgerState,
        answers: Vec<(String, String)>,
    ) {
        let plan = self
            .session
            .with_value(|s| s.as_ref().map(|g| g.plan().clone()));
        let Some(plan) = plan else { return };
        if let Some(list) = &plan.list {
            let study = self.study.get_value();
            crate::app::web::jatos_batch::mark_list(
                &study,
                &plan.participant,
                &list.name,
                state,
                answers,
            )
            .await;
        }
    }

    /// Completion: responses are sent (when the study names a submit path) and the participant
    /// redirected only once every response is confirmed in storage (and accepted by the server).
    pub(super) fn finish(self) {
        let study = self.study.get_value();
        if study.submit_url.is_none() && study.redirect_url.is_none() {
            return;
        }
        let (Some(game), Some(target)) = (self.session.get_value(), self.store.get_value()) else {
            return;
        };
        let status = self.redirect_status;
        leptos::task::spawn_local(async move {
            let total = game.progress().1;
            let saved = target.load(&game.plan().scope()).await;
            // The answers as kept (what the exports will hold) join adaptive norming's counts;
            // where storage cannot be read back, the answers this page saw given.
            let records = match &saved {
                Ok(records) => records.clone(),
                Err(_) => self.records.get_untracked(),
            };
            let answers = records
                .iter()
                .filter(|r| !r.practice)
                .map(|r| {
                    let key = crate::game::design::adaptive_norming::context_key(
                        &r.passage,
                        r.position as usize,
                    );
                    (key, r.response.clone())
                })
                .collect();
            self.mark_list(
                crate::game::run::jatos_batch::LedgerState::Complete,
                answers,
            )
            .await;
            let confirmed = match &saved {
                Ok(saved) => {
                    let keepers = Keepers {
                        browser: !matches!(target, AnyStore::Memory(_)),
                        server: study.submit_url.is_some(),
                    };
                    confirm_saved(saved.len(), total, keepers)
                        .map_err(|e| self.say.with(|t| e.in_texts(t)))
                }
                Err(e) => Err(self
                    .say
                    .fill(Say::CannotConfirm, &[("error", &e.to_string())])),
            };
            let saved = saved.unwrap_or_default();
            let body = || {
                ExportKind::Bundle
                    .render(&saved, &[], self.manifest().as_ref())
                    .map_err(|e| e.to_string())
            };
            let key = game.plan().scope().submission_key();
            leave_study(status, confirmed, body, &study, key).await;
        });
    }
}
