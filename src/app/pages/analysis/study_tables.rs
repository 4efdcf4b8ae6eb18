//! The study's tables for R or Python: the trial table (and the token games'), its codebook
//! and the exclusions, each a download.

use leptos::prelude::*;

use crate::app::web::files::download_text;

#[component]
pub(super) fn StudyTables(files: Vec<(String, String)>) -> impl IntoView {
    if files.is_empty() {
        return ().into_any();
    }
    let buttons = files
        .into_iter()
        .map(|(name, csv)| {
            let rows = csv.lines().count().saturating_sub(1);
            let testid = format!(
                "download-{}",
                name.trim_end_matches(".csv").replace('_', "-")
            );
            let label = format!("{name} ({rows} rows)");
            view! {
                <button
                    data-testid=testid
                    on:click=move |_| {
                        let _ = download_text(&name, "text/csv", &csv);
                    }
                >
                    {label}
                </button>
            }
        })
        .collect_view();
    view! {
        <section class="study-tables" data-testid="study-tables">
            <h3>"The study's data for R or Python"</h3>
            <p>
                "One row per answer of every run, excluded runs included (their "
                <code>"exclusion_reason"</code> " says why); " <code>"codebook.csv"</code>
                " says what each column holds, " <code>"exclusions.csv"</code>
                " who was left out and why. The researchers' guide shows R and Python reading them."
            </p>
            <div class="downloads">{buttons}</div>
        </section>
    }
    .into_any()
}
