//! GPT-2 as one more system on the Analysis page: the loaded model samples words for every
//! context of the dataset in the worker (progress, time left, stop). Each context's result is
//! cached in IndexedDB under the model's weight hash and the settings, so a reload (or a second
//! run) goes on where it stopped instead of starting over.

use std::collections::BTreeMap;

use leptos::prelude::*;

use crate::app::state::{RuntimeContext, use_runtime};
use crate::app::web::idb::IdbStore;
use crate::app::worker_client::CallError;
use crate::data::provo::{ContextKey, Samples, SystemSamples};
use crate::estimators::decoding::DecodingStrategy;
use crate::estimators::sampler::DEFAULT_TOKEN_BUDGET;
use crate::rng::stable_hash;
use crate::runtime::protocol::{Reply, Request, SampleWordsRequest};

/// Where a run stands.
#[derive(Clone, Copy)]
struct Run {
    status: RwSignal<String>,
    stop: StoredValue<bool>,
    call: StoredValue<Option<u64>>,
}

fn minutes(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    format!("{}:{:02}", s / 60, s % 60)
}

/// Samples every context (cached ones are read back); `None` when stopped or failed (the
/// status says which).
async fn sample_all(
    runtime: RuntimeContext,
    run: Run,
    contexts: Vec<(ContextKey, String)>,
    per_context: usize,
    temperature: f64,
) -> Option<SystemSamples> {
    let decoding = match DecodingStrategy::new(temperature, None, None, None) {
        Ok(decoding) => decoding,
        Err(e) => {
            run.status.set(e.to_string());
            return None;
        }
    };
    let model = runtime.model_summary()?;
    let prefix = format!(
        "{}\u{1f}{per_context}\u{1f}{temperature}\u{1f}",
        model.weight_sha256
    );
    // Without IndexedDB the run still works; it just cannot be resumed.
    let store = IdbStore::open().await.ok();
    let mut cached: BTreeMap<String, Samples> = BTreeMap::new();
    if let Some(store) = &store {
        for (key, json) in store.cached(&prefix).await.unwrap_or_default() {
            if let Ok(samples) = serde_json::from_str(&json) {
                cached.insert(key, samples);
            }
        }
    }
    let started = js_sys::Date::now();
    let (mut computed, total) = (0usize, contexts.len());
    let mut out = BTreeMap::new();
    for (i, (key, context)) in contexts.into_iter().enumerate() {
        if run.stop.get_value() {
            run.status.set(format!("Stopped after {i} of {total} contexts; what was computed is kept: run again to go on."));
            return None;
        }
        let cache_key = format!(
            "{prefix}{}:{}\u{1f}{:016x}",
            key.0,
            key.1,
            stable_hash(&context)
        );
        if let Some(samples) = cached.remove(&cache_key) {
            out.insert(key, samples);
            continue;
        }
        let request = Request::SampleWords(SampleWordsRequest {
            context,
            samples: per_context,
            seed: stable_hash(&cache_key),
            decoding: decoding.clone(),
            token_budget: DEFAULT_TOKEN_BUDGET,
        });
        let call = runtime.client().start(request, None);
        run.call.set_value(Some(call.id));
        let reply = call.reply().await;
        run.call.set_value(None);
        let words = match reply {
            Reply::Words(w) => w,
            Reply::Cancelled => {
                run.status.set(format!("Stopped after {i} of {total} contexts; what was computed is kept: run again to go on."));
                return None;
            }
            other => {
                run.status.set(format!(
                    "GPT-2 could not sample context {}:{}: {}",
                    key.0,
                    key.1,
                    CallError::from_reply(other)
                ));
                return None;
            }
        };
        let samples = Samples {
            words: words
                .words
                .into_iter()
                .map(|(w, n)| (w, n as f64))
                .collect(),
            failed: words.failed as u64,
        };
        if let (Some(store), Ok(json)) = (&store, serde_json::to_string(&samples)) {
            // A failed write only costs a recomputation after a reload.
            let _ = store.cache_put(&cache_key, &json).await;
        }
        out.insert(key, samples);
        computed += 1;
        let per = (js_sys::Date::now() - started) / 1000.0 / computed as f64;
        run.status.set(format!(
            "{} of {total} contexts sampled; about {} left",
            i + 1,
            minutes(per * (total - i - 1) as f64)
        ));
    }
    run.status.set(format!(
        "All {total} contexts sampled ({computed} now, the rest from this browser's cache)."
    ));
    let name = if temperature == 1.0 {
        format!("{} (sampled here)", model.name)
    } else {
        format!("{} (T={temperature}, sampled here)", model.name)
    };
    Some((name, out))
}

/// Samples the loaded model on every context, then hands the new system to `on_done`.
#[component]
pub fn ModelSamples(
    contexts: Vec<(ContextKey, String)>,
    on_done: Callback<SystemSamples>,
    /// Kept by the page: the figures are redrawn when the new system arrives, this one too.
    status: RwSignal<String>,
) -> impl IntoView {
    let runtime = use_runtime();
    let run = Run {
        status,
        stop: StoredValue::new(false),
        call: StoredValue::new(None),
    };
    let per_context = RwSignal::new(40usize);
    let temperature = RwSignal::new(1.0f64);
    let contexts = StoredValue::new(contexts);
    let sampling = Action::new_local(move |_: &()| {
        run.stop.set_value(false);
        let job = sample_all(
            runtime,
            run,
            contexts.get_value(),
            per_context.get_untracked(),
            temperature.get_untracked(),
        );
        async move {
            if let Some(system) = job.await {
                on_done.run(system);
            }
        }
    });
    let stop = move || {
        run.stop.set_value(true);
        if let Some(id) = run.call.get_value() {
            runtime.cancel(id);
        }
    };
    // Leaving the page stops the worker's sampling.
    on_cleanup(stop);
    view! {
        <section class="model-samples" data-testid="model-samples">
            <h3>"The loaded model as a system"</h3>
            {move || match runtime.model_summary() {
                None => view! { <p>"Load GPT-2 on the " <a href="/model">"Model"</a> " page to sample its words for every context here."</p> }.into_any(),
                Some(m) => view! {
                    <p>{format!("{} samples words for every context in the worker (the first complete word of each continuation, as the paper did); each context is kept in this browser, so a reload goes on where it stopped.", m.name)}</p>
                    <label>"Samples per context " <input type="number" min="1" max="1000" data-testid="model-samples-n" prop:value=move || per_context.get().to_string()
                        on:input=move |ev| per_context.set(event_target_value(&ev).parse().unwrap_or(40).clamp(1, 1000))/></label>
                    " "
                    <label>"Temperature " <input type="number" min="0.1" max="2" step="0.1" prop:value=move || temperature.get().to_string()
                        on:input=move |ev| temperature.set(event_target_value(&ev).parse().unwrap_or(1.0f64).clamp(0.1, 2.0))/></label>
                    " "
                    <button data-testid="model-samples-run" disabled=move || sampling.pending().get() on:click=move |_| { sampling.dispatch(()); }>"Sample every context"</button>
                    <button data-testid="model-samples-stop" disabled=move || !sampling.pending().get() on:click=move |_| stop()>"Stop"</button>
                }.into_any(),
            }}
            <p class="status" aria-live="polite" data-testid="model-samples-status">{move || run.status.get()}</p>
        </section>
    }
}
