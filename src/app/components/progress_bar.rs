//! How far a participant is, as a bar and in words, for every game.

use leptos::prelude::*;

use crate::app::texts::use_texts;
use crate::game::design::participant_texts::Say;

/// `done` of `total` answered, as a `<progress>` bar and its text (`counted` says what is
/// counted: [`Say::ProgressWords`], positions or rounds).
#[component]
pub fn ProgressBar(done: usize, total: usize, counted: Say) -> impl IntoView {
    let text = use_texts().fill(
        counted,
        &[("done", &done.to_string()), ("total", &total.to_string())],
    );
    view! {
        <div class="progress-bar" data-testid="progress-bar" data-done=done data-total=total>
            <progress value=done max=total.max(1) aria-label=text.clone()></progress>
            <span>{text}</span>
        </div>
    }
}
