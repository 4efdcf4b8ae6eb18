//! What went wrong, as an alert, while there is something to say (a file that could not be
//! read, a download that failed); nothing otherwise.

use leptos::prelude::*;

#[component]
pub fn ErrorNote(#[prop(into)] message: Signal<Option<String>>) -> impl IntoView {
    move || {
        message.get().map(|m| {
            view! {
                <p class="error" role="alert">
                    {m}
                </p>
            }
        })
    }
}
