//! One trial: the context so far, the guess box, and (in play mode) the feedback after it.

use leptos::html::{Button, Input};
use leptos::prelude::*;

use crate::app::components::progress_bar::ProgressBar;
use crate::game::design::participant_texts::Say;

use super::controller::{Phase, use_game};
use super::feedback::Feedback;

#[component]
pub fn TrialView() -> impl IntoView {
    let game = use_game();
    let trial = game.trial.get_untracked();
    let entry = RwSignal::new(String::new());
    let input_ref = NodeRef::<Input>::new();
    let next_ref = NodeRef::<Button>::new();
    let playing = move || game.phase.get() == Phase::Playing;
    // The input has the focus while guessing; in feedback the Next button has it, so Enter (a
    // button's own key) moves on: keyboard-only play.
    Effect::new(move |_| {
        if playing() {
            if let Some(input) = input_ref.get() {
                // Safari's non-standard switch (not in leptos' attribute list).
                let _ = input.set_attribute("autocorrect", "off");
                let _ = input.focus();
            }
        } else if let Some(button) = next_ref.get() {
            let _ = button.focus();
        }
    });
    let submit = move || {
        if !game.submit.pending().get_untracked() {
            game.submit.dispatch(entry.get_untracked());
        }
    };
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key().chars().count() == 1 {
            game.key_typed();
        }
        if ev.key() == "Enter" {
            ev.prevent_default();
            submit();
        }
    };
    let (done, total) = game.progress();
    let practice = trial.as_ref().is_some_and(|t| t.practice);
    let say = game.say;
    view! {
        <p class="game-progress" data-testid="game-progress">
            <ProgressBar done total counted=Say::ProgressWords />
            {practice.then(|| say.get(Say::Practice))}
        </p>
        <p
            class="passage"
            data-testid="passage-context"
            data-passage=trial.as_ref().map(|t| t.passage_id.clone()).unwrap_or_default()
            data-position=trial.as_ref().map(|t| t.position.to_string()).unwrap_or_default()
        >
            {trial.as_ref().map(|t| t.context.clone()).unwrap_or_default()}
            {move || {
                game.reveal
                    .get()
                    .filter(|_| !playing())
                    .map(|r| {
                        view! {
                            " "
                            <mark class="true-word">{r.true_word}</mark>
                        }
                    })
            }}
        </p>
        <Show when=playing>
            <label for="guess">{say.get(Say::GuessLabel)}</label>
            <input
                id="guess"
                data-testid="guess"
                node_ref=input_ref
                type="text"
                inputmode="text"
                autocomplete="off"
                autocapitalize="off"
                spellcheck="false"
                maxlength="60"
                prop:value=move || entry.get()
                on:input=move |ev| entry.set(event_target_value(&ev))
                prop:disabled=move || game.submit.pending().get()
                on:keydown=on_keydown
            />
            <button data-testid="submit-guess" on:click=move |_| submit()>
                {say.get(Say::GuessSubmit)}
            </button>
            <p class="error" aria-live="assertive" data-testid="entry-error">
                {move || game.entry_error.get()}
            </p>
        </Show>
        <Show when=move || !playing()>
            <Feedback />
            <button data-testid="next-context" node_ref=next_ref on:click=move |_| game.show_next()>
                {say.get(Say::NextContext)}
            </button>
        </Show>
    }
}
