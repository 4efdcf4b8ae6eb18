//! Loading an existing study config (`study.json`) into the form; a config the loader refuses
//! is named with its error and the form keeps what it had.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::use_study_draft;
use crate::app::components::error_note::ErrorNote;
use crate::app::web::files::read_file_list;
use crate::game::design::study::StudyConfig;

#[component]
pub(super) fn LoadConfig() -> impl IntoView {
    let draft = use_study_draft();
    let problem = RwSignal::new(None::<String>);
    let load = move |list: Option<web_sys::FileList>| {
        let Some(list) = list else { return };
        leptos::task::spawn_local(async move {
            let loaded = match read_file_list(&list).await {
                Ok(files) => files
                    .into_iter()
                    .next()
                    .ok_or_else(|| "no file chosen".to_string())
                    .and_then(|(name, bytes)| {
                        let text = String::from_utf8(bytes)
                            .map_err(|_| format!("{name} is not UTF-8 text"))?;
                        StudyConfig::from_json(&text).map_err(|e| format!("{name}: {e}"))
                    }),
                Err(e) => Err(e.to_string()),
            };
            match loaded {
                Ok(config) => {
                    draft.config.set(config);
                    problem.set(None);
                }
                Err(e) => problem.set(Some(e)),
            }
        });
    };
    view! {
        <p>
            <label for="study-load">"Start from an existing config (study.json): "</label>
            <input
                id="study-load"
                data-testid="study-load"
                type="file"
                accept=".json,application/json"
                on:change=move |ev| load(
                    ev
                        .target()
                        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                        .and_then(|i| i.files()),
                )
            />
        </p>
        <ErrorNote message=problem />
    }
}
