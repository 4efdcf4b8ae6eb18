//! The loaded model's surprisal of every target word, computed in the worker (progress, stop)
//! and added to the trial table's surprisal columns: the predictors a reading-time analysis
//! regresses on, beside people's answers.

use leptos::prelude::*;

use crate::analysis::predictors::ModelPredictors;
use crate::app::components::run_stop::RunStop;
use crate::app::components::with_model::WithModel;
use crate::app::state::use_runtime;
use crate::app::stoppable_call::StoppableCall;
use crate::app::worker_client::CallError;
use crate::estimators::progress::Progress;
use crate::runtime::protocol::{Reply, Request, TargetSurprisalRequest};

/// One line per model whose surprisal is in the table: how many targets, and the means.
fn summary((model, by_context): &ModelPredictors) -> String {
    let n = by_context.len();
    let mean = |values: Vec<f64>| {
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    let canonical = mean(by_context.values().map(|p| p.surprisal_bits).collect());
    let every = mean(
        by_context
            .values()
            .filter_map(|p| p.surprisal_all_segmentations_bits)
            .collect(),
    );
    let bits = |x: Option<f64>| x.map_or("—".to_string(), |x| format!("{x:.2}"));
    format!(
        "{model}: {n} target words in trials.csv (surprisal_bits, mean {} bits; \
         surprisal_all_segmentations_bits, mean {} bits).",
        bits(canonical),
        bits(every)
    )
}

#[component]
pub fn ModelSurprisal(
    /// The models whose surprisal the trial table has now (kept by the page).
    #[prop(into)]
    have: Signal<Vec<ModelPredictors>>,
    on_done: Callback<ModelPredictors>,
    /// Kept by the page: the panel is drawn again when the analysis comes back with the new
    /// columns, and what the run said stays.
    status: RwSignal<String>,
) -> impl IntoView {
    let runtime = use_runtime();
    let call = StoppableCall::new();
    let run = Action::new_local(move |_: &()| async move {
        // The short name (`test`, `pythia-70m@step1000`), as `clozelab results --model` names
        // a folder in the same column.
        let model = runtime
            .model_summary()
            .map(|m| crate::runtime::model_source::short_name(&m.name))
            .unwrap_or_else(|| "GPT-2".into());
        let request = Request::TargetSurprisal(TargetSurprisalRequest { model });
        let describe =
            |p: &Progress| format!("{} of {} target words", p.contexts_done, p.contexts_total);
        match call.run(request, describe).await {
            Reply::Predictors { predictors, notes } => {
                status.set(notes.join(" "));
                on_done.run(predictors);
            }
            other => status.set(CallError::from_reply(other).to_string()),
        }
    });
    view! {
        <section class="model-surprisal" data-testid="model-surprisal">
            <h3>"Surprisal of each target word"</h3>
            <WithModel
                needs="The model's surprisal of each target word needs the model"
                render=move |m| {
                    view! {
                        <p>
                            {format!(
                                "{}'s surprisal of every context's target word, two ways: the \
                                    canonical tokens with the beginning-of-word correction (as \
                                    minicons and recent reading-time studies compute it) and \
                                    over every tokenisation of the word (as the cloze \
                                    comparisons count words). Both go into trials.csv.",
                                m.name,
                            )}
                        </p>
                        <RunStop
                            label="Add the model's surprisal".to_string()
                            testid="model-surprisal-run"
                            running=run.pending()
                            on_run=Callback::new(move |()| {
                                run.dispatch(());
                            })
                            on_stop=Callback::new(move |()| call.stop())
                        />
                    }
                }
            />
            <p class="status" aria-live="polite" data-testid="model-surprisal-status">
                {move || {
                    let progress = call.progress.get();
                    if run.pending().get() { progress } else { status.get() }
                }}
            </p>
            <ul data-testid="model-surprisal-summary">
                {move || {
                    have.get().iter().map(|p| view! { <li>{summary(p)}</li> }).collect_view()
                }}
            </ul>
        </section>
    }
}
