//! A second model as a player of the two-token game (the paper compares GPT-2 with other
//! models on the same rounds): loaded into the worker beside GPT-2, it scores every answered
//! round, and the perplexity chart gets its bars, unrounded and rounded to the buttons.

use leptos::prelude::*;

use super::controller::{TokenGame, use_token_game};
use crate::app::worker_client::CallError;
use crate::game::tokens::schedule::Slot;
use crate::game::tokens::two_token::ModelScores;
use crate::runtime::protocol::{ModelFolder, OpponentLogProbsRequest, Reply, Request};

/// Folder offered by default (the download step of docs/researchers.md can put distilgpt2 there).
const DEFAULT_FOLDER: &str = "/models/distilgpt2/";

async fn load(game: TokenGame, base: String, status: RwSignal<String>) {
    status.set(format!("Loading {base}…"));
    let on_progress = Box::new(move |reply: &Reply| {
        if let Reply::Loading { step, loaded, .. } = reply {
            status.set(format!("Loading ({step}): {} MB", loaded / 1_000_000));
        }
    });
    let reply = game
        .runtime
        .client()
        .start(
            Request::LoadOpponentUrl(ModelFolder { base }),
            Some(on_progress),
        )
        .reply()
        .await;
    match reply {
        Reply::ModelReady(summary) => {
            status.set(format!("{} plays beside GPT-2.", summary.name));
            // The effect in the panel scores the rounds answered so far.
            game.opponent.set(Some(ModelScores::new(&summary.name)));
        }
        other => status.set(format!(
            "The second model could not be loaded: {}",
            CallError::from_reply(other)
        )),
    }
}

/// Scores every answered round the second model has not seen, until none is left.
async fn score_missing(game: TokenGame, status: RwSignal<String>) {
    loop {
        let next = game.opponent.with_untracked(|o| {
            let o = o.as_ref()?;
            game.two_token
                .with_untracked(|all| o.missing(all).first().map(|r| (*r).clone()))
        });
        let Some(record) = next else { return };
        let slot = Slot {
            passage: record.passage.clone(),
            position: record.position,
            round: record.round,
            practice: record.practice,
        };
        let request = Request::OpponentLogProbs(OpponentLogProbsRequest {
            context_ids: game.context_ids(&slot),
            tokens: vec![record.true_token, record.other_token],
        });
        match game.runtime.client().call(request).await {
            Reply::LogProbs(l) if l.len() == 2 => game.opponent.update(|o| {
                if let Some(o) = o {
                    o.insert(&record, l[0], l[1]);
                }
            }),
            other => {
                return status.set(format!(
                    "The second model could not score a round: {}",
                    CallError::from_reply(other)
                ));
            }
        }
    }
}

#[component]
pub fn OpponentPanel() -> impl IntoView {
    let game = use_token_game();
    let folder = RwSignal::new(DEFAULT_FOLDER.to_string());
    let status = RwSignal::new(String::new());
    let loading = Action::new_local(move |base: &String| load(game, base.clone(), status));
    // Answers are scored once the model is there and as they come (one scoring loop at a time;
    // it runs until no round is left, so none is missed).
    let scoring = StoredValue::new(false);
    Effect::new(move |_| {
        game.two_token.track();
        if game.opponent.with(Option::is_some) && !scoring.get_value() {
            scoring.set_value(true);
            leptos::task::spawn_local(async move {
                score_missing(game, status).await;
                scoring.set_value(false);
            });
        }
    });
    view! {
        <details class="opponent" data-testid="opponent-panel">
            <summary>"Add a second model as a player"</summary>
            <p>
                "A model with GPT-2's vocabulary (e.g. distilgpt2, or clozelab's test model at \
                    /models/test/) answers your rounds with its own probabilities, \
                    m(y)/(m(y)+m(x)); its perplexity appears beside yours and GPT-2's."
            </p>
            <label>
                "Model folder "
                <input
                    type="text"
                    data-testid="opponent-folder"
                    prop:value=move || folder.get()
                    on:input=move |ev| folder.set(event_target_value(&ev))
                />
            </label>
            " "
            <button
                data-testid="opponent-load"
                disabled=move || loading.pending().get()
                on:click=move |_| {
                    loading.dispatch(folder.get_untracked());
                }
            >
                "Load"
            </button>
            <p class="status" aria-live="polite" data-testid="opponent-status">
                {move || status.get()}
            </p>
        </details>
    }
}
