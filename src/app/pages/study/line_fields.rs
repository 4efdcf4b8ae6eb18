//! The Study page's fields written one item per line: counterbalanced lists (`name: id, id,
//! …`; each participant plays one list, named in their link as `?list=name`, else the least
//! used in JATOS's batch, else picked by their id), attention checks (`passage, after, answer: instruction`) and replaced
//! participant texts (`name: text`).

use leptos::prelude::*;

use super::use_study_draft;
use crate::app::components::error_note::ErrorNote;
use crate::game::design::study::StudyConfig;
use crate::game::design::study_draft::{
    checks_text, lists_text, overrides_text, parse_checks, parse_lists, parse_overrides,
};

/// A textarea over one of the config's collections of items, kept in step both ways: typing
/// updates the config when the text parses (else the parse error shows), and a config loaded
/// into the form brings its items into the field.
pub(super) fn line_items<T: Clone + PartialEq + Send + Sync + 'static>(
    testid: &'static str,
    placeholder: &'static str,
    get: fn(&StudyConfig) -> &T,
    set: fn(&mut StudyConfig, T),
    print: fn(&T) -> String,
    parse: fn(&str) -> Result<T, String>,
) -> impl IntoView {
    let draft = use_study_draft();
    let text = RwSignal::new(draft.config.with_untracked(|c| print(get(c))));
    let problem = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let items = draft.config.with(|c| get(c).clone());
        if parse(&text.get_untracked()).ok().as_ref() != Some(&items) {
            text.set(print(&items));
        }
    });
    view! {
        <textarea
            id=testid
            data-testid=testid
            rows="3"
            placeholder=placeholder
            prop:value=move || text.get()
            on:input=move |ev| {
                let typed = event_target_value(&ev);
                match parse(&typed) {
                    Ok(items) => {
                        problem.set(None);
                        draft.config.update(|c| set(c, items));
                    }
                    Err(e) => problem.set(Some(e)),
                }
                text.set(typed);
            }
        />
        <ErrorNote message=problem />
    }
}

#[component]
pub(super) fn ListFields() -> impl IntoView {
    view! {
        <label for="study-lists">
            "Lists for counterbalancing (optional): one per line, \"name: passage id, passage id, …\". \
             Each participant plays one list instead of the ticked passages: the one their link \
             names (?list=name), else in JATOS the one its batch has given least so far, else \
             one picked from their id."
        </label>
        {line_items(
            "study-lists",
            "A: storm, bees\nB: letter, river",
            |c| &c.lists,
            |c, lists| c.lists = lists,
            |lists| lists_text(lists),
            parse_lists,
        )}
    }
}

#[component]
pub(super) fn AttentionFields() -> impl IntoView {
    view! {
        <label for="study-attention">
            "Attention checks (optional): one per line, \"passage id, answers before it, answer: \
             instruction\". The instruction is shown over the passage so far, after that many of \
             the passage's answers; the participant's answer passes when it is the given word."
        </label>
        {line_items(
            "study-attention",
            "storm, 5, purple: To show that you are reading, type the word purple.",
            |c| &c.attention_checks,
            |c, checks| c.attention_checks = checks,
            |checks| checks_text(checks),
            parse_checks,
        )}
    }
}

#[component]
pub(super) fn TextOverrideFields() -> impl IntoView {
    view! {
        <label for="study-participant-texts">
            "Replace texts (optional): one per line, \"name: text\", with the names below; keep \
             the {placeholders} a text has."
        </label>
        {line_items(
            "study-participant-texts",
            "consent_agree: Yes, I take part",
            |c| &c.participant_texts,
            |c, texts| c.participant_texts = texts,
            overrides_text,
            parse_overrides,
        )}
    }
}
