//! The browser app (Leptos, client-side rendered). Thin: it wires signals to the core.

mod components;
mod pages;
mod state;
mod web;

use leptos::prelude::*;

use components::backend_status::BackendStatus;
use components::model_loader::ModelLoader;
use pages::game::GamePage;
use pages::next_token::NextTokenPage;
use state::provide_runtime_context;

/// Mounts the app on `<body>`.
pub fn mount() {
    // Rust panics show up as readable console errors instead of a bare "unreachable".
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

#[component]
fn App() -> impl IntoView {
    provide_runtime_context();
    // A participant in a study sees the study only; everyone else gets the full lab.
    let in_study = web::query_param("study").is_some();
    view! {
        <header class="app-header">
            <h1>"clozelab"</h1>
            <Show when=move || !in_study>
                <p class="tagline">"How does GPT-2's uncertainty compare with yours? Everything runs on your machine."</p>
                <BackendStatus/>
            </Show>
        </header>
        <main>
            <GamePage/>
            <Show when=move || !in_study>
                <ModelLoader/>
                <NextTokenPage/>
            </Show>
        </main>
    }
}
