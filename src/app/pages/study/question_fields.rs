//! The questions a study asks around the passages: the built-in ones every cloze study needs
//! (native speaker, which with "no" screens out; native language; age; did you look anything
//! up), the researcher's own ([`own_question`](super::own_question)), the list of both blocks,
//! and where a participant a question screens out is sent.

use leptos::prelude::*;

use super::fields::OptionalTextField;
use super::own_question::OwnQuestion;
use super::use_study_draft;
use crate::app::components::error_note::ErrorNote;
use crate::game::design::questions::{BUILT_IN, Question};
use crate::game::design::study_draft::add_built_in_question;

#[component]
pub(super) fn QuestionFields() -> impl IntoView {
    let draft = use_study_draft();
    let built_in = RwSignal::new(BUILT_IN[0].to_string());
    let problem = RwSignal::new(None::<String>);
    let listed = move |before: bool| {
        draft.config.with(|c| {
            let block = if before {
                &c.questions_before
            } else {
                &c.questions_after
            };
            block
                .iter()
                .map(|q| view! { <QuestionLine question=q.clone() before /> })
                .collect_view()
        })
    };
    view! {
        <fieldset class="study-questions">
            <legend>"Questions"</legend>
            <p class="hint">
                "Asked after the consent, before the passages, or after the last passage. Their \
                 answers are columns of the trial table (q_<id>)."
            </p>
            <label for="study-built-in-question">"A question every cloze study asks"</label>
            <div class="inline">
                <select
                    id="study-built-in-question"
                    data-testid="study-built-in-question"
                    on:change=move |ev| built_in.set(event_target_value(&ev))
                >
                    {BUILT_IN
                        .iter()
                        .map(|name| view! { <option value=*name>{name.replace('_', " ")}</option> })
                        .collect_view()}
                </select>
                <button
                    type="button"
                    data-testid="study-add-built-in"
                    on:click=move |_| {
                        let name = built_in.get_untracked();
                        let mut added = Ok(());
                        draft.config.update(|c| added = add_built_in_question(c, &name));
                        problem.set(added.err());
                    }
                >
                    "Add"
                </button>
            </div>
            <ErrorNote message=problem />
            <OwnQuestion />
            <h4>"Before the passages"</h4>
            <ul data-testid="study-questions-before">{move || listed(true)}</ul>
            <h4>"After the passages"</h4>
            <ul data-testid="study-questions-after">{move || listed(false)}</ul>
            <OptionalTextField
                label="Where to send a participant a question screens out (e.g. Prolific's screen-out URL)"
                id="study-screened-out-url"
                placeholder="https://app.prolific.com/submissions/complete?cc=…"
                field=|c| &c.screened_out_url
                field_mut=|c| &mut c.screened_out_url
            />
        </fieldset>
    }
}

/// One question of the study, with a button that removes it.
#[component]
fn QuestionLine(question: Question, before: bool) -> impl IntoView {
    let draft = use_study_draft();
    let kind = serde_json::to_value(question.kind)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
        .unwrap_or_default();
    let mut about = vec![kind];
    if !question.options.is_empty() {
        about.push(question.options.join(" / "));
    }
    if !question.screen_out.is_empty() {
        about.push(format!("screens out: {}", question.screen_out.join(", ")));
    }
    if !question.required {
        about.push("optional".into());
    }
    let id = question.id.clone();
    view! {
        <li data-testid="study-question" data-question=question.id.clone()>
            <code>{question.id.clone()}</code>
            {format!(" {} ({})", question.text, about.join("; "))}
            <button
                type="button"
                class="link"
                on:click=move |_| {
                    draft
                        .config
                        .update(|c| {
                            let block = if before {
                                &mut c.questions_before
                            } else {
                                &mut c.questions_after
                            };
                            block.retain(|q| q.id != id);
                        })
                }
            >
                "Remove"
            </button>
        </li>
    }
}
