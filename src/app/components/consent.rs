//! A study's consent and instructions, before the first trial of any game: agree, or decline.

use leptos::prelude::*;

use crate::app::texts::use_texts;
use crate::game::design::participant_texts::Say;

#[component]
pub fn ConsentScreen(
    consent: String,
    instructions: String,
    /// Runs when the participant agrees.
    on_accept: Callback<()>,
    /// Runs when the participant does not agree (offered only when there is a consent text).
    on_decline: Callback<()>,
) -> impl IntoView {
    let say = use_texts();
    let has_consent = !consent.trim().is_empty();
    let button = say.get(if has_consent {
        Say::ConsentAgree
    } else {
        Say::ConsentStart
    });
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
                            {say.get(Say::ConsentDecline)}
                        </button>
                    }
                })}
        </div>
    }
}
