//! The first screen of the next-token games: which game, which passage, and how many rounds.

use leptos::prelude::*;

use crate::app::data::use_lab_data;
use crate::game::design::study::GameKind;

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
                    game.name(),
                    String::from(js_sys::encode_uri_component(&p.id))
                );
                view! {
                    <li>
                        <a href=href data-testid=format!("{}-passage", game.name())>
                            {p.title.clone()}
                        </a>
                    </li>
                }
            })
            .collect_view()
    };
    let two = list.clone();
    let choices = [1u32, 2, 4, 10].map(|n| {
        view! {
            <option value=n.to_string() selected=n == 1>
                {n.to_string()}
            </option>
        }
    });
    view! {
        <section class="token-games" aria-labelledby="token-games-heading">
            <h2 id="token-games-heading">"Guess the next token"</h2>
            <div class="game-cards">
                <div class="game-card">
                    <h3>"Top-1 token"</h3>
                    <p>
                        "See a passage token by token, as GPT-2 does, and type the one token you \
                            think comes next. Your accuracy is compared with GPT-2's."
                    </p>
                    <ul class="compact">{move || list(GameKind::Top1)}</ul>
                </div>
                <div class="game-card">
                    <h3>"Two tokens"</h3>
                    <p>
                        "Which of two tokens came next: the original, or one GPT-2 made up? \
                            Answer with a probability; your answers estimate your perplexity."
                    </p>
                    <label>
                        "Rounds per position "
                        <select
                            data-testid="rounds-select"
                            on:change=move |ev| {
                                rounds.set(event_target_value(&ev).parse().unwrap_or(1))
                            }
                        >
                            {choices}
                        </select>
                    </label>
                    <p class="hint">
                        "More rounds per position make the estimate less biased (see the simulation on the game page)."
                    </p>
                    <ul class="compact">{move || two(GameKind::TwoToken)}</ul>
                </div>
            </div>
        </section>
    }
}
