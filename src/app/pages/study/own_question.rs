//! A question of the researcher's own, written on the Study page: its id (the trial table's
//! column), text, kind, choices (and those that screen out), range, whether it is required, and
//! whether it comes before or after the passages.

use leptos::prelude::*;

use super::use_study_draft;
use crate::app::components::error_note::ErrorNote;
use crate::game::design::questions::QuestionKind;
use crate::game::design::study_draft::{add_question, own_question};

const KINDS: [(&str, QuestionKind); 5] = [
    ("free text", QuestionKind::Text),
    ("number", QuestionKind::Number),
    ("single choice", QuestionKind::SingleChoice),
    ("multiple choice", QuestionKind::MultipleChoice),
    ("Likert scale (1-5)", QuestionKind::Likert),
];

/// One line of the form: a labelled text input writing into `value`.
fn line(label: &'static str, testid: &'static str, value: RwSignal<String>) -> impl IntoView {
    view! {
        <label>
            {label}
            <input
                type="text"
                data-testid=testid
                prop:value=move || value.get()
                on:input=move |ev| value.set(event_target_value(&ev))
            />
        </label>
    }
}

#[component]
pub(super) fn OwnQuestion() -> impl IntoView {
    let draft = use_study_draft();
    let [id, text, options, screen_out, range] =
        std::array::from_fn(|_| RwSignal::new(String::new()));
    let kind = RwSignal::new(0usize);
    let required = RwSignal::new(true);
    let before = RwSignal::new(true);
    let problem = RwSignal::new(None::<String>);
    let add = move || {
        let question = own_question(
            &id.get_untracked(),
            &text.get_untracked(),
            KINDS
                .get(kind.get_untracked())
                .map_or(QuestionKind::Text, |k| k.1),
            &options.get_untracked(),
            &screen_out.get_untracked(),
            &range.get_untracked(),
            required.get_untracked(),
        );
        let added = question.and_then(|question| {
            let mut added = Ok(());
            draft
                .config
                .update(|c| added = add_question(c, question, before.get_untracked()));
            added
        });
        match added {
            Ok(()) => {
                problem.set(None);
                for field in [id, text, options, screen_out, range] {
                    field.set(String::new());
                }
            }
            Err(e) => problem.set(Some(e)),
        }
    };
    view! {
        <details class="own-question">
            <summary>"Write a question of your own"</summary>
            {line(
                "Id (its column: q_<id>; lower-case letters, digits, _) ",
                "study-question-id",
                id,
            )}
            {line("Question ", "study-question-text", text)}
            <label>
                "Kind "
                <select
                    data-testid="study-question-kind"
                    on:change=move |ev| kind.set(event_target_value(&ev).parse().unwrap_or(0))
                >
                    {KINDS
                        .iter()
                        .enumerate()
                        .map(|(i, (name, _))| {
                            view! { <option value=i.to_string()>{*name}</option> }
                        })
                        .collect_view()}
                </select>
            </label>
            {line(
                "Choices, separated by commas (a Likert scale: its two ends) ",
                "study-question-options",
                options,
            )}
            {line(
                "Choices that screen out (end the study; before the passages only) ",
                "study-question-screen-out",
                screen_out,
            )}
            {line("Range of a number, min-max ", "study-question-range", range)}
            <label class="inline">
                <input
                    type="checkbox"
                    prop:checked=move || required.get()
                    on:change=move |ev| required.set(event_target_checked(&ev))
                />
                " Required"
            </label>
            <label class="inline">
                <input
                    type="checkbox"
                    data-testid="study-question-after"
                    on:change=move |ev| before.set(!event_target_checked(&ev))
                />
                " Ask it after the passages"
            </label>
            <button type="button" data-testid="study-add-question" on:click=move |_| add()>
                "Add the question"
            </button>
            <ErrorNote message=problem />
        </details>
    }
}
