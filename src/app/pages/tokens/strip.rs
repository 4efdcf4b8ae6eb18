//! The passage so far, token by token: each token in its own box, whitespace visible (· ↵ ⇥).

use leptos::prelude::*;

use super::controller::use_token_game;
use crate::game::tokens::show_token;

#[component]
pub fn TokenStrip(
    passage: String,
    /// Tokens before this position are shown.
    position: u32,
) -> impl IntoView {
    let game = use_token_game();
    let shown: Vec<String> = game
        .with_tokens(&passage, |t| {
            t.bytes[..(position as usize).min(t.len())]
                .iter()
                .map(|b| show_token(b))
                .collect()
        })
        .unwrap_or_default();
    view! {
        <p
            class="token-strip"
            data-testid="token-strip"
            aria-label="The passage so far, one box per GPT-2 token"
        >
            {shown.into_iter().map(|t| view! { <span class="token">{t}</span> }).collect_view()}
            <span class="token next" aria-hidden="true">
                "?"
            </span>
        </p>
    }
}
