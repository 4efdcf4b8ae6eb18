//! A study's consent and instructions, before the first trial of any game: agree, or decline.

use leptos::prelude::*;

#[component]
pub fn ConsentScreen(
    consent: String,
    instructions: String,
    /// Runs when the participant agrees.
    on_accept: Callback<()>,
    /// Runs when the participant does not agree (offered only when there is a consent text).
    on_decline: Callback<()>,
) -> impl IntoView {
    let has_consent = !consent.trim().is_empty();
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
            {has_consent
                .then(|| {
                    view! {
                        <button data-testid="consent-decline" on:click=move |_| on_decline.run(())>
                            "I do not agree"
                        </button>
                    }
                })}
        </div>
    }
}
