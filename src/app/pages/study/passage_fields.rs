//! Which passages a study plays: built-in ones and the researcher's own (pasted, or `.txt`
//! files), each with its word count; their order, how many per participant, and a practice
//! passage.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::fields::CountField;
use super::line_fields::{AttentionFields, ListFields};
use super::use_study_draft;
use crate::app::components::error_note::ErrorNote;
use crate::app::web::files::read_file_list;
use crate::game::design::study::Order;
use crate::game::design::study_draft::{
    add_own_passages, available_passages, remove_own_passage, selected_ids, set_selected,
};

#[component]
pub(super) fn PassageFields() -> impl IntoView {
    let draft = use_study_draft();
    let pasted = RwSignal::new(String::new());
    let problem = RwSignal::new(None::<String>);
    let add_text = move |text: &str| {
        let mut result = Ok(0);
        draft.config.update(|c| result = add_own_passages(c, text));
        problem.set(result.err().map(|e| e.to_string()));
    };
    let add_files = move |list: Option<web_sys::FileList>| {
        let Some(list) = list else { return };
        leptos::task::spawn_local(async move {
            match read_file_list(&list).await {
                Ok(files) => {
                    for (name, bytes) in files {
                        match String::from_utf8(bytes) {
                            Ok(text) => add_text(&text),
                            Err(_) => problem.set(Some(format!("{name} is not UTF-8 text"))),
                        }
                    }
                }
                Err(e) => problem.set(Some(e.to_string())),
            }
        });
    };
    view! {
        <fieldset>
            <legend>"Passages"</legend>
            <p class="hint">"Ticked passages are played; with none ticked, all of them."</p>
            <ul class="passage-choices" data-testid="study-passages">
                {move || {
                    let config = draft.config.get();
                    let selected = selected_ids(&config);
                    available_passages(&config)
                        .into_iter()
                        .map(|p| {
                            let own = config.texts.iter().any(|t| t.id == p.id);
                            let checked = selected.contains(&p.id);
                            let words = p.words().len();
                            let id = p.id.clone();
                            let remove_id = p.id.clone();
                            view! {
                                <li>
                                    <label class="inline">
                                        <input
                                            type="checkbox"
                                            data-passage=p.id.clone()
                                            prop:checked=checked
                                            on:change=move |ev| {
                                                let on = event_target_checked(&ev);
                                                draft.config.update(|c| set_selected(c, &id, on));
                                            }
                                        />
                                        {format!(" {} ({}, {words} words)", p.title, p.id)}
                                    </label>
                                    {own
                                        .then(|| {
                                            view! {
                                                <button
                                                    type="button"
                                                    class="small"
                                                    on:click=move |_| {
                                                        draft.config.update(|c| remove_own_passage(c, &remove_id))
                                                    }
                                                >
                                                    "Remove"
                                                </button>
                                            }
                                        })}
                                </li>
                            }
                        })
                        .collect_view()
                }}
            </ul>
            <label for="study-own-text">
                "Your own passages (a blank line between passages; an optional first line \
                 \"# Title\")"
            </label>
            <textarea
                id="study-own-text"
                data-testid="study-own-text"
                rows="4"
                prop:value=move || pasted.get()
                on:input=move |ev| pasted.set(event_target_value(&ev))
            />
            <button
                type="button"
                data-testid="study-add-text"
                on:click=move |_| {
                    add_text(&pasted.get_untracked());
                    if problem.get_untracked().is_none() {
                        pasted.set(String::new());
                    }
                }
            >
                "Add these passages"
            </button>
            <label for="study-text-files">" or .txt files: "</label>
            <input
                id="study-text-files"
                type="file"
                accept=".txt,text/plain"
                multiple
                on:change=move |ev| add_files(
                    ev
                        .target()
                        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                        .and_then(|i| i.files()),
                )
            />
            <ErrorNote message=problem />
            <label for="study-order">"Order"</label>
            <select
                id="study-order"
                data-testid="study-order"
                on:change=move |ev| {
                    let random = event_target_value(&ev) == "random";
                    draft
                        .config
                        .update(|c| c.order = if random { Order::Random } else { Order::Fixed });
                }
            >
                <option
                    value="fixed"
                    selected=move || draft.config.with(|c| c.order == Order::Fixed)
                >
                    "Fixed (as listed)"
                </option>
                <option
                    value="random"
                    selected=move || draft.config.with(|c| c.order == Order::Random)
                >
                    "Random per participant (seeded by their id)"
                </option>
            </select>
            <CountField
                label="Passages per participant (empty: all)"
                id="study-per-participant"
                get=|c| c.passages_per_participant
                set=|c, v| c.passages_per_participant = v
            />
            <PracticeChoice />
            <ListFields />
            <AttentionFields />
        </fieldset>
    }
}

/// The practice passage: played first, marked practice, never counted.
#[component]
fn PracticeChoice() -> impl IntoView {
    let draft = use_study_draft();
    view! {
        <label for="study-practice">"Practice passage (played first, not counted)"</label>
        <select
            id="study-practice"
            data-testid="study-practice"
            on:change=move |ev| {
                let id = event_target_value(&ev);
                draft.config.update(|c| c.practice = (!id.is_empty()).then_some(id));
            }
        >
            <option value="">"None"</option>
            {move || {
                let config = draft.config.get();
                available_passages(&config)
                    .into_iter()
                    .map(|p| {
                        let chosen = config.practice.as_deref() == Some(p.id.as_str());
                        view! {
                            <option value=p.id.clone() selected=chosen>
                                {p.title.clone()}
                            </option>
                        }
                    })
                    .collect_view()
            }}
        </select>
    }
}
