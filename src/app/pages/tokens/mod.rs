//! The next-token games (Redwood Research) beside the next-word game: "/tokens/top1/:passage"
//! and "/tokens/two-token/:passage" in play mode, with feedback, practice rounds, resume and
//! exports; the same games as studies ([`TokenStudy`]); and the chooser on the first screen.

mod bias;
mod controller;
mod exports;
mod feedback;
mod imported;
mod opponent;
mod prepare;
mod results;
mod storage;
mod strip;
mod study;
mod top1;
mod two_token;

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::app::components::completion::CompletionScreen;
use crate::app::components::consent::ConsentScreen;
use crate::app::data::use_lab_data;
use crate::app::state::{ModelState, use_runtime};
use crate::app::web::participant::local_participant_id;
use crate::app::web::query_param;
use crate::game::study::{GameKind, Plan, StudyConfig};
use bias::BiasSimulation;
use controller::{Stage, TokenGame, game_name, use_token_game};
use exports::TokenExports;
use feedback::{RoundFeedback, RunningScore};
pub use imported::ImportedTokenResults;
use imported::LiveTop1Histogram;
use opponent::OpponentPanel;
use results::PerplexityResults;
pub use study::TokenStudy;
use top1::Top1Round;
use two_token::TwoTokenRound;

fn game_from_path(name: &str) -> Option<GameKind> {
    match name {
        "top1" => Some(GameKind::Top1),
        "two-token" => Some(GameKind::TwoToken),
        _ => None,
    }
}

/// The two games on the first screen, each with the passages to play; the two-token game asks
/// how many rounds (tokens drawn by GPT-2) each position gets.
#[component]
pub fn TokenGameChooser() -> impl IntoView {
    let lab = use_lab_data();
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let rounds = RwSignal::new(1u32);
    let list = move |game: GameKind| {
        let query = match (game, rounds.get()) {
            (GameKind::TwoToken, n) if n > 1 && search.is_empty() => format!("?rounds={n}"),
            (GameKind::TwoToken, n) if n > 1 => format!("{search}&rounds={n}"),
            _ => search.clone(),
        };
        lab.passages
            .get()
            .into_iter()
            .map(|p| {
                let href = format!(
                    "/tokens/{}/{}{query}",
                    game_name(game),
                    String::from(js_sys::encode_uri_component(&p.id))
                );
                view! { <li><a href=href data-testid=format!("{}-passage", game_name(game))>{p.title.clone()}</a></li> }
            })
            .collect_view()
    };
    let two = list.clone();
    let choices = [1u32, 2, 4, 10]
        .map(|n| view! { <option value=n.to_string() selected=n == 1>{n.to_string()}</option> });
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
                    <label>"Rounds per position "
                        <select data-testid="rounds-select" on:change=move |ev| rounds.set(event_target_value(&ev).parse().unwrap_or(1))>{choices}</select>
                    </label>
                    <p class="hint">"More rounds per position make the estimate less biased (see the simulation on the game page)."</p>
                    <ul class="compact">{move || two(GameKind::TwoToken)}</ul>
                </div>
            </div>
        </section>
    }
}

/// Rounds per position a play-mode two-token game asks for (`?rounds=`, 1 to 20).
fn rounds_from_url() -> u32 {
    query_param("rounds")
        .and_then(|r| r.parse::<u32>().ok())
        .map_or(1, |r| r.clamp(1, 20))
}

/// "/tokens/:game/:passage": one passage in play mode (resumes where this browser left it).
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
    let heading = match game {
        GameKind::TwoToken => "Two tokens",
        _ => "Top-1 token",
    };
    let title = format!("{heading}: {}", passage.title);
    // The same player id as the next-word game (`?PROLIFIC_PID=` or this browser's own).
    let local = local_participant_id();
    let mut study = StudyConfig::default_play();
    let participant = study
        .participant_id(&crate::app::web::query_params(), &local)
        .unwrap_or(local);
    study.game = game;
    study.passages = vec![passage.id.clone()];
    study.texts = vec![passage.clone()];
    let plan = Plan {
        participant,
        url_ids: Default::default(),
        order_seed: 0,
        items: vec![(passage, false)],
    };
    TokenGame::provide(study, plan, false, rounds_from_url(), runtime);
    view! { <TokenGameBody title/> }.into_any()
}

