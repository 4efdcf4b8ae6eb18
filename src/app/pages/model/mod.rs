//! Model: loading a model into the worker (the header says which backend runs it), and how fast
//! it runs there ([`speed_check`]).

mod speed_check;

use leptos::prelude::*;

use crate::app::components::model_loader::ModelLoader;
use speed_check::SpeedCheck;

#[component]
pub fn ModelPage() -> impl IntoView {
    view! {
        <ModelLoader />
        <SpeedCheck />
    }
}
