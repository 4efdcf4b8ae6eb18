//! The Analysis page's files: chosen or dropped, read as UTF-8 text, listed with their sizes;
//! a file that cannot be read is named in an alert and the others are kept.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::app::components::error_note::ErrorNote;
use crate::app::web::files::read_file;

/// The files' texts (UTF-8 required: every format here is text); a ZIP (JATOS's results
/// archive) gives its text files, and an error names what else it held (files participants
/// uploaded), which is left out.
pub(crate) async fn read_texts(list: web_sys::FileList) -> Result<Vec<(String, String)>, String> {
    Ok(read_texts_noting(list, |_| ()).await?.texts)
}

/// What the chosen files held.
struct ReadFiles {
    texts: Vec<(String, String)>,
    /// Entries of archives that are not text, left out.
    left_out: Vec<String>,
    /// Results read as Latin-1 (JATOS on a server whose charset is not UTF-8).
    latin1: Vec<String>,
}

impl ReadFiles {
    /// What the researcher is told, if anything.
    fn caveats(&self) -> Option<String> {
        let mut said = Vec::new();
        if !self.left_out.is_empty() {
            said.push(format!(
                "Left out (not text): {}.",
                self.left_out.join(", ")
            ));
        }
        if !self.latin1.is_empty() {
            said.push(format!(
                "Read as Latin-1, as JATOS writes data.txt in its server's default charset \
                 (check answers with letters outside Latin-1): {}.",
                self.latin1.join(", ")
            ));
        }
        (!said.is_empty()).then(|| said.join(" "))
    }
}

/// The files' texts and what was left out, saying each step to `step` (a study's results
/// archive can take seconds to read and unpack).
async fn read_texts_noting(
    list: web_sys::FileList,
    step: impl Fn(String),
) -> Result<ReadFiles, String> {
    let (mut texts, mut left_out, mut latin1) = (Vec::new(), Vec::new(), Vec::new());
    let files = gloo_file::FileList::from(list);
    for (i, file) in files.iter().enumerate() {
        let (name, mb) = (file.name(), file.size() as f64 / 1e6);
        step(format!(
            "Reading file {} of {}: {name} ({mb:.1} MB)…",
            i + 1,
            files.len()
        ));
        let bytes = read_file(file).await.map_err(|e| e.to_string())?;
        if crate::game::readback::results::is_zip(&bytes) {
            step(format!("Unpacking {name} ({mb:.1} MB)…"));
            // Lets the page show the step before the unpacking holds the thread.
            gloo_timers::future::TimeoutFuture::new(0).await;
        }
        let mut inside =
            crate::game::readback::results::texts_of(&name, bytes).map_err(|e| e.to_string())?;
        texts.append(&mut inside.texts);
        left_out.append(&mut inside.not_text);
        latin1.append(&mut inside.latin1);
    }
    step(String::new());
    Ok(ReadFiles {
        texts,
        left_out,
        latin1,
    })
}

/// Files listed by name before the rest are counted.
const SHOWN_FILES: usize = 12;

/// The drop zone and file chooser, the list of files, and what went wrong reading one.
#[component]
pub(super) fn AnalysisFiles(
    files: RwSignal<Vec<(String, String)>>,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    let reading = RwSignal::new(String::new());
    let add_files = move |list: Option<web_sys::FileList>| {
        let Some(list) = list else { return };
        leptos::task::spawn_local(async move {
            match read_texts_noting(list, move |step| reading.set(step)).await {
                Ok(read) => {
                    problem.set(read.caveats());
                    let mut new = read.texts;
                    files.update(|all| {
                        all.retain(|(n, _)| !new.iter().any(|(m, _)| m == n));
                        all.append(&mut new);
                    });
                }
                Err(e) => {
                    reading.set(String::new());
                    problem.set(Some(e));
                }
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
        <p class="status" aria-live="polite" data-testid="analysis-reading">
            {move || reading.get()}
        </p>
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
