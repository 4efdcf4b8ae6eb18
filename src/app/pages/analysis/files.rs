//! The Analysis page's files: chosen or dropped, read as UTF-8 text, listed with their sizes;
//! a file that cannot be read is named in an alert and the others are kept.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::app::components::error_note::ErrorNote;
use crate::app::web::files::read_file_list;

/// The files' texts (UTF-8 required: every format here is text); a ZIP (JATOS's results
/// archive) gives its text files, and an error names what else it held (files participants
/// uploaded), which is left out.
pub(crate) async fn read_texts(list: web_sys::FileList) -> Result<Vec<(String, String)>, String> {
    Ok(read_texts_noting(list).await?.0)
}

async fn read_texts_noting(
    list: web_sys::FileList,
) -> Result<(Vec<(String, String)>, Vec<String>), String> {
    let files = read_file_list(&list).await.map_err(|e| e.to_string())?;
    let (mut texts, mut left_out) = (Vec::new(), Vec::new());
    for (name, bytes) in files {
        let mut inside = crate::game::results::texts_of(&name, bytes).map_err(|e| e.to_string())?;
        texts.append(&mut inside.texts);
        left_out.append(&mut inside.not_text);
    }
    Ok((texts, left_out))
}

/// Files listed by name before the rest are counted.
const SHOWN_FILES: usize = 12;

/// The drop zone and file chooser, the list of files, and what went wrong reading one.
#[component]
pub(super) fn AnalysisFiles(
    files: RwSignal<Vec<(String, String)>>,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    let add_files = move |list: Option<web_sys::FileList>| {
        let Some(list) = list else { return };
        leptos::task::spawn_local(async move {
            match read_texts_noting(list).await {
                Ok((mut new, left_out)) => {
                    problem.set(
                        (!left_out.is_empty())
                            .then(|| format!("Left out (not text): {}", left_out.join(", "))),
                    );
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
                    participants (long CSV/JSON or JSON bundles: merged into the norms), a study's \
                    results (JATOS's results archive or text export, or the bundles your study \
                    server saved: each answer counted once) and sample files (JSON Lines with samples, continuations or word lists) — \
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
                let all = files.get();
                let more = all.len().saturating_sub(SHOWN_FILES);
                let shown = all
                    .into_iter()
                    .take(SHOWN_FILES)
                    .map(|(name, text)| {
                        // A JATOS archive can hold hundreds of files: the first few, then a count.
                        view! { <li>{format!("{name} ({} KB)", text.len() / 1024)}</li> }
                    })
                    .collect_view();
                view! {
                    {shown}
                    {(more > 0).then(|| view! { <li>{format!("… and {more} more files")}</li> })}
                }
            }}
        </ul>
        <ErrorNote message=problem />
    }
}
