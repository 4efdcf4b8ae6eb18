//! "/tokens/:game/:passage": a next-token game in play mode, on one passage, with the number
//! of rounds per position from the URL.

use leptos::prelude::*;

use super::TokenGameBody;
use leptos_router::hooks::use_params_map;

use super::controller::TokenGame;
use crate::app::data::use_lab_data;
use crate::app::state::use_runtime;
use crate::app::web::participant::local_participant_id;
use crate::app::web::query_param;
use crate::game::design::plan::Plan;
use crate::game::design::study::{GameKind, StudyConfig};

fn game_from_path(name: &str) -> Option<GameKind> {
    match name {
        "top1" => Some(GameKind::Top1),
        "two-token" => Some(GameKind::TwoToken),
        _ => None,
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
        return view! {
            <p class="error">
                "There is no such game or passage. " <a href="/">"Back to the games"</a>
            </p>
        }
        .into_any();
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
        list: None,
        study_id: study.study_id(),
        run: String::new(),
    };
    TokenGame::provide(study, plan, false, rounds_from_url(), runtime);
    view! { <TokenGameBody title /> }.into_any()
}
