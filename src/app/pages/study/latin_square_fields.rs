//! A Latin square on the Study page: the conditions and the items (each a passage per
//! condition), rotated into one list per condition as you type; the loader checks that every
//! list shows each item once and each condition equally often.

use leptos::prelude::*;

use super::use_study_draft;
use crate::app::components::error_note::ErrorNote;
use crate::game::design::study_draft::{parse_square, set_latin_square, square_texts};

#[component]
pub(super) fn LatinSquareFields() -> impl IntoView {
    let draft = use_study_draft();
    let (conditions, items) = draft
        .config
        .with_untracked(|c| square_texts(c.latin_square.as_ref()));
    let conditions = RwSignal::new(conditions);
    let items = RwSignal::new(items);
    let problem = RwSignal::new(None::<String>);
    // A config loaded into the form brings its square into the fields.
    Effect::new(move |_| {
        let square = draft.config.with(|c| c.latin_square.clone());
        let typed = parse_square(&conditions.get_untracked(), &items.get_untracked());
        if typed.ok().flatten() != square {
            let (c, i) = square_texts(square.as_ref());
            conditions.set(c);
            items.set(i);
        }
    });
    let apply = move || match parse_square(&conditions.get_untracked(), &items.get_untracked()) {
        Ok(square) => {
            problem.set(None);
            draft.config.update(|c| set_latin_square(c, square));
        }
        Err(e) => problem.set(Some(e)),
    };
    let lists = move || {
        draft.config.with(|c| {
            let square = c.latin_square.as_ref()?;
            let rows = c
                .lists
                .iter()
                .map(|list| {
                    let shown: Vec<String> = list
                        .passages
                        .iter()
                        .map(|p| match square.place_of(p) {
                            Some((_, condition)) => format!("{p} ({condition})"),
                            None => p.clone(),
                        })
                        .collect();
                    view! {
                        <li data-testid="study-square-list">
                            {format!("List {}: {}", list.name, shown.join(", "))}
                        </li>
                    }
                })
                .collect_view();
            Some(view! { <ul class="square-lists">{rows}</ul> })
        })
    };
    view! {
        <details class="latin-square" open=move || draft.config.with(|c| c.latin_square.is_some())>
            <summary>"Latin square (optional): one item set in several conditions"</summary>
            <label for="study-square-conditions">
                "Conditions, separated by commas (e.g. \"high, low\")"
            </label>
            <input
                id="study-square-conditions"
                data-testid="study-square-conditions"
                type="text"
                placeholder="high, low"
                prop:value=move || conditions.get()
                on:input=move |ev| {
                    conditions.set(event_target_value(&ev));
                    apply();
                }
            />
            <label for="study-square-items">
                "Items, one per line: the passage ids of its versions, in the conditions' order. \
                 Each list shows every item once, in one condition, rotating across lists; the \
                 number of items must be a multiple of the number of conditions."
            </label>
            <textarea
                id="study-square-items"
                data-testid="study-square-items"
                rows="4"
                placeholder="p1, p2\np3, p4"
                prop:value=move || items.get()
                on:input=move |ev| {
                    items.set(event_target_value(&ev));
                    apply();
                }
            />
            <ErrorNote message=problem />
            {lists}
        </details>
    }
}
