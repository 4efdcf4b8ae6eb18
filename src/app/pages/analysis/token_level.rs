//! Appendix D in the page: the loaded model's exact next-token distribution after every
//! context of the dataset against the humans' first tokens, computed in the worker (progress,
//! stop), as a row to read beside the word-level Table 1.

use leptos::prelude::*;

use crate::analysis::metrics::EceConvention;
use crate::analysis::token_level::TokenLevelRow;
use crate::app::inference::CallError;
use crate::app::state::use_runtime;
use crate::runtime::protocol::{Reply, Request};

#[component]
pub fn TokenLevel(ece: EceConvention) -> impl IntoView {
    let runtime = use_runtime();
    let progress = RwSignal::new(String::new());
    let call = StoredValue::new(None::<u64>);
    let run = Action::new_local(move |_: &()| async move {
        let on_progress = Box::new(move |reply: &Reply| {
            if let Reply::Progress(p) = reply {
                progress.set(format!(
                    "{} of {} contexts",
                    p.contexts_done, p.contexts_total
                ));
            }
        });
        let started = runtime
            .client()
            .start(Request::TokenLevel { ece }, Some(on_progress));
        call.set_value(Some(started.id));
        let reply = started.reply().await;
        call.set_value(None);
        progress.set(String::new());
        match reply {
            Reply::TokenLevel(Some(row)) => Ok(row),
            Reply::TokenLevel(None) => Err("no context has a response with a token".to_string()),
            other => Err(CallError::from_reply(other).to_string()),
        }
    });
    let stop = move || {
        if let Some(id) = call.get_value() {
            runtime.cancel(id);
        }
    };
    on_cleanup(stop);
    let result: Signal<Option<Result<TokenLevelRow, String>>> = run.value().into();
    view! {
        <section class="token-level" data-testid="token-level">
            <h3>"Token level (Appendix D)"</h3>
            {move || match runtime.model_summary() {
                None => view! { <p>"Load GPT-2 on the " <a href="/model">"Model"</a> " page to compare its exact next-token distribution with the first tokens of people's words."</p> }.into_any(),
                Some(m) => view! {
                    <p>{format!("{}'s exact next-token distribution after each context against the first GPT-2 token of each person's word: read it beside the word level in Table 1.", m.name)}</p>
                    <button data-testid="token-level-run" disabled=move || run.pending().get() on:click=move |_| { run.dispatch(()); }>"Compare at the token level"</button>
                    <button disabled=move || !run.pending().get() on:click=move |_| stop()>"Stop"</button>
                }.into_any(),
            }}
            <p class="status" aria-live="polite">{move || progress.get()}</p>
            {move || result.get().map(|r| match r {
                Ok(t) => view! {
                    <p data-testid="token-level-row">{format!(
                        "{} contexts: TVD {:.3}, ECE (original's first token) {:.3}, ECE (majority's first token) {:.3}, top-1 {:.3}",
                        t.contexts, t.tvd, t.ece_original, t.ece_majority, t.top1_accuracy
                    )}</p>
                }.into_any(),
                Err(e) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
            })}
        </section>
    }
}
