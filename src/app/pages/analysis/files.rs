//! The Analysis page's files: chosen or dropped, read as UTF-8 text, listed with their sizes;
//! a file that cannot be read is named in an alert and the others are kept.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::app::components::error_note::ErrorNote;
use crate::app::web::files::read_file_list;

/// The files' texts (UTF-8 required: every format here is text).
pub(crate) async fn read_texts(list: web_sys::FileList) -> Result<Vec<(String, String)>, String> {
    let files = read_file_list(&list).await.map_err(|e| e.to_string())?;
    files
        .into_iter()
        .map(|(name, bytes)| {
            String::from_utf8(bytes)
                .map(|text| (name.clone(), text))
                .map_err(|_| format!("{name} is not UTF-8 text"))
        })
        .collect()
}

/// The drop zone and file chooser, the list of files, and what went wrong reading one.
#[component]
pub(super) fn AnalysisFiles(
    files: RwSignal<Vec<(String, String)>>,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    let add_files = move |list: Option<web_sys::FileList>| {
        let Some(list) = list else { return };
        leptos::task::spawn_local(async move {
            match read_texts(list).await {
                Ok(mut new) => {
                    problem.set(None);
                    files.update(|all| {
                        all.retain(|(n, _)| !new.iter().any(|(m, _)| m == n));
                        all.append(&mut new);
                    });
                }
                Err(e) => problem.set(Some(e)),
            }
        });
    };
    view! {
        <div
            class="drop-zone"
            data-testid="analysis-drop"
            on:dragover=move |ev| ev.prevent_default()
            on:drop=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                add_files(ev.data_transfer().and_then(|d| d.files()));
            }
        >
            <label for="analysis-files">
                "Norms (the OSF CSV/TSV, or provo_cloze.jsonl), clozelab's exports of your \
                    participants (long CSV/JSON or JSON bundles: merged into the norms) and \
                    sample files (JSON Lines with samples, continuations or word lists) — \
                    choose or drop: "
            </label>
            <input
                id="analysis-files"
                data-testid="analysis-files"
                type="file"
                multiple
                on:change=move |ev| add_files(
                    ev
                        .target()
                        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                        .and_then(|i| i.files()),
                )
            />
        </div>
        <ul data-testid="analysis-file-list">
            {move || {
                files
                    .get()
                    .into_iter()
                    .map(|(name, text)| {
                        view! { <li>{format!("{name} ({} KB)", text.len() / 1024)}</li> }
                    })
                    .collect_view()
            }}
        </ul>
        <ErrorNote message=problem />
    }
}
