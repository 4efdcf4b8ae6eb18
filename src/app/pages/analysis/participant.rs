//! A participant beside the models: pick anyone in the analysed exports (or yourself, once your
//! answers saved in this browser are added); the worker scores them and every system on the
//! contexts they answered and draws the accuracy histogram of all participants with them marked.

use leptos::prelude::*;

use super::figure_card::FigureCard;
use crate::analysis::participant::ParticipantReport;
use crate::app::components::outcome::Outcome;
use crate::app::state::use_runtime;
use crate::app::web::files::download_text;
use crate::app::worker_client::CallError;
use crate::runtime::protocol::{ParticipantRequest, Reply, Request};

fn percent(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

#[component]
fn Scores(report: ParticipantReport) -> impl IntoView {
    let csv = report.csv();
    let file = format!(
        "participant-{}.csv",
        crate::game::run::export::file_safe(&report.participant)
    );
    let participants = report.participants;
    let rows = report
        .scores
        .into_iter()
        .map(|s| {
            let probs = s
                .system_probs
                .iter()
                .map(|p| {
                    view! {
                        <td data-col="system_prob">
                            {p.map(|p| format!("{p:.3}")).unwrap_or_else(|| "—".into())}
                        </td>
                    }
                })
                .collect_view();
            view! {
                <tr>
                    <th scope="row">{s.name.clone()}</th>
                    <td>{s.contexts}</td>
                    <td data-col="top1">{percent(s.top1_accuracy)}</td>
                    {probs}
                    <td>{percent(s.others_share)}</td>
                    <td>{percent(s.majority_share)}</td>
                    <td data-col="rank">{format!("{} of {participants}", s.rank)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-scroll">
            <table data-testid="participant-table">
                <thead>
                    <tr>
                        <th scope="col">"answers of"</th>
                        <th scope="col">"contexts"</th>
                        <th scope="col">"top-1"</th>
                        {report
                            .systems
                            .iter()
                            .map(|name| {
                                view! {
                                    <th scope="col" class="system-prob">
                                        {format!("P({name})")}
                                    </th>
                                }
                            })
                            .collect_view()}
                        <th scope="col">"others' share"</th>
                        <th scope="col">"others' majority"</th>
                        <th scope="col">"rank"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        <p class="hint">
            "top-1: answers that were the word that followed in the text; P(system): the \
                probability that system's samples give the answers; others' share: the other people who gave the \
                same answer; others' majority: answers that were the others' most frequent one; \
                rank: by top-1 among all participants, each on their own contexts."
        </p>
        <button on:click=move |_| {
            let _ = download_text(&file, "text/csv", &csv);
        }>"These figures as CSV"</button>
        <FigureCard figure=report.histogram />
    }
}

#[component]
pub fn ParticipantPanel(
    participants: Vec<String>,
    /// Adds the answers saved in this browser to the data (and analyses again).
    on_add_own: Callback<()>,
) -> impl IntoView {
    let runtime = use_runtime();
    let chosen = RwSignal::new(participants.first().cloned().unwrap_or_default());
    let compare = Action::new_local(move |_: &()| {
        let request = Request::Participant(ParticipantRequest {
            participant: chosen.get_untracked(),
        });
        async move {
            match runtime.client().call(request).await {
                Reply::Participant(r) => Ok(*r),
                other => Err(CallError::from_reply(other).to_string()),
            }
        }
    });
    let has_people = !participants.is_empty();
    let result: Signal<Option<Result<ParticipantReport, String>>> = compare.value().into();
    view! {
        <section class="participant" data-testid="participant-panel">
            <h3>"A participant beside the models"</h3>
            <p>
                "On the contexts one person answered: how often they named the word that \
                    followed, how probable each system found their words, how often they gave \
                    the other people's majority answer, and their rank — beside each system's \
                    most probable word and the others' majority word on the same contexts."
            </p>
            <button data-testid="add-own-answers" on:click=move |_| on_add_own.run(())>
                "Add my answers saved in this browser"
            </button>
            {(!has_people)
                .then(|| {
                    view! {
                        <p>
                            "No participants yet: add the app's exports (long CSV/JSON or JSON \
                                bundles) above, or your own answers."
                        </p>
                    }
                })}
            {has_people
                .then(|| {
                    view! {
                        <label>
                            "Participant "
                            <select
                                data-testid="participant-select"
                                on:change=move |ev| chosen.set(event_target_value(&ev))
                            >
                                {participants
                                    .iter()
                                    .map(|p| view! { <option value=p.clone()>{p.clone()}</option> })
                                    .collect_view()}
                            </select>
                        </label>
                        <button
                            data-testid="participant-compare"
                            disabled=move || compare.pending().get()
                            on:click=move |_| {
                                compare.dispatch(());
                            }
                        >
                            "Compare"
                        </button>
                    }
                })}
            <Outcome
                result=move || result.get()
                render=move |report| view! { <Scores report=report /> }
            />
        </section>
    }
}
