//! A study's consent and instructions, before the first trial.

use leptos::prelude::*;

use super::controller::use_game;

#[component]
pub fn Consent() -> impl IntoView {
    let game = use_game();
    let (consent, instructions) = game
        .study
        .with_value(|s| (s.consent.clone(), s.instructions.clone()));
    let button = if consent.trim().is_empty() {
        "Start"
    } else {
        "I agree — start"
    };
    view! {
        <div class="consent" data-testid="consent">
            <p class="study-text">{consent}</p>
            <p class="study-text">{instructions}</p>
            <button data-testid="consent-accept" on:click=move |_| game.show_next()>{button}</button>
        </div>
    }
}
