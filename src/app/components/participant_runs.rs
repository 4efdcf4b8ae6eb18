//! The runs of imported study results: each one's participant, run, study, answers (of those
//! planned), attention checks passed and state, so that a researcher sees who finished, who
//! stopped and who withdrew, and which runs' data does not add up (flagged, left out).

use leptos::prelude::*;

use crate::data::participant_run::ParticipantRun;

#[component]
pub fn ParticipantRuns(runs: Signal<Vec<ParticipantRun>>) -> impl IntoView {
    view! {
        <Show when=move || !runs.with(Vec::is_empty)>
            <div class="table-scroll">
                <table class="imported" data-testid="participant-runs">
                    <caption>"Participants' runs in the imported results"</caption>
                    <thead>
                        <tr>
                            <th>"participant"</th>
                            <th>"run"</th>
                            <th>"study"</th>
                            <th>"list"</th>
                            <th>"answers"</th>
                            <th>"attention checks"</th>
                            <th>"state"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            runs.get()
                                .into_iter()
                                .map(|run| {
                                    let answers = match run.planned {
                                        Some(planned) => format!("{} of {planned}", run.answered),
                                        None => run.answered.to_string(),
                                    };
                                    let checks = run.attention_passed + run.attention_failed;
                                    let attention = if checks == 0 {
                                        "—".to_string()
                                    } else if run.attention_failed == 0 {
                                        format!("passed {checks} of {checks}")
                                    } else {
                                        format!("failed {} of {checks}", run.attention_failed)
                                    };
                                    let state = run.state.to_string();
                                    let words = state.replace('_', " ");
                                    let shown_state = if run.pilot {
                                        format!("{words} (pilot)")
                                    } else if run.is_test_run() {
                                        format!("{words} (JATOS test run)")
                                    } else {
                                        words
                                    };
                                    let flagged = !run.warnings.is_empty();
                                    let warnings = run.warnings.join(" ");
                                    // A preview's answers are the researcher's, never a participant's.
                                    view! {
                                        <tr
                                            data-participant=run.participant.clone()
                                            data-run=run.run.clone()
                                            data-state=state
                                            data-flagged=flagged.to_string()
                                            class=flagged.then_some("flagged")
                                            data-list=run.list.clone().unwrap_or_default()
                                            data-list-chosen-by=run
                                                .list_chosen_by
                                                .clone()
                                                .unwrap_or_default()
                                            data-pilot=run.pilot.to_string()
                                            data-attention-failed=run.attention_failed.to_string()
                                        >
                                            <td>{run.participant.clone()}</td>
                                            <td>
                                                <small>{run.run.clone()}</small>
                                            </td>
                                            <td>{run.study}</td>
                                            <td>
                                                {run.list.clone().unwrap_or_default()}
                                                {run
                                                    .list_chosen_by
                                                    .clone()
                                                    .map(|how| {
                                                        view! {
                                                            <small title=run
                                                                .list_reason
                                                                .clone()>{format!(" ({how})")}</small>
                                                        }
                                                    })}
                                            </td>
                                            <td>{answers}</td>
                                            <td>{attention}</td>
                                            <td>
                                                {shown_state}
                                                {flagged
                                                    .then(|| {
                                                        view! {
                                                            <p class="warning" data-testid="run-warning">
                                                                {format!("Left out: {warnings}")}
                                                            </p>
                                                        }
                                                    })}
                                            </td>
                                        </tr>
                                    }
                                })
                                .collect_view()
                        }}
                    </tbody>
                </table>
            </div>
        </Show>
    }
}
