//! The end of a session: its export manifest, downloads, and sending the responses before the
//! redirect (only once every response is confirmed in storage).

use leptos::prelude::*;

use super::{AnyStore, GameController, timestamp};
use crate::app::components::completion::{capitalised, leave_study};
use crate::app::web::WebError;
use crate::app::web::files::download_text;
use crate::game::export::{ExportError, ExportKind, Manifest};
use crate::game::session::confirm_saved;
use crate::game::store::ResponseStore;

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
        Some(Manifest::new(
            &info,
            &self.study.get_value(),
            &plan,
            0,
            &timestamp(),
        ))
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

    /// With `send_each_response`, POSTs a just-saved answer (a bundle of one, under the
    /// response's own idempotency key) in the background; what does not get through stays in
    /// the outbox for the next visit, and the final bundle holds it anyway.
    pub(super) fn send_response(self, record: &crate::data::ResponseRecord) {
        let Some(url) = self
            .study
            .with_value(|s| s.submit_url.clone().filter(|_| s.send_each_response))
        else {
            return;
        };
        let Ok(body) =
            ExportKind::Bundle.render(std::slice::from_ref(record), &[], self.manifest().as_ref())
        else {
            return;
        };
        let pending = crate::game::outbox::Pending {
            key: crate::game::outbox::response_key(
                &record.participant,
                &record.passage,
                record.position,
            ),
            body: crate::game::outbox::with_response_keys(&body).unwrap_or(body),
            url,
            attempts: 0,
        };
        leptos::task::spawn_local(async move {
            let _ = crate::app::web::outbox::deliver(pending, 5_000.0, |_| {}).await;
        });
    }

    /// Completion: responses are sent (when the study names a submit path) and the participant
    /// redirected only once every response is confirmed in storage (and accepted by the server).
    pub(super) fn finish(self) {
        let (submit_path, redirect) = self
            .study
            .with_value(|s| (s.submit_url.clone(), s.redirect_url.clone()));
        if submit_path.is_none() && redirect.is_none() {
            return;
        }
        let (Some(game), Some(target)) = (self.session.get_value(), self.store.get_value()) else {
            return;
        };
        let status = self.redirect_status;
        leptos::task::spawn_local(async move {
            let total = game.progress().1;
            let saved = target.load(&game.plan().participant).await;
            let confirmed = match &saved {
                Ok(saved) => {
                    confirm_saved(saved.len(), total, !matches!(target, AnyStore::Memory(_)))
                        .map_err(|e| capitalised(&e.to_string()))
                }
                Err(e) => Err(format!(
                    "Cannot confirm your responses were saved ({e}): download them below."
                )),
            };
            let saved = saved.unwrap_or_default();
            let body = || {
                ExportKind::Bundle
                    .render(&saved, &[], self.manifest().as_ref())
                    .map_err(|e| e.to_string())
            };
            let key = crate::game::outbox::submission_key(
                &game.plan().participant,
                &self.study.with_value(|s| s.title.clone()),
            );
            leave_study(status, confirmed, body, submit_path, redirect, key).await;
        });
    }
}
