//! The header: the app's name and, outside a study, the navigation and the model's state (the
//! backend line only on pages that use the model).

use leptos::prelude::*;
use leptos_router::components::A;

use crate::app::components::backend_status::BackendStatus;
use crate::app::state::{ModelState, use_runtime};

#[component]
pub fn Header(in_study: bool) -> impl IntoView {
    let ctx = use_runtime();
    // Links keep the page's query (e.g. a participant id or `?backend=cpu`).
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let link = move |path: &str| format!("{path}{search}");
    let location = leptos_router::hooks::use_location();
    view! {
        <header class="app-header">
            <h1>"clozelab"</h1>
            <Show when=move || !in_study>
                <p class="tagline">
                    "How does a language model's uncertainty compare with yours? Everything runs on your machine."
                </p>
                <nav class="app-nav" aria-label="Pages">
                    <A href=link("/")>"Play"</A>
                    <A href=link("/next-token")>"Next token"</A>
                    <A href=link("/model")>"Model"</A>
                    <A href=link("/analysis")>"Analysis"</A>
                    <A href=link("/study")>"Study"</A>
                </nav>
                <p class="model-badge" data-testid="model-badge" aria-live="polite">
                    {move || match ctx.model.get() {
                        ModelState::Empty => {
                            view! {
                                <span>"No model loaded: "</span>
                                <A href="/model">"load one"</A>
                            }
                                .into_any()
                        }
                        ModelState::Loading { step, .. } => {
                            view! { <span>{format!("Loading {step}…")}</span> }.into_any()
                        }
                        ModelState::Ready(s) => {
                            view! {
                                <span data-ready="true">{format!("Model: {}", s.name)}</span>
                                // Said on every page: a reader must never mistake noise for GPT-2.
                                {s
                                    .random_test_model
                                    .then(|| {
                                        view! {
                                            <span
                                                class="warning"
                                                data-testid="random-model-warning"
                                                role="alert"
                                            >
                                                "This is one of clozelab's random TEST models, not \
                                                    a trained one: its predictions are noise. Load \
                                                    GPT-2 or another real model (Model) to compare \
                                                    with people."
                                            </span>
                                        }
                                    })}
                            }
                                .into_any()
                        }
                        ModelState::Failed(_) => {
                            view! {
                                <span class="error">"The model failed to load (see Model)"</span>
                            }
                                .into_any()
                        }
                    }}
                </p>
                // Only where the model is used: not on the Study page, nor on the Analysis page
                // while no model is loaded (its figures come from files).
                <Show when=move || {
                    let path = location.pathname.get();
                    let model_ready = ctx.model.with(|m| matches!(m, ModelState::Ready(_)));
                    !(path.starts_with("/study") || (path.starts_with("/analysis") && !model_ready))
                }>
                    <BackendStatus />
                </Show>
            </Show>
        </header>
    }
}
