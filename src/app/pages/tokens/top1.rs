//! A top-1 round: type the one token you think comes next. Says live whether the text is a
//! single GPT-2 token (as typed, or with a leading space); space and newline have buttons.

use leptos::prelude::*;

use super::controller::{LastRound, Stage, TokenGame, use_token_game};
use super::strip::TokenStrip;
use crate::app::web::clock::{now_ms, timestamp};
use crate::app::worker_client::CallError;
use crate::game::design::participant_texts::Say;
use crate::game::tokens::schedule::Slot;
use crate::game::tokens::show_token;
use crate::game::tokens::top1::{Top1Record, is_correct};
use crate::runtime::protocol::{Reply, Request, TokenizeRequest};

/// One token's id when `text` is exactly one GPT-2 token.
async fn one_token(game: TokenGame, text: String) -> Option<u32> {
    if text.is_empty() {
        return None;
    }
    match game
        .runtime
        .client()
        .call(Request::Tokenize(TokenizeRequest { text }))
        .await
    {
        Reply::Tokens(t) if t.len() == 1 => Some(t[0].0),
        _ => None,
    }
}

async fn submit(game: TokenGame, slot: Slot, shown_ms: f64, guess: String) {
    let ms = now_ms() - shown_ms;
    let Some((true_id, true_bytes)) = game.true_token(&slot) else {
        return game.fail("the passage has no token at this position".into());
    };
    game.stage.set(Stage::Scoring);
    let guess_id = one_token(game, guess.clone()).await;
    let asked: Vec<u32> = std::iter::once(true_id).chain(guess_id).collect();
    let stats = match game.stats(&slot, asked, None).await {
        Ok(s) => s,
        Err(CallError::Cancelled) => return,
        Err(e) => return game.fail(format!("GPT-2 could not score this round: {e}")),
    };
    let true_text = String::from_utf8_lossy(&true_bytes).into_owned();
    let record = Top1Record {
        participant: game.participant.get_value(),
        passage: slot.passage.clone(),
        position: slot.position,
        context: game.context_text(&slot),
        true_token: true_id,
        true_token_text: true_text.clone(),
        correct: is_correct(&guess, guess_id, true_id, &true_text),
        guess,
        guess_token: guess_id,
        gpt2_top1: stats.top.first().map(|t| t.id),
        g_true: stats.logprobs.first().map(|l| l.exp()),
        g_guess: stats.logprobs.get(1).map(|l| l.exp()),
        guess_rank: stats.ranks.get(1).copied(),
        ms_to_answer: Some(ms),
        timestamp: timestamp(),
        practice: slot.practice,
        run: game.scope().run,
    };
    if let Err(e) = game.save(&slot, &record).await {
        return game.fail(
            game.say
                .fill(Say::AnswerNotSaved, &[("error", &e.to_string())]),
        );
    }
    game.top1.update(|r| r.push(record.clone()));
    game.last.set(Some(LastRound::Top1(record, stats)));
    game.advance(&slot);
}

#[component]
pub fn Top1Round(round: Slot, shown_ms: f64) -> impl IntoView {
    let slot = round;
    let game = use_token_game();
    let guess = RwSignal::new(String::new());
    // Live check: (as typed, with a leading space) are single tokens.
    let check = LocalResource::new(move || {
        let text = guess.get();
        async move {
            let spaced = if text.starts_with(' ') {
                None
            } else {
                one_token(game, format!(" {text}")).await
            };
            (one_token(game, text).await, spaced)
        }
    });
    let position = slot.position;
    let practice = slot.practice;
    let go = {
        let slot = slot.clone();
        move || {
            let text = guess.get_untracked();
            if !text.is_empty() {
                leptos::task::spawn_local(submit(game, slot.clone(), shown_ms, text));
            }
        }
    };
    let go_key = go.clone();
    let say = game.say;
    view! {
        <div class="token-round" data-testid="top1-round" data-position=position>
            {practice.then(|| view! { <p class="practice">{say.get(Say::PracticeRound)}</p> })}
            <TokenStrip passage=slot.passage.clone() position />
            <label for="token-guess">{say.get(Say::TokenGuessLabel)}</label>
            <textarea
                id="token-guess"
                rows="1"
                data-testid="token-guess"
                autofocus
                prop:value=move || guess.get()
                on:input=move |ev| guess.set(event_target_value(&ev))
                on:keydown=move |ev: web_sys::KeyboardEvent| {
                    if ev.key() == "Enter" {
                        ev.prevent_default();
                        go_key();
                    }
                }
            ></textarea>
            <div class="whitespace-buttons">
                <button type="button" on:click=move |_| guess.update(|g| g.push(' '))>
                    {say.get(Say::TokenSpace)}
                </button>
                <button type="button" on:click=move |_| guess.update(|g| g.push('\n'))>
                    {say.get(Say::TokenNewline)}
                </button>
                <button type="button" on:click=move |_| guess.update(|g| g.push('\t'))>
                    {say.get(Say::TokenTab)}
                </button>
                <button type="button" on:click=move |_| guess.set(String::new())>
                    {say.get(Say::TokenClear)}
                </button>
            </div>
            <p class="token-check" data-testid="token-check" aria-live="polite">
                {move || {
                    let text = guess.get();
                    if text.is_empty() {
                        return say.get(Say::TokenHint);
                    }
                    let shown = show_token(text.as_bytes());
                    let verdict = match check.get() {
                        None => return format!("“{shown}” …"),
                        Some((Some(_), Some(_))) => Say::TokenIsOneBoth,
                        Some((Some(_), None)) => Say::TokenIsOne,
                        Some((None, Some(_))) => Say::TokenNeedsSpace,
                        Some((None, None)) => Say::TokenNotOne,
                    };
                    say.fill(verdict, &[("token", &shown)])
                }}
            </p>
            <button class="primary" data-testid="token-submit" on:click=move |_| go()>
                {say.get(Say::TokenGuess)}
            </button>
        </div>
    }
}
