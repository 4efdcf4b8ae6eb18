//! Figure 1 for any context: search the dataset's contexts by their words, pick a system, and
//! the worker draws the people's words beside the system's.

use leptos::prelude::*;

use super::figure_card::FigureCard;
use crate::app::components::outcome::Outcome;
use crate::app::state::use_runtime;
use crate::app::worker_client::CallError;
use crate::data::provo::ContextKey;
use crate::runtime::protocol::{ContextFigureRequest, Reply, Request};

/// The last ten words of a context, as the list shows it.
fn last_words(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    words[words.len().saturating_sub(10)..].join(" ")
}

#[component]
pub fn ContextFigure(contexts: Vec<(ContextKey, String)>, systems: Vec<String>) -> impl IntoView {
    let runtime = use_runtime();
    let query = RwSignal::new(String::new());
    let system = RwSignal::new(systems.first().cloned().unwrap_or_default());
    let chosen = RwSignal::new(contexts.first().map(|c| c.0));
    let contexts = StoredValue::new(contexts);
    let figure = LocalResource::new(move || {
        let (key, system) = (chosen.get(), system.get());
        async move {
            let key = key?;
            let reply = runtime
                .client()
                .call(Request::ContextFigure(ContextFigureRequest { key, system }))
                .await;
            Some(match reply {
                Reply::Figure(f) => Ok(*f),
                other => Err(CallError::from_reply(other).to_string()),
            })
        }
    });
    let matches = move || {
        let q = query.get().to_lowercase();
        contexts.with_value(|all| {
            all.iter()
                .filter(|(_, text)| q.is_empty() || text.to_lowercase().contains(&q))
                .take(12)
                .cloned()
                .collect::<Vec<_>>()
        })
    };
    let options = systems
        .into_iter()
        .map(|s| view! { <option value=s.clone()>{s.clone()}</option> })
        .collect_view();
    view! {
        <section class="context-figure" data-testid="context-figure">
            <h3>"One context: people's words beside a system's (top 15 of each)"</h3>
            <label>
                "System "
                <select
                    data-testid="context-system"
                    on:change=move |ev| system.set(event_target_value(&ev))
                >
                    {options}
                </select>
            </label>
            " "
            <label>
                "Find a context "
                <input
                    type="search"
                    data-testid="context-search"
                    placeholder="words of the context"
                    prop:value=move || query.get()
                    on:input=move |ev| query.set(event_target_value(&ev))
                />
            </label>
            <ul class="context-matches" data-testid="context-matches">
                {move || {
                    matches()
                        .into_iter()
                        .map(|(key, text)| {
                            view! {
                                <li>
                                    <button class="link" on:click=move |_| chosen.set(Some(key))>
                                        {format!("{key} …{}", last_words(&text))}
                                    </button>
                                </li>
                            }
                        })
                        .collect_view()
                }}
            </ul>
            <Outcome
                result=move || figure.get().flatten()
                render=|f| view! { <FigureCard figure=f /> }
            />
        </section>
    }
}
