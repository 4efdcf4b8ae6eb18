//! What needs the loaded model: drawn with the model's summary once the worker holds one, and
//! until then a line that says what it needs and links to the Model page.

use leptos::prelude::*;

use crate::app::state::use_runtime;
use crate::runtime::protocol::ModelSummary;

/// `render(model)` while a model is loaded; otherwise "`needs`: load a model (GPT-2 or another) on the Model page."
#[component]
pub fn WithModel<V>(
    /// What the model is needed for, as a sentence start ("The probes sample the model").
    needs: &'static str,
    render: impl Fn(ModelSummary) -> V + Send + Sync + 'static,
) -> impl IntoView
where
    V: IntoView + 'static,
{
    let runtime = use_runtime();
    move || match runtime.model_summary() {
        None => view! {
            <p>
                {needs} ": load a model (GPT-2 or another) on the " <a href="/model">"Model"</a>
                " page."
            </p>
        }
        .into_any(),
        Some(model) => render(model).into_any(),
    }
}
