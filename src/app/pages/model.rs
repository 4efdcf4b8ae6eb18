//! Model: which backend runs GPT-2, and loading a model into the worker.

use leptos::prelude::*;

use crate::app::components::backend_status::BackendStatus;
use crate::app::components::model_loader::ModelLoader;

#[component]
pub fn ModelPage() -> impl IntoView {
    view! {
        <BackendStatus/>
        <ModelLoader/>
    }
}
