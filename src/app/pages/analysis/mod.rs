//! "/analysis": the papers' figures over a dataset the user gives — the Provo norms (as
//! released on OSF, or as JSON Lines) and model samples (the paper's released files) — computed
//! in the worker, each figure drawn in the page and downloadable with the numbers behind it.

mod browser_answers;
mod class_tvd;
mod context;
mod exclusion_options;
mod figure_card;
mod files;
mod model_samples;
mod model_surprisal;
mod norming_progress;
mod options;
mod participant;
mod probe_tables;
mod production_variability;
mod sample_contexts;
mod study_tables;
mod table;
mod token_level;

use leptos::prelude::*;

use crate::analysis::metrics::EceConvention;
use crate::analysis::report::Analysis;
use crate::analysis::table1::{OracleSize, Table1Options};
use crate::app::components::outcome::Outcome;
use crate::app::components::participant_runs::ParticipantRuns;
use crate::app::state::use_runtime;
use crate::app::worker_client::CallError;
use crate::game::readback::exclusions::ExclusionRules;
use crate::runtime::protocol::{AnalyseRequest, Reply, Request};
use browser_answers::BrowserAnswers;
use class_tvd::ClassTvd;
use context::ContextFigure;
use exclusion_options::ExclusionOptions;
use figure_card::FigureCard;
use files::AnalysisFiles;
pub(super) use files::read_texts;
use model_samples::ModelSamples;
use model_surprisal::ModelSurprisal;
use options::AnalysisOptions;
use participant::ParticipantPanel;
use production_variability::Probes;
use study_tables::StudyTables;
use table::Table1View;
use token_level::TokenLevel;

const OSF_URL: &str = "https://osf.io/sjefs/";
/// The name the answers saved in this browser go by among the files.
const OWN_ANSWERS: &str = "answers saved in this browser.json";

