//! The end of a game: thanks, the completion code, and what happened to the responses.

use leptos::prelude::*;

use super::controller::use_game;

#[component]
pub fn Completion() -> impl IntoView {
    let game = use_game();
    let code = game.study.with_value(|s| s.completion_code.clone());
    let experiment = game.experiment.get_untracked();
    view! {
        <div class="complete" data-testid="complete">
            <p>{if experiment { "Thank you — you have finished." } else { "You have finished this passage." }}</p>
            {(!code.is_empty()).then(|| view! { <p>"Completion code: " <strong data-testid="completion-code">{code}</strong></p> })}
            <p aria-live="polite" data-testid="redirect-status">{move || game.redirect_status.get()}</p>
            {(!experiment).then(|| view! { <a href="/" data-testid="back-to-passages">"Choose another passage"</a> })}
        </div>
    }
}
