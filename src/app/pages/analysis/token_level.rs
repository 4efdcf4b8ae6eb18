//! Appendix D in the page: the loaded model's exact next-token distribution after every
//! context of the dataset against the humans' first tokens, computed in the worker (progress,
//! stop), as a row beside the word-level rows of Table 1 and a figure of both levels' TVDs.

use leptos::prelude::*;

use super::figure_card::FigureCard;
use crate::analysis::metrics::EceConvention;
use crate::analysis::table1::{Row, is_reference_system};
use crate::analysis::token_level::TokenLevelReport;
use crate::app::components::outcome::Outcome;
use crate::app::components::run_stop::RunStop;
use crate::app::components::with_model::WithModel;
use crate::app::state::use_runtime;
use crate::app::stoppable_call::StoppableCall;
use crate::app::worker_client::CallError;
use crate::estimators::progress::Progress;
use crate::runtime::protocol::{Reply, Request, TokenLevelRequest};

fn cell(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "—".into())
}

/// The token-level row above the word-level rows (models only: people have no token row).
#[component]
fn Levels(report: TokenLevelReport, model: String, rows: Vec<Row>) -> impl IntoView {
    let t = report.row;
    let words = rows
        .into_iter()
        .filter(|r| !is_reference_system(&r.system))
        .map(|r| {
            view! {
                <tr>
                    <th scope="row">{r.system.clone()}</th>
                    <td>"word"</td>
                    <td>{r.contexts}</td>
                    <td>{cell(r.tvd_human)}</td>
                    <td>{cell(r.ece_original)}</td>
                    <td>{cell(r.ece_human_majority)}</td>
                    <td>{format!("{:.3}", r.top1_accuracy)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-scroll">
            <table data-testid="token-level-table">
                <thead>
                    <tr>
                        <th scope="col">"system"</th>
                        <th scope="col">"level"</th>
                        <th scope="col">"contexts"</th>
                        <th scope="col">"TVD"</th>
                        <th scope="col">"ECE original"</th>
                        <th scope="col">"ECE majority"</th>
                        <th scope="col">"top-1"</th>
                    </tr>
                </thead>
                <tbody>
                    <tr data-testid="token-level-row">
                        <th scope="row">{model}</th>
                        <td>"token"</td>
                        <td>{t.contexts}</td>
                        <td>{format!("{:.3}", t.tvd)}</td>
                        <td>{format!("{:.3}", t.ece_original)}</td>
                        <td>{format!("{:.3}", t.ece_majority)}</td>
                        <td>{format!("{:.3}", t.top1_accuracy)}</td>
                    </tr>
                    {words}
                </tbody>
            </table>
        </div>
        {report.figure.map(|f| view! { <FigureCard figure=f /> })}
    }
}

#[component]
pub fn TokenLevel(ece: EceConvention, rows: Vec<Row>) -> impl IntoView {
    let rows = StoredValue::new(rows);
    let runtime = use_runtime();
    let call = StoppableCall::new();
    let model_name = move || {
        runtime
            .model_summary()
            .map(|m| m.name)
            .unwrap_or_else(|| "GPT-2".into())
    };
    let run = Action::new_local(move |_: &()| async move {
        let request = Request::TokenLevel(TokenLevelRequest {
            ece,
            model: model_name(),
        });
        let describe =
            |p: &Progress| format!("{} of {} contexts", p.contexts_done, p.contexts_total);
        match call.run(request, describe).await {
            Reply::TokenLevel(Some(report)) => Ok(*report),
            Reply::TokenLevel(None) => Err("no context has a response with a token".to_string()),
            other => Err(CallError::from_reply(other).to_string()),
        }
    });
    let result: Signal<Option<Result<TokenLevelReport, String>>> = run.value().into();
    view! {
        <section class="token-level" data-testid="token-level">
            <h3>"Token level (Appendix D)"</h3>
            <WithModel
                needs="Comparing the model's exact next-token distribution with the first tokens \
                of people's words needs the model"
                render=move |m| {
                    view! {
                        <p>
                            {format!(
                                "{}'s exact next-token distribution after each context against \
                                    the first GPT-2 token of each person's word: read it beside \
                                    the word level in Table 1.",
                                m.name,
                            )}
                        </p>
                        <RunStop
                            label="Compare at the token level".to_string()
                            testid="token-level-run"
                            running=run.pending()
                            on_run=Callback::new(move |()| {
                                run.dispatch(());
                            })
                            on_stop=Callback::new(move |()| call.stop())
                        />
                    }
                }
            />
            <p class="status" aria-live="polite">
                {move || call.progress.get()}
            </p>
            <Outcome
                result=move || result.get()
                render=move |report| {
                    view! { <Levels report=report model=model_name() rows=rows.get_value() /> }
                }
            />
        </section>
    }
}
