//! The study's tables for R or Python: the trial table (and the token games'), the runs, the
//! study's own norms, the participant flow (with its figure), the codebook and the exclusions,
//! each a download, and each also as a spreadsheet-safe variant.

use leptos::prelude::*;

use super::figure_card::FigureCard;
use crate::analysis::figures::Figure;
use crate::app::web::files::download_text;
use crate::game::readback::results_merge::counted;
use crate::game::readback::trial_table::{spreadsheet_file_name, spreadsheet_variant};

/// A download button per table: `spreadsheet` ones make the table's spreadsheet-safe variant
/// when clicked.
fn buttons(files: Vec<(String, String)>, spreadsheet: bool) -> impl IntoView {
    files
        .into_iter()
        .map(|(name, csv)| {
            let rows = csv.lines().count().saturating_sub(1);
            let shown = if spreadsheet {
                spreadsheet_file_name(&name)
            } else {
                name.clone()
            };
            let testid = format!(
                "download-{}",
                shown.trim_end_matches(".csv").replace('_', "-")
            );
            let label = format!("{shown} ({})", counted(rows, "row"));
            view! {
                <button
                    data-testid=testid
                    on:click=move |_| {
                        let (name, text) = if spreadsheet {
                            spreadsheet_variant(&name, &csv)
                        } else {
                            (name.clone(), csv.clone())
                        };
                        let _ = download_text(&name, "text/csv", &text);
                    }
                >
                    {label}
                </button>
            }
        })
        .collect_view()
}

#[component]
pub(super) fn StudyTables(files: Vec<(String, String)>, flow: Option<Figure>) -> impl IntoView {
    if files.is_empty() {
        return ().into_any();
    }
    view! {
        <section class="study-tables" data-testid="study-tables">
            <h3>"The study's data for R or Python"</h3>
            <p>
                "One row per answer of every run, excluded runs included (their "
                <code>"exclusion_reason"</code> " says why); " <code>"runs.csv"</code>
                " has every run whatever its state, " <code>"norms.csv"</code>
                " the study's own norms in Provo's columns, " <code>"codebook.csv"</code>
                " what each column holds, " <code>"exclusions.csv"</code>
                " who was left out and why. The researchers' guide shows R and Python reading them."
            </p>
            <div class="downloads">{buttons(files.clone(), false)}</div>
            <p>
                "For a spreadsheet (Excel, LibreOffice, Google Sheets): the same tables with cells that would run as formulas made text, and a byte-order mark."
            </p>
            <div class="downloads spreadsheet">{buttons(files, true)}</div>
            {flow
                .map(|figure| {
                    view! {
                        <div data-testid="participant-flow">
                            <FigureCard figure />
                        </div>
                    }
                })}
        </section>
    }
    .into_any()
}
