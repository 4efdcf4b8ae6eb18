//! Choosing a passage: title, kind, length and how far this browser's player got.

use std::collections::BTreeMap;

use leptos::prelude::*;

use crate::app::data::use_lab_data;
use crate::app::web::{idb::IdbStore, query_params};
use crate::game::design::run_scope::RunScope;
use crate::game::design::study::StudyConfig;
use crate::game::run::store::ResponseStore;

/// Answers stored in this browser per passage, for the player the page would play as.
async fn answered_per_passage() -> BTreeMap<String, usize> {
    let params = query_params();
    let Ok(participant) = StudyConfig::default_play().participant_id(
        &params,
        &crate::app::web::participant::local_participant_id(),
    ) else {
        return BTreeMap::new();
    };
    let Ok(store) = IdbStore::open().await else {
        return BTreeMap::new();
    };
    let study = StudyConfig::default_play().study_id();
    let scope = RunScope {
        run: crate::app::web::participant::local_run_id(&study, &participant),
        study,
        participant,
    };
    let mut out = BTreeMap::new();
    for r in store.load(&scope).await.unwrap_or_default() {
        *out.entry(r.passage).or_default() += 1;
    }
    out
}

#[component]
pub fn PassageList() -> impl IntoView {
    let lab = use_lab_data();
    let answered = LocalResource::new(answered_per_passage);
    // Keeps the page's query (a participant id, `?model=`) when opening a passage.
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    view! {
        <section class="passages" aria-labelledby="passages-heading">
            <h2 id="passages-heading">"Guess the next word"</h2>
            <p>
                "Pick a passage. You see it word by word and guess each next word; then you see what GPT-2 and other people guessed."
            </p>
            <ul class="passage-list" data-testid="passage-list">
                {move || {
                    let done = answered.get().unwrap_or_default();
                    lab.passages
                        .get()
                        .into_iter()
                        .map(|p| {
                            let total = p.words().len().saturating_sub(1);
                            let answered = done.get(&p.id).copied().unwrap_or(0).min(total);
                            let action = if answered == 0 {
                                "Play"
                            } else if answered >= total {
                                "Review"
                            } else {
                                "Continue"
                            };
                            let href = format!("/play/{}{}", urlencoding_path(&p.id), search);
                            view! {
                                <li data-passage=p.id.clone()>
                                    <a href=href data-testid="play-passage">
                                        <strong>{p.title.clone()}</strong>
                                    </a>
                                    <span class="meta">
                                        {format!(
                                            "{} · {} words · {answered} of {total} answered",
                                            p.genre,
                                            total + 1,
                                        )}
                                    </span>
                                    <progress
                                        max=total.max(1) as f64
                                        value=answered as f64
                                        aria-label="progress"
                                    ></progress>
                                    <span class="action">{action}</span>
                                </li>
                            }
                        })
                        .collect_view()
                }}
            </ul>
        </section>
    }
}

/// A passage id as one URL path segment.
fn urlencoding_path(id: &str) -> String {
    String::from(js_sys::encode_uri_component(id))
}