#[component]
pub fn AnalysisPage() -> impl IntoView {
    let runtime = use_runtime();
    let files = RwSignal::new(Vec::<(String, String)>::new());
    let problem = RwSignal::new(None::<String>);
    let resamples = RwSignal::new(10usize);
    let oracle = RwSignal::new("half".to_string());
    let paper_ece = RwSignal::new(false);
    let exclude = RwSignal::new(ExclusionRules::default());
    // Systems computed here (the loaded model's samples), analysed with the files' ones.
    let extra = RwSignal::new(Vec::<crate::data::provo::SystemSamples>::new());
    let sampling_status = RwSignal::new(String::new());
    // The loaded model's surprisal of the target words, for the trial table.
    let predictors = RwSignal::new(Vec::<crate::analysis::predictors::ModelPredictors>::new());
    let surprisal_status = RwSignal::new(String::new());
    let current_options = move || Table1Options {
        resamples: resamples.get_untracked(),
        oracle_size: oracle.get_untracked().parse().unwrap_or(OracleSize::Half),
        ece: if paper_ece.get_untracked() {
            EceConvention::DropCertain
        } else {
            EceConvention::LastBin
        },
        seed: 0,
    };
    let analyse = Action::new_local(move |_: &()| {
        let options = current_options();
        let (files, extra) = (files.get_untracked(), extra.get_untracked());
        let predictors = predictors.get_untracked();
        async move {
            let request = Request::Analyse(AnalyseRequest {
                files,
                extra,
                options,
                exclude: exclude.get_untracked(),
                predictors,
            });
            match runtime.client().call(request).await {
                Reply::Analysis(a) => Ok(*a),
                other => Err(CallError::from_reply(other).to_string()),
            }
        }
    });
    // The answers saved in this browser join the files as one more export, then the data is
    // analysed again.
    let add_own = Callback::new(move |()| {
        leptos::task::spawn_local(async move {
            let store = match crate::app::web::idb::IdbStore::open().await {
                Ok(s) => s,
                Err(e) => return problem.set(Some(e.to_string())),
            };
            match store.all().await {
                Ok(records) if records.is_empty() => problem.set(Some(
                    "no answers are saved in this browser yet: play the next-word game first"
                        .into(),
                )),
                Ok(records) => {
                    problem.set(None);
                    let text = crate::data::export_long_json(&records);
                    files.update(|all| {
                        all.retain(|(n, _)| n != OWN_ANSWERS);
                        all.push((OWN_ANSWERS.to_string(), text));
                    });
                    analyse.dispatch(());
                }
                Err(e) => problem.set(Some(e.to_string())),
            }
        });
    });
    let result: Signal<Option<Result<Analysis, String>>> = analyse.value().into();
    view! {
        <section class="analysis" aria-labelledby="analysis-heading">
            <h2 id="analysis-heading">"Analysis"</h2>
            <p>
                "How do a model's next-word distributions differ from people's? Give the cloze \
                    norms (and your own participants' exports) and one or more files of model \
                    samples; Table 1 and the figures of Ilia & Aziz (2024) are computed here, in \
                    your browser."
            </p>
            <p class="attribution">
                "The Provo Corpus norms (Luke & Christianson, 2018) are on "
                <a href=OSF_URL target="_blank" rel="noopener">
                    "OSF"
                </a>
                " under CC-BY 4.0: cite them when you use them. The paper's model samples come with its release."
            </p>
            <AnalysisFiles files problem />
            <BrowserAnswers />
            <AnalysisOptions resamples oracle paper_ece />
            <ExclusionOptions exclude />
            <button
                class="primary"
                data-testid="analyse"
                disabled=move || files.with(Vec::is_empty) || analyse.pending().get()
                on:click=move |_| {
                    analyse.dispatch(());
                }
            >
                "Analyse"
            </button>
            {move || {
                analyse
                    .pending()
                    .get()
                    .then(|| {
                        view! {
                            <p class="status" data-testid="analysing">
                                "Computing in the worker…"
                            </p>
                        }
                    })
            }}
            <Outcome
                result=move || result.get()
                error_testid="analysis-error"
                render=move |a: Analysis| {
                    view! {
                        <ul class="notes" data-testid="analysis-notes">
                            {a.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}
                        </ul>
                        <ParticipantRuns runs=Signal::stored(a.participant_runs.clone()) />
                        <StudyTables files=a.downloads.clone() flow=a.flow.clone() />
                        <norming_progress::NormingProgressPanel progress=a.norming.clone() />
                        <Table1View
                            rows=a.rows.clone()
                            csv=a.table1_csv.clone()
                            left_out=a.left_out.clone()
                        />
                        <ModelSamples
                            contexts=a.contexts.clone()
                            status=sampling_status
                            on_done=Callback::new(move |system: crate::data::provo::SystemSamples| {
                                extra
                                    .update(|all| {
                                        all.retain(|(name, _)| name != &system.0);
                                        all.push(system);
                                    });
                                analyse.dispatch(());
                            })
                        />
                        <ModelSurprisal
                            have=predictors
                            status=surprisal_status
                            on_done=Callback::new(move |
                                new: crate::analysis::predictors::ModelPredictors|
                            {
                                predictors
                                    .update(|all| {
                                        all.retain(|(name, _)| name != &new.0);
                                        all.push(new);
                                    });
                                analyse.dispatch(());
                            })
                        />
                        <TokenLevel
                            ece=if paper_ece.get_untracked() {
                                EceConvention::DropCertain
                            } else {
                                EceConvention::LastBin
                            }
                            rows=a.rows.clone()
                        />
                        <ClassTvd options=current_options() />
                        <ContextFigure contexts=a.contexts.clone() systems=a.systems.clone() />
                        <ParticipantPanel participants=a.participants.clone() on_add_own=add_own />
                        {a
                            .left_out
                            .clone()
                            .map(|text| {
                                view! {
                                    <p class="note" data-testid="figures-left-out">
                                        {text}
                                    </p>
                                }
                            })}
                        <div class="figures">
                            {a
                                .figures
                                .into_iter()
                                .map(|f| view! { <FigureCard figure=f /> })
                                .collect_view()}
                        </div>
                    }
                }
            />
            <Probes />
        </section>
    }
}
