//! Preview: the study played on the Study page as a participant would play it, as participant
//! `preview`, its exports marked pilot; nothing is sent and nobody redirected. A study with
//! lists is previewed one list at a time, the researcher's choice, and the preview says which. Nothing is kept
//! either: the next-word game keeps a preview's answers in the page only, and the token games'
//! answers are deleted from the browser's store when a preview starts and when it ends.

use leptos::prelude::*;

use crate::app::pages::play::GameRun;
use crate::app::web::idb::IdbStore;
use crate::game::design::run_scope::PREVIEW_RUN;
use crate::game::design::study::{GameKind, PREVIEW_PARTICIPANT, StudyConfig};

/// What every key of a preview's answers holds: its run and participant (whatever the study).
fn preview_prefix() -> String {
    format!("\u{1f}{PREVIEW_RUN}\u{1f}{PREVIEW_PARTICIPANT}\u{1f}")
}

async fn clear_token_preview() -> Result<(), String> {
    let store = IdbStore::open().await.map_err(|e| e.to_string())?;
    store
        .delete_token_records(&preview_prefix())
        .await
        .map_err(|e| e.to_string())
}

#[component]
pub(super) fn StudyPreview(config: StudyConfig, on_end: Callback<()>) -> impl IntoView {
    let config = config.for_preview();
    let lists = config.lists.clone();
    let chosen = RwSignal::new(lists.first().map(|l| l.name.clone()));
    // The study with only the chosen list: its plan is that list's.
    let with_list = move |mut config: StudyConfig| {
        if let Some(name) = chosen.get() {
            config.lists.retain(|l| l.name == name);
        }
        config
    };
    let list_choice = (!lists.is_empty()).then(|| {
        let options = lists
            .iter()
            .map(|l| view! { <option value=l.name.clone()>{format!("List {}", l.name)}</option> })
            .collect_view();
        let played = move || {
            let name = chosen.get().unwrap_or_default();
            let passages = lists
                .iter()
                .find(|l| l.name == name)
                .map(|l| l.passages.join(", "))
                .unwrap_or_default();
            format!("Playing list {name}: {passages}")
        };
        view! {
            <label>
                "List to preview "
                <select
                    data-testid="study-preview-list"
                    on:change=move |ev| chosen.set(Some(event_target_value(&ev)))
                >
                    {options}
                </select>
            </label>
            <p class="status" data-testid="study-preview-playing">
                {played}
            </p>
        }
    });
    let token_game = config.game != GameKind::NextWord;
    let cleared = LocalResource::new(move || async move {
        if token_game {
            clear_token_preview().await
        } else {
            Ok(())
        }
    });
    on_cleanup(move || {
        if token_game {
            leptos::task::spawn_local(async {
                let _ = clear_token_preview().await;
            });
        }
    });
    view! {
        <section class="study-preview" data-testid="study-preview">
            <p class="warning">
                "Preview: you play as participant \"preview\". Answers are marked pilot, nothing \
                 is sent, nobody is redirected, and nothing is kept once you end the preview."
            </p>
            <button type="button" data-testid="study-preview-end" on:click=move |_| on_end.run(())>
                "End the preview"
            </button>
            {list_choice}
            {move || {
                cleared
                    .get()
                    .map(|done| match done {
                        Ok(()) => {
                            view! { <GameRun config=with_list(config.clone()) experiment=true /> }
                                .into_any()
                        }
                        Err(e) => {
                            view! {
                                <p class="error" role="alert">
                                    {format!("The preview cannot start: {e}")}
                                </p>
                            }
                                .into_any()
                        }
                    })
            }}
        </section>
    }
}
