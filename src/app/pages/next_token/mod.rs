//! Type a context, see GPT-2's next-token distribution (computed in the worker), and score a
//! word of one's own after it ([`word_probability`]).

mod word_probability;

use crate::app::components::model_switch::ModelSwitch;
use leptos::prelude::*;

use crate::app::components::distribution_chart::DistributionChart;
use crate::app::state::use_runtime;
use crate::app::worker_client::CallError;
use crate::runtime::distributions::TokenLogProb;
use crate::runtime::protocol::{NextTokensRequest, Reply, Request};
use word_probability::WordProbability;

const DEFAULT_TOP_K: usize = 15;

#[component]
pub fn NextTokenPage() -> impl IntoView {
    let ctx = use_runtime();
    let context = RwSignal::new(String::from("The quick brown fox"));
    let top_k = RwSignal::new(DEFAULT_TOP_K);
    // The request in flight: a newer one cancels it (the worker skips it if it has not started).
    let in_flight = StoredValue::new_local(None::<u64>);
    let prediction = LocalResource::new(move || {
        let (text, k) = (context.get(), top_k.get());
        let model = ctx.model_summary();
        async move {
            model.as_ref()?;
            let client = ctx.client();
            if let Some(old) = in_flight.get_value() {
                client.cancel(old);
            }
            let call = client.start(
                Request::NextTokens(NextTokensRequest {
                    context: text.clone(),
                    k,
                }),
                None,
            );
            in_flight.set_value(Some(call.id));
            Some(match call.reply().await {
                Reply::NextTokens(tokens) => Ok((text, tokens)),
                other => Err(CallError::from_reply(other)),
            })
        }
    });
    // The chart keeps the last result while a newer one is computed.
    let tokens = RwSignal::new(Vec::<TokenLogProb>::new());
    let shown_context = RwSignal::new(String::new());
    let status = RwSignal::new(String::new());
    Effect::new(move |_| match prediction.get() {
        None => status.set("Computing…".into()),
        Some(None) => status.set(String::new()),
        Some(Some(Ok((text, result)))) => {
            tokens.set(result);
            shown_context.set(text);
            status.set(String::new());
        }
        // A newer keystroke cancelled this one: its own result follows.
        Some(Some(Err(CallError::Cancelled))) => status.set(String::new()),
        Some(Some(Err(e))) => status.set(format!("Cannot predict: {e}")),
    });

    view! {
        <section class="next-token" aria-labelledby="next-token-heading">
            <h2 id="next-token-heading">"Next token"</h2>
            <ModelSwitch />
            <label for="context">"Context"</label>
            <textarea
                id="context"
                data-testid="context"
                rows="3"
                spellcheck="false"
                autocomplete="off"
                prop:value=move || context.get()
                on:input=move |ev| context.set(event_target_value(&ev))
            ></textarea>
            <label for="top-k">"Tokens shown"</label>
            <input
                id="top-k"
                type="number"
                min="1"
                max="100"
                prop:value=move || top_k.get().to_string()
                on:change=move |ev| {
                    if let Ok(k) = event_target_value(&ev).parse::<usize>() {
                        top_k.set(k.clamp(1, 100));
                    }
                }
            />
            <p class="status" aria-live="polite" data-testid="predict-status">
                {move || status.get()}
            </p>
            <Show
                when=move || ctx.model_summary().is_some()
                fallback=|| view! { <p>"Load a model to see its predictions."</p> }
            >
                <DistributionChart tokens=tokens.into() context=shown_context.into() />
                <WordProbability context=context.into() />
            </Show>
        </section>
    }
}
