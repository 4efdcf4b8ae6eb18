//! How far a participant is, as a bar and in words, for every game.

use leptos::prelude::*;

/// `done` of `total` answered, as a `<progress>` bar and its text (`unit` names what is
/// counted, e.g. "words").
#[component]
pub fn ProgressBar(done: usize, total: usize, unit: &'static str) -> impl IntoView {
    let text = format!("{done} of {total} {unit} answered");
    view! {
        <div class="progress-bar" data-testid="progress-bar" data-done=done data-total=total>
            <progress value=done max=total.max(1) aria-label=text.clone()></progress>
            <span>{text}</span>
        </div>
    }
}
