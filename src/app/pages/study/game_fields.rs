//! The study's title and game; for the next-token games, positions, rounds, seed and model.

use leptos::prelude::*;

use super::fields::{CountField, OptionalTextField, TextField};
use super::use_study_draft;
use crate::game::design::study::GameKind;

const GAMES: [(GameKind, &str, &str); 3] = [
    (
        GameKind::NextWord,
        "next_word",
        "Next word (cloze: one word per prefix)",
    ),
    (GameKind::Top1, "top1", "Top-1 next token"),
    (
        GameKind::TwoToken,
        "two_token",
        "Two tokens (true vs GPT-2's; perplexity)",
    ),
];

#[component]
pub(super) fn GameFields() -> impl IntoView {
    let draft = use_study_draft();
    let game = move || draft.config.with(|c| c.game);
    view! {
        <fieldset>
            <legend>"Study"</legend>
            <TextField
                label="Title (participants see it)"
                id="study-title"
                get=|c| c.title.clone()
                set=|c, v| c.title = v
            />
            <OptionalTextField
                label="Study id (keeps this study's answers apart from other studies' in participants' browsers; a new study gets its own)"
                id="study-id"
                field=|c| &c.study_id
                field_mut=|c| &mut c.study_id
            />
            <label for="study-game">"Game"</label>
            <select
                id="study-game"
                data-testid="study-game"
                on:change=move |ev| {
                    let chosen = event_target_value(&ev);
                    if let Some((kind, _, _)) = GAMES.iter().find(|(_, name, _)| *name == chosen) {
                        draft.config.update(|c| c.game = *kind);
                    }
                }
            >
                {GAMES
                    .iter()
                    .map(|(kind, name, label)| {
                        let kind = *kind;
                        view! {
                            <option value=*name selected=move || game() == kind>
                                {*label}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
            <Show when=move || game() != GameKind::NextWord>
                <CountField
                    label="Positions per passage (empty: every position)"
                    id="study-positions"
                    get=|c| c.positions_per_passage
                    set=|c, v| c.positions_per_passage = v
                />
                <Show when=move || game() == GameKind::TwoToken>
                    <CountField
                        label="Rounds per position (GPT-2's tokens against the true one; default 1)"
                        id="study-rounds"
                        get=|c| c.rounds_per_position
                        set=|c, v| c.rounds_per_position = v
                    />
                </Show>
                <CountField
                    label="Seed (positions, sampled tokens and sides)"
                    id="study-seed"
                    get=|c| Some(c.seed)
                    set=|c, v| c.seed = v.unwrap_or(0)
                />
                <OptionalTextField
                    label="Model folder participants load (on the study's own server)"
                    id="study-model"
                    placeholder="models/gpt2/"
                    field=|c| &c.model
                    field_mut=|c| &mut c.model
                />
            </Show>
        </fieldset>
    }
}
