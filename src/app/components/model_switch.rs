//! Switching the loaded model where it is used (the Model page, Next token, the Analysis page):
//! a folder URL, or a Hugging Face model and revision typed as `owner/name@revision`, with the
//! models this browser keeps offered as suggestions. `?hub=URL` names another hub endpoint (a
//! mirror), as `HF_ENDPOINT` does for Hugging Face's own tools.

use leptos::prelude::*;

use crate::app::load_model::switch_model;
use crate::app::state::{ModelState, use_runtime};
use crate::app::web::query_param;
use crate::runtime::model_source::{HUB_ENDPOINT, folder_url};

#[component]
pub fn ModelSwitch(
    /// What the field holds at first.
    #[prop(into, optional)]
    initial: String,
) -> impl IntoView {
    let ctx = use_runtime();
    let typed = RwSignal::new(initial);
    let problem = RwSignal::new(None::<String>);
    // Read again when another model is ready (a model just downloaded is kept too), not on
    // each of a download's progress updates.
    let ready = Memo::new(move |_| ctx.model.with(|m| m.summary().map(|s| s.name.clone())));
    let kept = LocalResource::new(move || {
        ready.track();
        crate::app::web::kept_models::kept_model_folders()
    });
    let busy = move || matches!(ctx.model.get(), ModelState::Loading { .. });
    let hub = query_param("hub").unwrap_or_else(|| HUB_ENDPOINT.to_string());
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match folder_url(&typed.get_untracked(), &hub) {
            Ok(url) => {
                problem.set(None);
                leptos::task::spawn_local(async move {
                    if let Some(error) = switch_model(ctx, url).await {
                        problem.set(Some(format!(
                            "Could not load it, so the model loaded before stays: {error}"
                        )));
                    }
                });
            }
            Err(e) => problem.set(Some(e.to_string())),
        }
    };
    view! {
        <form class="model-switch" data-testid="model-switch" on:submit=submit>
            <label for="model-source">
                "Model: a folder URL, or a Hugging Face model as owner/name@revision"
            </label>
            <div class="model-switch-row">
                <input
                    id="model-source"
                    data-testid="model-source"
                    list="kept-models"
                    placeholder="EleutherAI/pythia-70m@step1000"
                    autocomplete="off"
                    prop:value=move || typed.get()
                    on:input=move |ev| typed.set(event_target_value(&ev))
                />
                <button type="submit" disabled=busy data-testid="model-switch-load">
                    "Load"
                </button>
            </div>
            <datalist id="kept-models">
                {move || {
                    kept.get()
                        .unwrap_or_default()
                        .into_iter()
                        .map(|url| view! { <option value=url></option> })
                        .collect_view()
                }}
            </datalist>
            {move || {
                problem
                    .get()
                    .map(|p| {
                        view! {
                            <p class="error" role="alert" data-testid="model-switch-problem">
                                {p}
                            </p>
                        }
                    })
            }}
        </form>
    }
}
