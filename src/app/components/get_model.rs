//! The first screen's way to a model when none is loaded: download GPT-2 from the hub, use the
//! random test model where this server holds it, or choose files on the Model page.

use leptos::prelude::*;

use crate::app::load_model::{HUB_GPT2_URL, load_from_url};
use crate::app::state::{ModelState, use_runtime};

/// Where the app command writes the random test model (public/models/test/, served by Trunk).
pub const TEST_MODEL_URL: &str = "/models/test/";

#[component]
pub fn GetModel() -> impl IntoView {
    let ctx = use_runtime();
    let test_model_served =
        LocalResource::new(|| crate::app::web::local_model::is_served(TEST_MODEL_URL));
    let load = move |url: &'static str| {
        leptos::task::spawn_local(load_from_url(ctx, url.to_string()));
    };
    let needed = move || matches!(ctx.model.get(), ModelState::Empty | ModelState::Failed(_));
    view! {
        <Show when=needed>
            <section class="get-model" data-testid="get-model" aria-labelledby="get-model-heading">
                <h2 id="get-model-heading">"GPT-2 is not loaded"</h2>
                <p>
                    "The games compare your guesses with GPT-2's, which runs here, in your browser. Load it one of these ways:"
                </p>
                {move || {
                    ctx.model
                        .with(|m| match m {
                            ModelState::Failed(e) => Some(e.clone()),
                            _ => None,
                        })
                        .map(|e| {
                            view! {
                                <p class="error" role="alert">
                                    {format!("The last try failed: {e}")}
                                </p>
                            }
                        })
                }}
                <ul class="get-model-ways">
                    <li>
                        <button data-testid="get-model-hub" on:click=move |_| load(HUB_GPT2_URL)>
                            "Download GPT-2"
                        </button>
                        " from Hugging Face (about 550 MB, once: this browser keeps it)"
                    </li>
                    {move || {
                        test_model_served
                            .get()
                            .unwrap_or(false)
                            .then(|| {
                                view! {
                                    <li>
                                        <button
                                            data-testid="get-model-test"
                                            on:click=move |_| load(TEST_MODEL_URL)
                                        >
                                            "Use the test model"
                                        </button>
                                        " on this server: a random GPT-2 for trying the app (its guesses are noise)"
                                    </li>
                                }
                            })
                    }}
                    <li>
                        "or choose GPT-2's files on your computer on the "
                        <a href="/model">"Model"</a> " page"
                    </li>
                </ul>
            </section>
        </Show>
    }
}
