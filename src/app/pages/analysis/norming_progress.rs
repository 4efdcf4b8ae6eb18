//! Adaptive norming's progress, for each study of the results that has the option: how many
//! contexts meet its target, the completed runs per list, and the state file that a study
//! outside JATOS serves beside its config (inside JATOS the batch session keeps it).

use leptos::prelude::*;

use crate::analysis::norming::progress::NormingProgress;
use crate::app::web::files::download_text;
use crate::game::design::adaptive_norming::STATE_FILE;

#[component]
pub fn NormingProgressPanel(progress: Vec<NormingProgress>) -> impl IntoView {
    progress
        .into_iter()
        .map(|p| {
            let state = p.state_file.clone();
            let runs = p
                .runs
                .iter()
                .map(|(list, n)| format!("{list}: {n}"))
                .collect::<Vec<_>>()
                .join(", ");
            view! {
                <section
                    class="norming-progress"
                    data-testid="norming-progress"
                    data-done=p.done.to_string()
                    data-met=p.met.to_string()
                >
                    <h3>{format!("Adaptive norming: {}", p.study)}</h3>
                    <p data-testid="norming-sentence">{p.sentence()}</p>
                    <p>{format!("Completed runs per list: {runs}.")}</p>
                    <p>
                        "Outside JATOS, serve this file beside the study's config and replace it as results come in; inside JATOS the batch session keeps it by itself. "
                        <button
                            data-testid="download-norming-state"
                            on:click=move |_| {
                                let _ = download_text(STATE_FILE, "application/json", &state);
                            }
                        >
                            {format!("Download {STATE_FILE}")}
                        </button>
                    </p>
                </section>
            }
        })
        .collect_view()
}
