//! The exact probability that the next word after the page's context is a given word: every
//! tokenisation of it summed, and the word ended (computed in the worker, as `clozelab
//! word-prob` does).

use leptos::prelude::*;

use crate::app::components::outcome::Outcome;
use crate::app::state::use_runtime;
use crate::app::worker_client::CallError;
use crate::estimators::wordprob::WordProb;
use crate::runtime::protocol::{Reply, Request, WordProbsRequest};

#[component]
pub fn WordProbability(context: Signal<String>) -> impl IntoView {
    let ctx = use_runtime();
    let word = RwSignal::new(String::new());
    let score = Action::new_local(move |(context, word): &(String, String)| {
        let context = context.clone();
        let request = Request::WordProbs(WordProbsRequest {
            context: context.clone(),
            words: vec![word.clone()],
            temperature: 1.0,
        });
        async move {
            match ctx.client().start(request, None).reply().await {
                Reply::WordProbs(mut scored) if scored.len() == 1 => {
                    Ok((context, scored.remove(0)))
                }
                other => Err(CallError::from_reply(other).to_string()),
            }
        }
    });
    // A score belongs to the context it was computed after: once the context is edited it is
    // no longer shown (the next-token list above has moved on too).
    let result = move || {
        score.value().get().filter(|r| match r {
            Ok((scored_after, _)) => context.with(|now| now == scored_after),
            Err(_) => true,
        })
    };
    let submit = move || {
        let typed = word.get_untracked().trim().to_string();
        if !typed.is_empty() {
            score.dispatch((context.get_untracked(), typed));
        }
    };
    view! {
        <form
            class="word-probability"
            on:submit=move |ev| {
                ev.prevent_default();
                submit();
            }
        >
            <label for="scored-word">"A word's probability as the next word"</label>
            <input
                id="scored-word"
                data-testid="scored-word"
                autocomplete="off"
                spellcheck="false"
                prop:value=move || word.get()
                on:input=move |ev| word.set(event_target_value(&ev))
            />
            <button type="submit" data-testid="score-word" disabled=move || score.pending().get()>
                "Score"
            </button>
        </form>
        <Outcome
            result=result
            failure="Cannot score the word"
            render=|(_, scored)| view! { <ScoredWord scored=scored /> }
        />
    }
}

#[component]
fn ScoredWord(scored: WordProb) -> impl IntoView {
    let shown = if scored.prob >= 1e-4 {
        format!("{:.3}%", scored.prob * 100.0)
    } else {
        format!("{:.3e}", scored.prob)
    };
    let (word, quoted) = (scored.word.clone(), format!("“{}”", scored.word));
    let ways = match scored.segmentations {
        1 => "1 tokenisation".to_string(),
        n => format!("{n} tokenisations summed"),
    };
    view! {
        <p data-testid="word-prob" data-word=word data-prob=scored.prob.to_string()>
            "P(next word = "
            {quoted}
            ") = "
            <strong>{shown}</strong>
            " ("
            {ways}
            ", the word ended there)"
        </p>
    }
}
