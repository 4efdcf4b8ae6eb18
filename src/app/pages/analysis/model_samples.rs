//! The loaded model as one more system on the Analysis page: it samples words for every context
//! of the dataset in the worker (progress, time left, stop); switching the model here and
//! sampling again adds another, a row of Table 1 each. Each context's result is
//! cached in IndexedDB under the model's weight hash and the settings, so a reload (or a second
//! run) goes on where it stopped instead of starting over.

use super::sample_contexts::{Run, sample_all};
use leptos::prelude::*;

use crate::app::components::model_switch::ModelSwitch;
use crate::app::components::run_stop::RunStop;
use crate::app::components::with_model::WithModel;
use crate::app::state::use_runtime;
use crate::data::provo::{ContextKey, SystemSamples};

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
            <ModelSwitch />
            <WithModel
                needs="Sampling the model's words for every context needs the model"
                render=move |m| {
                    view! {
                        <p>
                            {format!(
                                "{} samples words for every context in the worker (the first \
                                    complete word of each continuation, as the paper did); each \
                                    context is kept in this browser, so a reload goes on where \
                                    it stopped.",
                                m.name,
                            )}
                        </p>
                        <label>
                            "Samples per context "
                            <input
                                type="number"
                                min="1"
                                max="1000"
                                data-testid="model-samples-n"
                                prop:value=move || per_context.get().to_string()
                                on:input=move |ev| {
                                    per_context
                                        .set(
                                            event_target_value(&ev).parse().unwrap_or(40).clamp(1, 1000),
                                        )
                                }
                            />
                        </label>
                        " "
                        <label>
                            "Temperature "
                            <input
                                type="number"
                                min="0.1"
                                max="2"
                                step="0.1"
                                prop:value=move || temperature.get().to_string()
                                on:input=move |ev| {
                                    temperature
                                        .set(
                                            event_target_value(&ev)
                                                .parse()
                                                .unwrap_or(1.0f64)
                                                .clamp(0.1, 2.0),
                                        )
                                }
                            />
                        </label>
                        " "
                        <RunStop
                            label="Sample every context".to_string()
                            testid="model-samples-run"
                            running=sampling.pending()
                            on_run=Callback::new(move |()| {
                                sampling.dispatch(());
                            })
                            on_stop=Callback::new(move |()| stop())
                        />
                    }
                }
            />
            <p class="status" aria-live="polite" data-testid="model-samples-status">
                {move || run.status.get()}
            </p>
        </section>
    }
}
