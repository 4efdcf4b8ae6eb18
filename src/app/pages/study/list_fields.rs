//! Counterbalanced lists on the Study page: one per line, `name: id, id, …`; each participant
//! plays one list (named in their link as `?list=name`, else picked by their id).

use leptos::prelude::*;

use super::use_study_draft;
use crate::app::components::error_note::ErrorNote;
use crate::game::study_draft::{lists_text, parse_lists};

#[component]
pub(super) fn ListFields() -> impl IntoView {
    let draft = use_study_draft();
    let text = RwSignal::new(draft.config.with_untracked(|c| lists_text(&c.lists)));
    let problem = RwSignal::new(None::<String>);
    // A config loaded into the form brings its lists into this field.
    Effect::new(move |_| {
        let lists = draft.config.with(|c| c.lists.clone());
        if parse_lists(&text.get_untracked()).ok().as_ref() != Some(&lists) {
            text.set(lists_text(&lists));
        }
    });
    view! {
        <label for="study-lists">
            "Lists for counterbalancing (optional): one per line, \"name: passage id, passage id, …\". \
             Each participant plays one list instead of the ticked passages: the one their link \
             names (?list=name), else one picked from their id."
        </label>
        <textarea
            id="study-lists"
            data-testid="study-lists"
            rows="3"
            placeholder="A: storm, bees\nB: letter, river"
            prop:value=move || text.get()
            on:input=move |ev| {
                let typed = event_target_value(&ev);
                match parse_lists(&typed) {
                    Ok(lists) => {
                        problem.set(None);
                        draft.config.update(|c| c.lists = lists);
                    }
                    Err(e) => problem.set(Some(e)),
                }
                text.set(typed);
            }
        />
        <ErrorNote message=problem />
    }
}
