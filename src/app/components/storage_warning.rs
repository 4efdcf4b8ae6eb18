//! What the page says about where the answers are kept when it is not the browser's lasting
//! storage (a save failed, or only the page or the study's server holds them); nothing
//! otherwise.

use leptos::prelude::*;

#[component]
pub fn StorageWarning(#[prop(into)] message: Signal<Option<String>>) -> impl IntoView {
    move || {
        message.get().map(|m| {
            view! {
                <p class="warning" role="alert" data-testid="storage-problem">
                    {m}
                </p>
            }
        })
    }
}
