//! The browser app (Leptos, client-side rendered). Thin: pages per route wire signals to the
//! core; GPT-2 runs in the inference worker ([`worker`]), reached through [`worker_client`].

mod components;
mod data;
mod load_model;
mod pages;
mod state;
mod stoppable_call;
mod texts;
mod web;
pub mod worker;
mod worker_client;

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;

use components::header::Header;
use data::provide_lab_data;
use pages::analysis::AnalysisPage;
use pages::model::ModelPage;
use pages::next_token::NextTokenPage;
use pages::play::{PlayHome, PlayPassage};
use pages::study::StudyPage;
use pages::tokens::TokenGamePage;
use state::provide_runtime_context;

/// Runs the static constructors (cubecl's `inventory` registrations) once. wasm-ld wraps every
/// export of a binary in a call to them unless the program calls them itself; wrapped, they ran
/// again on every call from JavaScript (each event, each worker message): 200–500 ms tasks.
pub fn run_static_constructors_once() {
    unsafe extern "C" {
        fn __wasm_call_ctors();
    }
    // SAFETY: the linker-synthesised constructor list, run once before anything else.
    unsafe { __wasm_call_ctors() }
}

/// Mounts the app on `<body>`.
pub fn mount() {
    run_static_constructors_once();
    // Rust panics show up as readable console errors instead of a bare "unreachable".
    console_error_panic_hook::set_once();
    // A load the isolation script throws away (it reloads with the service worker's headers)
    // never starts the app.
    wasm_bindgen_futures::spawn_local(async {
        web::isolation::settled().await;
        leptos::mount::mount_to_body(App);
    });
}

#[component]
fn App() -> impl IntoView {
    // A participant in a study sees the study only; everyone else gets the full lab.
    let in_jatos = web::jatos_client::run().is_some();
    let in_study = in_jatos || web::query_param("study").is_some();
    let runtime = provide_runtime_context(in_study);
    if !in_study {
        leptos::task::spawn_local(load_model::load_initial_model(runtime));
    }
    // Results an earlier visit could not deliver go out again now (study or not), and whatever
    // is pending whenever the page is hidden or left, or the browser is back online.
    web::outbox_flush::flush_now_and_on_leave_or_online();
    provide_lab_data();
    view! {
        <Router>
            <Header in_study />
            <main>
                // In JATOS the page sits at …/publix/<run>/<component>/index.html: the study.
                <Routes fallback=move || {
                    if in_jatos {
                        view! { <PlayHome /> }.into_any()
                    } else {
                        view! {
                            <p>"There is no such page. " <a href="/">"Back to the passages"</a></p>
                        }
                            .into_any()
                    }
                }>
                    <Route path=path!("/") view=PlayHome />
                    <Route path=path!("/play/:passage") view=PlayPassage />
                    <Route path=path!("/tokens/:game/:passage") view=TokenGamePage />
                    <Route path=path!("/next-token") view=NextTokenPage />
                    <Route path=path!("/model") view=ModelPage />
                    <Route path=path!("/analysis") view=AnalysisPage />
                    <Route path=path!("/study") view=StudyPage />
                </Routes>
            </main>
        </Router>
    }
}
