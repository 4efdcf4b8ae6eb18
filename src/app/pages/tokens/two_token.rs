//! A two-token round: the true next token and one GPT-2 sampled, in an order fixed by the seed;
//! the player says with one of 11 buttons how likely the left one is the original. When both
//! are the same token the round is answered 50 % by itself.

use leptos::prelude::*;

use super::controller::{LastRound, Stage, TokenGame, use_token_game};
use super::strip::TokenStrip;
use crate::analysis::perplexity::BUTTONS;
use crate::app::components::outcome::Outcome;
use crate::app::web::clock::{now_ms, timestamp};
use crate::game::design::participant_texts::Say;
use crate::game::tokens::schedule::Slot;
use crate::game::tokens::show_token;
use crate::game::tokens::two_token::{Answer, RoundSetup};
use crate::runtime::distributions::TokenStats;

/// The round once GPT-2 has drawn the other token.
#[derive(Clone, Debug, PartialEq)]
struct Drawn {
    stats: TokenStats,
    true_id: u32,
    true_bytes: Vec<u8>,
    other_id: u32,
    other_bytes: Vec<u8>,
    g_true: f64,
    g_other: f64,
    true_left: bool,
}

async fn draw(game: TokenGame, slot: Slot) -> Result<Drawn, String> {
    let (true_id, true_bytes) = game.true_token(&slot).ok_or("no token at this position")?;
    let setup = RoundSetup::for_slot(game.seed, &slot);
    let stats = game
        .stats(&slot, vec![true_id], Some(setup.sample_seed))
        .await
        .map_err(|e| e.to_string())?;
    let other = stats.sampled.clone().ok_or("GPT-2 drew no token")?;
    Ok(Drawn {
        g_true: stats.logprobs.first().map_or(0.0, |l| l.exp()),
        g_other: other.logprob.exp(),
        other_id: other.id,
        other_bytes: other.bytes,
        stats,
        true_id,
        true_bytes,
        true_left: setup.true_left,
    })
}

/// Draws the round; a round whose two tokens are the same is answered 50 % at once (`None`).
async fn prepare(game: TokenGame, slot: Slot, shown_ms: f64) -> Result<Option<Drawn>, String> {
    let drawn = draw(game, slot.clone()).await?;
    if drawn.true_id == drawn.other_id {
        answer(game, slot, drawn, 50, shown_ms).await;
        return Ok(None);
    }
    Ok(Some(drawn))
}

async fn answer(game: TokenGame, slot: Slot, drawn: Drawn, button: u8, shown_ms: f64) {
    game.stage.set(Stage::Scoring);
    let true_text = String::from_utf8_lossy(&drawn.true_bytes).into_owned();
    let other_text = String::from_utf8_lossy(&drawn.other_bytes).into_owned();
    let context = game.context_text(&slot);
    let participant = game.participant.get_value();
    let run = game.scope().run;
    let stamp = timestamp();
    let record = Answer {
        participant: &participant,
        run: &run,
        slot: &slot,
        context: &context,
        true_token: (drawn.true_id, &true_text),
        other_token: (drawn.other_id, &other_text),
        g_true: drawn.g_true,
        g_other: drawn.g_other,
        true_left: drawn.true_left,
        button,
        ms_to_answer: Some(now_ms() - shown_ms),
        timestamp: &stamp,
    }
    .record();
    let record = match record {
        Ok(r) => r,
        Err(e) => return game.fail(e.to_string()),
    };
    if let Err(e) = game.save(&slot, &record).await {
        return game.fail(
            game.say
                .fill(Say::AnswerNotSaved, &[("error", &e.to_string())]),
        );
    }
    game.two_token.update(|r| r.push(record.clone()));
    game.last
        .set(Some(LastRound::TwoToken(record, drawn.stats)));
    game.advance(&slot);
}

#[component]
pub fn TwoTokenRound(round: Slot, shown_ms: f64) -> impl IntoView {
    let slot = round;
    let game = use_token_game();
    let drawn = LocalResource::new({
        let slot = slot.clone();
        move || prepare(game, slot.clone(), shown_ms)
    });
    let position = slot.position;
    let round_number = slot.round;
    let practice = slot.practice;
    let say = game.say;
    view! {
        <div
            class="token-round"
            data-testid="two-token-round"
            data-position=position
            data-round=round_number
        >
            {practice.then(|| view! { <p class="practice">{say.get(Say::PracticeRound)}</p> })}
            <TokenStrip passage=slot.passage.clone() position />
            <Outcome
                result=move || drawn.get()
                pending=move || {
                    view! {
                        <p class="status" data-testid="drawing">
                            {say.get(Say::TwoTokenDrawing)}
                        </p>
                    }
                }
                failure="This round could not be prepared"
                render=move |drawn| match drawn {
                    None => view! { <p class="status">{say.get(Say::TwoTokenSame)}</p> }.into_any(),
                    Some(d) => {
                        let (left, right) = if d.true_left {
                            (&d.true_bytes, &d.other_bytes)
                        } else {
                            (&d.other_bytes, &d.true_bytes)
                        };
                        let (left, right) = (show_token(left), show_token(right));
                        let buttons = BUTTONS
                            .iter()
                            .map(|&b| {
                                let slot = slot.clone();
                                let d = d.clone();
                                view! {
                                    <button
                                        class="p-button"
                                        data-testid="p-button"
                                        data-percent=b
                                        on:click=move |_| leptos::task::spawn_local(
                                            answer(game, slot.clone(), d.clone(), b, shown_ms),
                                        )
                                    >
                                        {format!("{b} %")}
                                    </button>
                                }
                            })
                            .collect_view();
                        view! {
                            <p>{say.get(Say::TwoTokenQuestion)}</p>
                            <div class="token-pair">
                                <span class="token big" data-testid="left-token">
                                    {left}
                                </span>
                                <span class="versus">{say.get(Say::TokenOr)}</span>
                                <span class="token big" data-testid="right-token">
                                    {right}
                                </span>
                            </div>
                            <p>{say.get(Say::TwoTokenHowLikely)}</p>
                            <div
                                class="p-buttons"
                                role="group"
                                aria-label=say.get(Say::TwoTokenHowLikely)
                            >
                                {buttons}
                            </div>
                        }
                            .into_any()
                    }
                }
            />
        </div>
    }
}
