//! Every next-word answer kept in this browser, of every participant and run, as one long CSV:
//! what a researcher collects from a lab computer where participants took turns (each had a
//! run of their own; the `participant` and `run` columns tell them apart). On the researcher's
//! page only: participants' "Your data" shows their own run.

use leptos::prelude::*;

use crate::app::web::files::download_text;
use crate::app::web::idb::IdbStore;
use crate::data::{Delimiter, export_long_csv};

/// Reads every stored answer and offers it as `answers-in-this-browser.csv`; what it did, said.
async fn download_all() -> String {
    let records = match IdbStore::open().await {
        Ok(store) => match store.all().await {
            Ok(records) => records,
            Err(e) => return format!("The answers could not be read: {e}"),
        },
        Err(e) => return format!("This browser's storage could not be opened: {e}"),
    };
    if records.is_empty() {
        return "No answers are kept in this browser.".into();
    }
    let runs: std::collections::BTreeSet<(&str, &str)> = records
        .iter()
        .map(|r| (r.participant.as_str(), r.run.as_str()))
        .collect();
    let csv = export_long_csv(&records, Delimiter::Comma);
    match download_text("answers-in-this-browser.csv", "text/csv", &csv) {
        Ok(()) => format!(
            "{} answers of {} runs downloaded (columns participant and run tell them apart).",
            records.len(),
            runs.len()
        ),
        Err(e) => format!("The download failed: {e}"),
    }
}

#[component]
pub(super) fn BrowserAnswers() -> impl IntoView {
    let download = Action::new_local(|_: &()| download_all());
    view! {
        <p class="browser-answers">
            <button
                data-testid="download-browser-answers"
                disabled=move || download.pending().get()
                on:click=move |_| {
                    download.dispatch(());
                }
            >
                "Download every answer kept in this browser"
            </button>
            " (a lab computer's participants, each run apart) "
            <span data-testid="browser-answers-status" aria-live="polite">
                {move || download.value().get().unwrap_or_default()}
            </span>
        </p>
    }
}
