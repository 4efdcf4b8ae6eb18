//! Production probes in the page (Giulianelli et al. 2023): the loaded model's next words under
//! each decoding strategy against people's, by lexical, syntactic and semantic distance, with
//! the human control group; per-context table, histograms and the per-strategy summary.

use super::probe_tables::ProbeTables;
use leptos::prelude::*;

use super::class_tvd::lexicon_url;
use crate::app::components::error_note::ErrorNote;
use crate::app::components::outcome::Outcome;
use crate::app::components::run_stop::RunStop;
use crate::app::components::with_model::WithModel;
use crate::app::stoppable_call::StoppableCall;
use crate::app::worker_client::CallError;
use crate::estimators::progress::Progress;
use crate::runtime::productions::{DEFAULT_STRATEGIES, ProbeReport, ProbeRequest};
use crate::runtime::protocol::{Reply, Request};

#[component]
pub fn Probes() -> impl IntoView {
    let chosen = RwSignal::new(DEFAULT_STRATEGIES.map(String::from).to_vec());
    let contexts = RwSignal::new(20usize);
    let samples = RwSignal::new(40usize);
    // Multi-reference data (file name, JSON Lines) probed instead of the analysed norms.
    let references = RwSignal::new(None::<(String, String)>);
    let problem = RwSignal::new(None::<String>);
    let call = StoppableCall::new();
    let run = Action::new_local(move |_: &()| async move {
        let request = Request::Probes(ProbeRequest {
            // The choices are the fixed, valid DEFAULT_STRATEGIES: none fails to parse.
            strategies: chosen
                .get_untracked()
                .iter()
                .filter_map(|s| s.parse().ok())
                .collect(),
            contexts: contexts.get_untracked(),
            samples: samples.get_untracked(),
            seed: 0,
            lexicon_url: lexicon_url(),
            references: references.get_untracked().map(|(_, text)| text),
        });
        let describe = |p: &Progress| {
            format!(
                "{} of {} (strategy, context) pairs",
                p.contexts_done, p.contexts_total
            )
        };
        match call.run(request, describe).await {
            Reply::Probes(report) => Ok(*report),
            other => {
                let why = CallError::from_reply(other).to_string();
                Err(match references.get_untracked() {
                    Some((name, _)) => format!("{name}: {why}"),
                    None => why,
                })
            }
        }
    });
    let toggle = move |name: &'static str, on: bool| {
        chosen.update(|all| {
            all.retain(|s| s != name);
            if on {
                all.push(name.to_string());
            }
        })
    };
    let choose_references = move |ev: leptos::ev::Event| {
        use wasm_bindgen::JsCast;
        let list = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            .and_then(|i| i.files());
        let Some(list) = list else { return };
        leptos::task::spawn_local(async move {
            match super::read_texts(list).await {
                Ok(mut files) => {
                    problem.set(None);
                    references.set(files.pop());
                }
                Err(e) => problem.set(Some(e)),
            }
        });
    };
    let result: Signal<Option<Result<ProbeReport, String>>> = run.value().into();
    view! {
        <section class="probes" data-testid="probes">
            <h3>"Production probes per decoding strategy (Giulianelli et al. 2023)"</h3>
            <p>
                "For each context, how different people's words are from one another (H), the \
                    model's from one another (M) and the model's from people's (C), by word, \
                    part of speech and meaning (cosine distance of GPT-2's embeddings). μM − μH \
                    above 0: the model varies more than people; W1(C, H) near the human \
                    control's: its words are as far from people's as people's are from each \
                    other."
            </p>
            <WithModel
                needs="The probes sample the model"
                render=move |_| {
                    view! {
                        <fieldset class="strategies">
                            <legend>"Decoding strategies"</legend>
                            {DEFAULT_STRATEGIES
                                .iter()
                                .map(|&name| {
                                    view! {
                                        <label>
                                            <input
                                                type="checkbox"
                                                checked=true
                                                data-strategy=name
                                                on:change=move |ev| toggle(name, event_target_checked(&ev))
                                            />
                                            {format!(" {name}")}
                                        </label>
                                    }
                                })
                                .collect_view()}
                        </fieldset>
                        <p>
                            <label>
                                "Multi-reference data instead of the norms (JSON Lines: \
                                    {\"context\": …, \"references\": [ … ]}; the model's \
                                    continuations are drawn to the references' median length) "
                                <input
                                    type="file"
                                    accept=".jsonl,.json,.txt"
                                    data-testid="probes-references"
                                    on:change=choose_references
                                />
                            </label>
                            {move || {
                                references
                                    .get()
                                    .map(|(name, _)| {
                                        view! {
                                            <span data-testid="probes-references-name">
                                                {format!(" probing {name} ")}
                                            </span>
                                            <button on:click=move |_| {
                                                references.set(None)
                                            }>"Use the norms"</button>
                                        }
                                    })
                            }}
                        </p>
                        <ErrorNote message=problem />
                        <label>
                            "Contexts "
                            <input
                                type="number"
                                min="1"
                                max="2687"
                                data-testid="probes-contexts"
                                prop:value=move || contexts.get().to_string()
                                on:input=move |ev| {
                                    contexts
                                        .set(
                                            event_target_value(&ev).parse().unwrap_or(20).clamp(1, 2687),
                                        )
                                }
                            />
                        </label>
                        <label>
                            " Samples per context "
                            <input
                                type="number"
                                min="2"
                                max="1000"
                                data-testid="probes-samples"
                                prop:value=move || samples.get().to_string()
                                on:input=move |ev| {
                                    samples
                                        .set(
                                            event_target_value(&ev).parse().unwrap_or(40).clamp(2, 1000),
                                        )
                                }
                            />
                        </label>
                        <RunStop
                            label="Run the probes".to_string()
                            testid="probes-run"
                            running=run.pending()
                            blocked=Signal::derive(move || chosen.with(Vec::is_empty))
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
                render=move |report| view! { <ProbeTables report=report /> }
            />
        </section>
    }
}
