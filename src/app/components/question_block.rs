//! One block of a study's questions on screen: each question with its input (text, number,
//! choices, a Likert scale), checked on "Continue", then saved through the [`Questionnaire`].

use std::collections::BTreeMap;

use leptos::prelude::*;

use super::questionnaire::Questionnaire;
use crate::app::texts::use_texts;
use crate::app::web::clock::{now_ms, timestamp};
use crate::game::design::participant_texts::Say;
use crate::game::design::questions::{Block, Question, QuestionAnswer, QuestionKind};

/// A block of the study's questions as a game's stage: the questions still due, and the way out
/// (`on_withdraw`), as during the passages.
#[component]
pub fn QuestionsStage(
    questionnaire: Questionnaire,
    block: Block,
    on_done: Callback<bool>,
    on_withdraw: Callback<()>,
) -> impl IntoView {
    view! {
        <QuestionBlockView questionnaire questions=questionnaire.due(block) on_done />
        <super::withdrawal::WithdrawButton on_withdraw />
    }
}

/// The questions of a block still to be answered; `on_done(screened_out)` runs once the
/// answers are saved.
#[component]
pub fn QuestionBlockView(
    questionnaire: Questionnaire,
    questions: Vec<Question>,
    on_done: Callback<bool>,
) -> impl IntoView {
    let shown_at = now_ms();
    let say = use_texts();
    let values = RwSignal::new(BTreeMap::<String, Vec<String>>::new());
    let errors = RwSignal::new(BTreeMap::<String, String>::new());
    let save = Action::new_local(move |answers: &Vec<QuestionAnswer>| {
        let answers = answers.clone();
        async move {
            let screened = questionnaire.save(answers).await;
            on_done.run(screened);
        }
    });
    let asked = questions.clone();
    let submit = move || {
        let given = values.get_untracked();
        let mut problems = BTreeMap::new();
        let mut answers = Vec::new();
        for q in &asked {
            match q.answer(given.get(&q.id).map_or(&[][..], Vec::as_slice)) {
                Ok(answer) => answers.push(QuestionAnswer {
                    screened_out: q.screens_out(&answer),
                    question: q.id.clone(),
                    answer,
                    response_time_ms: Some(now_ms() - shown_at),
                    timestamp: timestamp(),
                }),
                Err(e) => {
                    let (text, fill) = e.say();
                    let fill: Vec<(&str, &str)> =
                        fill.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    problems.insert(q.id.clone(), say.fill(text, &fill));
                }
            }
        }
        let fine = problems.is_empty();
        errors.set(problems);
        if fine {
            save.dispatch(answers);
        }
    };
    let fields = questions
        .into_iter()
        .map(|q| view! { <QuestionField question=q values errors /> })
        .collect_view();
    view! {
        <form
            class="questions"
            data-testid="questions"
            on:submit=move |ev| {
                ev.prevent_default();
                submit();
            }
        >
            {fields}
            <button type="submit" data-testid="questions-continue" disabled=save.pending()>
                {say.get(Say::QuestionsContinue)}
            </button>
        </form>
    }
}

/// One question and its input, writing what is entered into `values` (by question id).
#[component]
fn QuestionField(
    question: Question,
    values: RwSignal<BTreeMap<String, Vec<String>>>,
    errors: RwSignal<BTreeMap<String, String>>,
) -> impl IntoView {
    let say = use_texts();
    let id = question.id.clone();
    // What is entered changes: the question's error goes until "Continue" checks it again.
    let answer_changed = {
        let id = id.clone();
        move |change: &dyn Fn(&mut Vec<String>)| {
            errors.update(|e| drop(e.remove(&id)));
            values.update(|v| change(v.entry(id.clone()).or_default()));
        }
    };
    let set_one = {
        let answer_changed = answer_changed.clone();
        move |value: String| answer_changed(&|chosen| *chosen = vec![value.clone()])
    };
    let toggle = move |option: String, on: bool| {
        answer_changed(&|chosen| {
            chosen.retain(|o| *o != option);
            if on {
                chosen.push(option.clone());
            }
        })
    };
    let choices = |kind: &'static str, options: Vec<(String, String)>| {
        options
            .into_iter()
            .map(|(value, label)| {
                let (set_one, toggle) = (set_one.clone(), toggle.clone());
                let v = value.clone();
                view! {
                    <label class="choice">
                        <input
                            type=kind
                            name=question.id.clone()
                            value=value.clone()
                            data-testid=format!("question-{}-option", question.id)
                            on:change=move |ev| {
                                if kind == "radio" {
                                    set_one(v.clone());
                                } else {
                                    toggle(v.clone(), event_target_checked(&ev));
                                }
                            }
                        />
                        {label}
                    </label>
                }
            })
            .collect_view()
    };
    let input = match question.kind {
        QuestionKind::Text | QuestionKind::Number => {
            let number = question.kind == QuestionKind::Number;
            view! {
                <input
                    type="text"
                    inputmode=if number { "decimal" } else { "text" }
                    maxlength="1000"
                    aria-label=question.text.clone()
                    data-testid=format!("question-{}-input", question.id)
                    on:input=move |ev| set_one(event_target_value(&ev))
                />
            }
            .into_any()
        }
        QuestionKind::SingleChoice => choices(
            "radio",
            question
                .options
                .iter()
                .map(|o| (o.clone(), o.clone()))
                .collect(),
        )
        .into_any(),
        QuestionKind::MultipleChoice => choices(
            "checkbox",
            question
                .options
                .iter()
                .map(|o| (o.clone(), o.clone()))
                .collect(),
        )
        .into_any(),
        QuestionKind::Likert => {
            let ends = question.options.clone();
            let points = question
                .likert_points()
                .into_iter()
                .map(|n| (n.to_string(), n.to_string()))
                .collect();
            view! {
                <div class="likert">
                    <span class="likert-end">{ends.first().cloned()}</span>
                    {choices("radio", points)}
                    <span class="likert-end">{ends.get(1).cloned()}</span>
                </div>
            }
            .into_any()
        }
    };
    let optional = (!question.required).then(|| format!(" {}", say.get(Say::QuestionOptional)));
    let error_id = id.clone();
    view! {
        <fieldset class="question" data-testid=format!("question-{id}")>
            <legend>{question.text.clone()} {optional}</legend>
            {input}
            <p class="error" role="alert" data-testid=format!("question-{id}-error")>
                {move || errors.with(|e| e.get(&error_id).cloned().unwrap_or_default())}
            </p>
        </fieldset>
    }
}
