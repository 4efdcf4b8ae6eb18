//! The language participants read the app in: a built-in set (English, German, Dutch), any
//! text of it replaced, and every text shown with its name so the researcher can check it.

use leptos::prelude::*;

use super::line_fields::TextOverrideFields;
use super::use_study_draft;
use crate::game::design::participant_texts::Say;

const LANGUAGE_NAMES: [(&str, &str); 3] =
    [("en", "English"), ("de", "Deutsch"), ("nl", "Nederlands")];

#[component]
pub(super) fn LanguageFields() -> impl IntoView {
    let draft = use_study_draft();
    let chosen = move || {
        draft
            .config
            .with(|c| c.language.clone().unwrap_or_else(|| "en".into()))
    };
    let options = LANGUAGE_NAMES
        .iter()
        .map(|(code, name)| {
            view! {
                <option value=*code selected=move || chosen() == *code>
                    {*name}
                </option>
            }
        })
        .collect_view();
    view! {
        <fieldset>
            <legend>"Language"</legend>
            <label for="study-language">"Participants read the app in "</label>
            <select
                id="study-language"
                data-testid="study-language"
                on:change=move |ev| {
                    let code = event_target_value(&ev);
                    draft.config.update(|c| c.language = (code != "en").then_some(code));
                }
            >
                {options}
            </select>
            <TextOverrideFields />
            <details>
                <summary>"Every text participants read, by name"</summary>
                <dl class="participant-texts" data-testid="participant-texts">
                    {move || {
                        let texts = draft.config.with(|c| c.participant_texts());
                        Say::ALL
                            .iter()
                            .map(|say| {
                                view! {
                                    <dt>
                                        <code>{say.name()}</code>
                                    </dt>
                                    <dd>{texts.get(*say).to_string()}</dd>
                                }
                            })
                            .collect_view()
                    }}
                </dl>
            </details>
        </fieldset>
    }
}
