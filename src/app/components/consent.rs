//! A study's consent and instructions, before the first trial of any game.

use leptos::prelude::*;

#[component]
pub fn ConsentScreen(
    consent: String,
    instructions: String,
    /// Runs when the participant agrees.
    on_accept: Callback<()>,
) -> impl IntoView {
    let button = if consent.trim().is_empty() {
        "Start"
    } else {
        "I agree — start"
    };
    view! {
        <div class="consent" data-testid="consent">
            <p class="study-text">{consent}</p>
            <p class="study-text">{instructions}</p>
            <button data-testid="consent-accept" on:click=move |_| on_accept.run(())>
                {button}
            </button>
        </div>
    }
}
