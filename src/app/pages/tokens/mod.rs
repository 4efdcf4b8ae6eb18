//! The next-token games (Redwood Research) beside the next-word game: "/tokens/top1/:passage"
//! and "/tokens/two-token/:passage" in play mode, with feedback, practice rounds, resume and
//! exports; and the chooser on the first screen.

mod controller;
mod exports;
mod feedback;
mod imported;
mod results;
mod storage;
mod strip;
mod top1;
mod two_token;

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::app::data::use_lab_data;
use crate::app::pages::play::controller::local_participant_id;
use crate::app::state::{ModelState, use_runtime};
use crate::game::study::GameKind;
use controller::{Stage, TokenGame, game_name};
use exports::TokenExports;
use feedback::{RoundFeedback, RunningScore};
pub use imported::ImportedTokenResults;
use results::PerplexityResults;
use top1::Top1Round;
use two_token::TwoTokenRound;

fn game_from_path(name: &str) -> Option<GameKind> {
    match name {
        "top1" => Some(GameKind::Top1),
        "two-token" => Some(GameKind::TwoToken),
        _ => None,
    }
}

/// The two games on the first screen, each with the passages to play.
#[component]
pub fn TokenGameChooser() -> impl IntoView {
    let lab = use_lab_data();
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let list = move |game: GameKind| {
        let search = search.clone();
        lab.passages
            .get()
            .into_iter()
            .map(|p| {
                let href = format!(
                    "/tokens/{}/{}{search}",
                    game_name(game),
                    String::from(js_sys::encode_uri_component(&p.id))
                );
                view! { <li><a href=href data-testid=format!("{}-passage", game_name(game))>{p.title.clone()}</a></li> }
            })
            .collect_view()
    };
    let two = list.clone();
    view! {
        <section class="token-games" aria-labelledby="token-games-heading">
            <h2 id="token-games-heading">"Guess the next token"</h2>
            <div class="game-cards">
                <div class="game-card">
                    <h3>"Top-1 token"</h3>
                    <p>"See a passage token by token, as GPT-2 does, and type the one token you think comes next. Your accuracy is compared with GPT-2's."</p>
                    <ul class="compact">{move || list(GameKind::Top1)}</ul>
                </div>
                <div class="game-card">
                    <h3>"Two tokens"</h3>
                    <p>"Which of two tokens came next: the original, or one GPT-2 made up? Answer with a probability; your answers estimate your perplexity."</p>
                    <ul class="compact">{move || two(GameKind::TwoToken)}</ul>
                </div>
            </div>
        </section>
    }
}

/// "/tokens/:game/:passage".
#[component]
pub fn TokenGamePage() -> impl IntoView {
    let params = use_params_map();
    let lab = use_lab_data();
    let game = params.with_untracked(|p| p.get("game").and_then(|g| game_from_path(&g)));
    let id = params.with_untracked(|p| p.get("passage").unwrap_or_default());
    let passage = lab
        .passages
        .get_untracked()
        .into_iter()
        .find(|p| p.id == id);
    let (Some(game), Some(passage)) = (game, passage) else {
        return view! { <p class="error">"There is no such game or passage. " <a href="/">"Back to the games"</a></p> }.into_any();
    };
    let runtime = use_runtime();
    let title = passage.title.clone();
    // The same player id as the next-word game (`?PROLIFIC_PID=` or this browser's own).
    let local = local_participant_id();
    let participant = crate::game::study::StudyConfig::default_play()
        .participant_id(&crate::app::web::query_params(), &local)
        .unwrap_or(local);
    let tg = TokenGame::provide(game, passage, participant, runtime);
    // Starts once a model is ready (the worker tokenises the passage too).
    let started = StoredValue::new(false);
    Effect::new(move |_| {
        if matches!(runtime.model.get(), ModelState::Ready(_)) && !started.get_value() {
            started.set_value(true);
            leptos::task::spawn_local(tg.prepare());
        }
    });
    let heading = match game {
        GameKind::TwoToken => "Two tokens",
        _ => "Top-1 token",
    };
    view! {
        <section class="game token-game" data-testid="token-game" data-game=game_name(game)>
            <h2>{format!("{heading}: {title}")}</h2>
            {move || match tg.stage.get() {
                Stage::Preparing(message) => {
                    let no_model = matches!(runtime.model.get(), ModelState::Empty | ModelState::Failed(_));
                    view! {
                        <p class="status">{message}</p>
                        {no_model.then(|| view! { <p>"This game needs GPT-2: load it on the " <a href="/model">"Model"</a> " page."</p> })}
                    }.into_any()
                }
                Stage::Playing { slot, shown_ms } => match game {
                    GameKind::TwoToken => view! { <TwoTokenRound round=slot shown_ms/> }.into_any(),
                    _ => view! { <Top1Round round=slot shown_ms/> }.into_any(),
                },
                Stage::Scoring => view! { <p class="status" data-testid="scoring">"Saving and scoring…"</p> }.into_any(),
                Stage::Finished => view! { <p class="done" data-testid="token-game-done">"You have played every position of this passage."</p> }.into_any(),
                Stage::Failed(e) => view! { <p class="error" role="alert" data-testid="game-error">{e}</p> }.into_any(),
            }}
            <p class="progress" data-testid="token-progress">{move || tg.schedule.with(|s| s.as_ref().map(|s| {
                let (done, total) = s.progress();
                format!("{done} of {total} positions answered")
            }))}</p>
            <RunningScore/>
            <RoundFeedback/>
            {(game == GameKind::TwoToken).then(|| view! { <PerplexityResults/> })}
            <TokenExports/>
        </section>
    }
    .into_any()
}
