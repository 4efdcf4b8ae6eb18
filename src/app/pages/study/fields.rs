//! The Study page's small inputs: a text field (one line, or several), an optional text and a
//! count field, each bound to one part of the config being edited.

use leptos::prelude::*;

use super::use_study_draft;
use crate::game::design::study::StudyConfig;
use crate::game::design::study_draft::optional_count;

/// A text input showing `get(config)` and writing `set(config, text)`: one line, or a text
/// area of `rows` lines (consent, instructions).
#[component]
pub(super) fn TextField(
    label: &'static str,
    id: &'static str,
    get: fn(&StudyConfig) -> String,
    set: fn(&mut StudyConfig, String),
    #[prop(optional)] placeholder: &'static str,
    #[prop(optional)] rows: Option<u32>,
) -> impl IntoView {
    let draft = use_study_draft();
    let value = move || draft.config.with(get);
    let write =
        move |ev: leptos::ev::Event| draft.config.update(|c| set(c, event_target_value(&ev)));
    let input = match rows {
        Some(rows) => view! {
            <textarea
                id=id
                data-testid=id
                rows=rows
                placeholder=placeholder
                prop:value=value
                on:input=write
            />
        }
        .into_any(),
        None => view! {
            <input
                id=id
                data-testid=id
                type="text"
                placeholder=placeholder
                prop:value=value
                on:input=write
            />
        }
        .into_any(),
    };
    view! {
        <label for=id>{label}</label>
        {input}
    }
}

/// A one-line text input for an optional text: empty means "not set".
#[component]
pub(super) fn OptionalTextField(
    label: &'static str,
    id: &'static str,
    field: fn(&StudyConfig) -> &Option<String>,
    field_mut: fn(&mut StudyConfig) -> &mut Option<String>,
    #[prop(optional)] placeholder: &'static str,
) -> impl IntoView {
    let draft = use_study_draft();
    view! {
        <label for=id>{label}</label>
        <input
            id=id
            data-testid=id
            type="text"
            placeholder=placeholder
            prop:value=move || draft.config.with(|c| field(c).clone().unwrap_or_default())
            on:input=move |ev| {
                let text = event_target_value(&ev);
                draft.config.update(|c| *field_mut(c) = (!text.trim().is_empty()).then_some(text));
            }
        />
    }
}

/// A yes/no setting of the config, as a checkbox with its label after it.
#[component]
pub(super) fn CheckField(
    label: &'static str,
    id: &'static str,
    get: fn(&StudyConfig) -> bool,
    field_mut: fn(&mut StudyConfig) -> &mut bool,
) -> impl IntoView {
    let draft = use_study_draft();
    view! {
        <label class="inline">
            <input
                type="checkbox"
                data-testid=id
                prop:checked=move || draft.config.with(get)
                on:change=move |ev| {
                    draft.config.update(|c| *field_mut(c) = event_target_checked(&ev))
                }
            />
            " "
            {label}
        </label>
    }
}

/// An optional whole number: empty means the default; text that is not a number is named
/// beside the field and leaves the config as it was.
#[component]
pub(super) fn CountField<T>(
    label: &'static str,
    id: &'static str,
    get: fn(&StudyConfig) -> Option<T>,
    set: fn(&mut StudyConfig, Option<T>),
    #[prop(optional)] placeholder: &'static str,
) -> impl IntoView
where
    T: std::str::FromStr + std::fmt::Display + Send + Sync + 'static,
{
    let draft = use_study_draft();
    let problem = RwSignal::new(None::<String>);
    view! {
        <label for=id>{label}</label>
        <input
            id=id
            data-testid=id
            type="text"
            inputmode="numeric"
            placeholder=placeholder
            prop:value=move || {
                draft.config.with(|c| get(c).map(|n| n.to_string()).unwrap_or_default())
            }
            on:input=move |ev| {
                match optional_count::<T>(&event_target_value(&ev)) {
                    Ok(value) => {
                        problem.set(None);
                        draft.config.update(|c| set(c, value));
                    }
                    Err(e) => problem.set(Some(e)),
                }
            }
        />
        {move || {
            problem
                .get()
                .map(|m| {
                    view! {
                        <span class="error" role="alert">
                            {m}
                        </span>
                    }
                })
        }}
    }
}
