//! "Your data": this participant's responses as downloads (in a study's language), and, outside
//! a study, imports (passages, norms, exports, a study config, a study's results with its
//! participants).

use leptos::prelude::*;

use super::controller::GameController;
use crate::app::components::participant_runs::ParticipantRuns;
use crate::app::data::use_lab_data;
use crate::app::texts::use_texts;
use crate::game::design::participant_texts::Say;
use crate::game::run::export::ExportKind;

#[component]
pub fn DataPanel() -> impl IntoView {
    let lab = use_lab_data();
    // Inside a game: its participant's responses can be downloaded.
    let game = use_context::<GameController>();
    let download_status = RwSignal::new(String::new());
    let spreadsheet_safe = RwSignal::new(false);
    let download = move |kind: ExportKind| {
        if let Some(Err(e)) = game.map(|g| g.download(kind, spreadsheet_safe.get_untracked())) {
            download_status.set(format!("Download failed: {e}"));
        }
    };
    let storage_problem = move || game.is_some_and(|g| g.storage_problem.get().is_some());
    // A study's participant has nothing to import.
    let in_study = move || game.is_some_and(|g| g.experiment.get());
    let say = use_texts();
    let on_files = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(files) = input.files() {
            leptos::task::spawn_local(lab.import(files));
        }
    };
    view! {
        <details class="data-panel" open=storage_problem>
            <summary>{say.get(Say::YourData)}</summary>
            {game
                .map(|g| {
                    view! {
                        <p data-testid="record-count">
                            {move || {
                                let count = g.records.get().len().to_string();
                                let kept = if g.memory_only.get() {
                                    Say::KeptCount
                                } else {
                                    Say::StoredCount
                                };
                                say.fill(kept, &[("count", &count)])
                            }}
                        </p>
                        <button
                            data-testid="download-long"
                            on:click=move |_| download(ExportKind::LongCsv)
                        >
                            {say.get(Say::DownloadCsv)}
                        </button>
                        <button
                            data-testid="download-provo"
                            on:click=move |_| download(ExportKind::ProvoCsv)
                        >
                            {say.get(Say::DownloadProvo)}
                        </button>
                        <button
                            data-testid="download-json"
                            on:click=move |_| download(ExportKind::Bundle)
                        >
                            {say.get(Say::DownloadJson)}
                        </button>
                        <label class="inline">
                            <input
                                type="checkbox"
                                data-testid="spreadsheet-safe"
                                on:change=move |ev| spreadsheet_safe.set(event_target_checked(&ev))
                            />
                            {say.get(Say::SpreadsheetSafe)}
                        </label>
                        <p aria-live="polite" data-testid="download-status">
                            {move || download_status.get()}
                        </p>
                    }
                })}
            <Show when=move || !in_study()>
                <label for="import-data">
                    "Import passages (.txt), Provo norms (.csv), exports (.csv/.json), a study config \
                        (.json) or a study's results (JATOS's results archive or text export, or \
                        the bundles your study server saved)"
                </label>
                <input
                    id="import-data"
                    data-testid="import-data"
                    type="file"
                    multiple=true
                    accept=".txt,.csv,.tsv,.json,.zip,.jzip"
                    on:change=on_files
                />
                <p aria-live="polite" data-testid="import-status">
                    {move || lab.import_status.get()}
                </p>
                <ParticipantRuns runs=lab.participant_runs.into() />
                <Show when=move || !lab.imported.with(Vec::is_empty)>
                    <table class="imported" data-testid="imported-responses">
                        <caption>
                            {move || {
                                format!(
                                    "Imported responses (first 50 of {})",
                                    lab.imported.with(Vec::len),
                                )
                            }}
                        </caption>
                        <thead>
                            <tr>
                                <th>"participant"</th>
                                <th>"passage"</th>
                                <th>"position"</th>
                                <th>"response"</th>
                            </tr>
                        </thead>
                        <tbody>
                            {move || {
                                let mut rows = lab.imported.get();
                                rows.sort_by(|a, b| {
                                    (&a.participant, &a.run, &a.passage, a.position)
                                        .cmp(&(&b.participant, &b.run, &b.passage, b.position))
                                });
                                rows.into_iter()
                                    .take(50)
                                    .map(|r| {
                                        view! {
                                            <tr>
                                                <td>{r.participant}</td>
                                                <td>{r.passage}</td>
                                                <td>{r.position}</td>
                                                <td>{r.response}</td>
                                            </tr>
                                        }
                                    })
                                    .collect_view()
                            }}
                        </tbody>
                    </table>
                </Show>
            </Show>
        </details>
    }
}
