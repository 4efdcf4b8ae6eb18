//! First screen: type a context, see GPT-2's next-token distribution.

use crate::inference::TokenLogProb;
use leptos::prelude::*;

use crate::app::components::distribution_chart::DistributionChart;
use crate::app::state::use_runtime;
use crate::app::web::yield_to_browser;

const DEFAULT_TOP_K: usize = 15;

#[component]
pub fn NextTokenPage() -> impl IntoView {
    let ctx = use_runtime();
    let context = RwSignal::new(String::from("The quick brown fox"));
    let top_k = RwSignal::new(DEFAULT_TOP_K);
    let tokens = RwSignal::new(Vec::<TokenLogProb>::new());
    let shown_context = RwSignal::new(String::new());
    let status = RwSignal::new(String::new());
    // Each request gets a number; a result is shown only if no newer request started since.
    let generation = StoredValue::new(0u64);

    Effect::new(move |_| {
        let text = context.get();
        let k = top_k.get();
        ctx.engine_version.track();
        let Some(engine) = ctx.engine.get_value() else { return };
        generation.update_value(|g| *g += 1);
        let mine = generation.get_value();
        status.set("Computing…".into());
        leptos::task::spawn_local(async move {
            yield_to_browser().await;
            if generation.get_value() != mine {
                return;
            }
            match engine.next_tokens(&text, k).await {
                Ok(result) if generation.get_value() == mine => {
                    tokens.set(result);
                    shown_context.set(text);
                    status.set(String::new());
                }
                Ok(_) => {}
                Err(e) => status.set(format!("Cannot predict: {e}")),
            }
        });
    });

    view! {
        <section class="next-token" aria-labelledby="next-token-heading">
            <h2 id="next-token-heading">"Next token"</h2>
            <label for="context">"Context"</label>
            <textarea id="context" data-testid="context" rows="3" spellcheck="false" autocomplete="off"
                prop:value=move || context.get()
                on:input=move |ev| context.set(event_target_value(&ev))></textarea>
            <label for="top-k">"Tokens shown"</label>
            <input id="top-k" type="number" min="1" max="100" prop:value=move || top_k.get().to_string()
                on:change=move |ev| {
                    if let Ok(k) = event_target_value(&ev).parse::<usize>() {
                        top_k.set(k.clamp(1, 100));
                    }
                } />
            <p class="status" aria-live="polite" data-testid="predict-status">{move || status.get()}</p>
            <Show when=move || { ctx.engine_version.get() > 0 } fallback=|| view! { <p>"Load a model to see its predictions."</p> }>
                <DistributionChart tokens=tokens.into() context=shown_context.into()/>
            </Show>
        </section>
    }
}