/// A next-token game over the controller in context, from the model loading to the end.
#[component]
fn TokenGameBody(title: String) -> impl IntoView {
    let tg = use_token_game();
    let runtime = tg.runtime;
    let game = tg.game;
    let experiment = tg.experiment;
    // Starts once a model is ready (the worker tokenises the passages too).
    let started = StoredValue::new(false);
    Effect::new(move |_| {
        if matches!(runtime.model.get(), ModelState::Ready(_)) && !started.get_value() {
            started.set_value(true);
            leptos::task::spawn_local(tg.prepare());
        }
    });
    let model_line = move || match runtime.model.get() {
        ModelState::Loading {
            step,
            loaded,
            total,
        } => Some(match total {
            Some(t) if t > 0 => format!(
                "Loading the language model ({step}): {} of {} MB",
                loaded / 1_000_000,
                t / 1_000_000
            ),
            _ => format!("Loading the language model ({step})…"),
        }),
        ModelState::Failed(e) if experiment => Some(format!(
            "The language model could not be loaded ({e}). Please tell the researcher."
        )),
        _ => None,
    };
    view! {
        <section class="game token-game" data-testid="token-game" data-game=game_name(game)>
            <h2>{title}</h2>
            {move || match tg.stage.get() {
                Stage::Preparing(message) => {
                    let no_model = matches!(runtime.model.get(), ModelState::Empty | ModelState::Failed(_));
                    view! {
                        <p class="status" data-testid="preparing">{message}</p>
                        <p class="status" data-testid="model-loading">{model_line}</p>
                        {(no_model && !experiment).then(|| view! { <p>"This game needs GPT-2: load it on the " <a href="/model">"Model"</a> " page."</p> })}
                    }.into_any()
                }
                Stage::Consent => {
                    let (consent, instructions) = tg.study.with_value(|s| (s.consent.clone(), s.instructions.clone()));
                    view! { <ConsentScreen consent instructions on_accept=Callback::new(move |_| tg.show_current())/> }.into_any()
                }
                Stage::Playing { slot, shown_ms } => match game {
                    GameKind::TwoToken => view! { <TwoTokenRound round=slot shown_ms/> }.into_any(),
                    _ => view! { <Top1Round round=slot shown_ms/> }.into_any(),
                },
                Stage::Scoring => view! { <p class="status" data-testid="scoring">"Saving and scoring…"</p> }.into_any(),
                Stage::Finished => {
                    let code = tg.study.with_value(|s| s.completion_code.clone());
                    view! {
                        {(!experiment).then(|| view! { <p class="done" data-testid="token-game-done">"You have played every position of this passage."</p> })}
                        <CompletionScreen code experiment status=tg.redirect_status back_href="/".to_string() done_text="Play another passage or game from the first screen."/>
                    }.into_any()
                }
                Stage::Failed(e) => view! { <p class="error" role="alert" data-testid="game-error">{e}</p> }.into_any(),
            }}
            <p class="progress" data-testid="token-progress">{move || tg.schedule.with(|s| s.as_ref().map(|s| {
                let (done, total) = s.progress();
                let unit = if game == GameKind::TwoToken && tg.rounds > 1 { "rounds" } else { "positions" };
                format!("{done} of {total} {unit} answered")
            }))}</p>
            <RunningScore/>
            <RoundFeedback/>
            {(game == GameKind::TwoToken && !experiment).then(|| view! { <PerplexityResults/> <OpponentPanel/> <BiasSimulation/> })}
            {(game == GameKind::Top1 && !experiment).then(|| view! { <LiveTop1Histogram/> })}
            <TokenExports/>
        </section>
    }
}
