//! Figure 4 in the page: syntactic TVD (parts of speech, the tagger's lexicon fetched once) and
//! semantic TVD (meaning clusters of the loaded GPT-2's word embeddings) over the analysed
//! dataset, computed in the worker, each system beside the oracle.

use leptos::prelude::*;

use super::figure_card::FigureCard;
use crate::analysis::classes::{ClassRow, Level};
use crate::analysis::figures::Figure;
use crate::analysis::table1::Table1Options;
use crate::app::components::error_note::ErrorNote;
use crate::app::components::with_model::WithModel;
use crate::app::state::use_runtime;
use crate::app::worker_client::CallError;
use crate::runtime::protocol::{ClassTvdRequest, Reply, Request};

/// Where the page serves Brill's lexicon (index.html copies it from npm `pos`).
pub fn lexicon_url() -> String {
    format!(
        "{}pos/lexicon.js",
        crate::app::web::jatos_client::app_root()
    )
}

fn cell(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "—".into())
}

#[component]
pub fn ClassTvd(options: Table1Options) -> impl IntoView {
    let runtime = use_runtime();
    let progress = RwSignal::new(String::new());
    let results = RwSignal::new(Vec::<(Level, Vec<ClassRow>, Vec<Figure>)>::new());
    let problem = RwSignal::new(None::<String>);
    let run = Action::new_local(move |level: &Level| {
        let level = *level;
        async move {
            let on_progress = Box::new(move |reply: &Reply| {
                if let Reply::Progress(p) = reply {
                    progress.set(format!(
                        "{} of {} words embedded",
                        p.contexts_done, p.contexts_total
                    ));
                }
            });
            let request = Request::ClassTvd(ClassTvdRequest {
                level,
                lexicon_url: lexicon_url(),
                options,
            });
            let reply = runtime
                .client()
                .start(request, Some(on_progress))
                .reply()
                .await;
            progress.set(String::new());
            match reply {
                Reply::ClassTvd { rows, figures } => {
                    problem.set(None);
                    results.update(|all| {
                        all.retain(|(l, _, _)| *l != level);
                        all.push((level, rows, figures));
                    });
                }
                other => problem.set(Some(CallError::from_reply(other).to_string())),
            }
        }
    });
    let table = move || {
        results
            .get()
            .into_iter()
            .flat_map(|(_, rows, _)| rows)
            .map(|r| {
                view! {
                    <tr data-system=r.system.clone() data-level=r.level.label()>
                        <th scope="row">{r.system.clone()}</th>
                        <td>{r.level.label()}</td>
                        <td>{r.contexts}</td>
                        <td data-col="tvd">{cell(r.tvd_human)}</td>
                        <td>
                            {r
                                .tvd_human_ci
                                .map(|ci| format!("{ci:.3}"))
                                .unwrap_or_else(|| "—".into())}
                        </td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <section class="class-tvd" data-testid="class-tvd">
            <h3>"Beyond exact words: syntactic and semantic TVD (Figure 4)"</h3>
            <p>
                "Words are replaced by their part of speech in the context (syntactic), or by \
                    their meaning cluster among the context's words (semantic: k-means on the \
                    loaded GPT-2's embedding of each word, the mean of its tokens' input \
                    embeddings, standardised; k at the elbow), and the TVD is taken again. Two \
                    systems that choose different words of the same kind come out close."
            </p>
            <button
                data-testid="class-tvd-syntactic"
                disabled=move || run.pending().get()
                on:click=move |_| {
                    run.dispatch(Level::Syntactic);
                }
            >
                "Syntactic TVD"
            </button>
            <WithModel
                needs="Semantic TVD uses GPT-2's embeddings"
                render=move |m| {
                    view! {
                        <button
                            data-testid="class-tvd-semantic"
                            disabled=move || run.pending().get()
                            on:click=move |_| {
                                run.dispatch(Level::Semantic);
                            }
                        >
                            {format!("Semantic TVD ({}'s embeddings)", m.name)}
                        </button>
                    }
                }
            />
            <p class="status" aria-live="polite">
                {move || {
                    if run.pending().get() && progress.get().is_empty() {
                        "Computing in the worker…".to_string()
                    } else {
                        progress.get()
                    }
                }}
            </p>
            <ErrorNote message=problem />
            <Show when=move || results.with(|r| !r.is_empty())>
                <div class="table-scroll">
                    <table data-testid="class-tvd-table">
                        <thead>
                            <tr>
                                <th scope="col">"system"</th>
                                <th scope="col">"level"</th>
                                <th scope="col">"contexts"</th>
                                <th scope="col">"TVD"</th>
                                <th scope="col">"95 % CI"</th>
                            </tr>
                        </thead>
                        <tbody>{table}</tbody>
                    </table>
                </div>
            </Show>
            <div class="figures">
                {move || {
                    results
                        .get()
                        .into_iter()
                        .flat_map(|(_, _, f)| f)
                        .map(|f| view! { <FigureCard figure=f /> })
                        .collect_view()
                }}
            </div>
        </section>
    }
}
