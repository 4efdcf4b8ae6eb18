//! Model: loading a model into the worker (the header says which backend runs it).

use leptos::prelude::*;

use crate::app::components::model_loader::ModelLoader;

#[component]
pub fn ModelPage() -> impl IntoView {
    view! { <ModelLoader /> }
}
