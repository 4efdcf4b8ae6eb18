//! How fast the loaded model runs on this device: one forward pass over 16 and 64 tokens, one
//! next-token step and a word distribution as the game's feedback draws it, timed in the worker.

use leptos::prelude::*;

use crate::app::components::outcome::Outcome;
use crate::app::components::run_stop::RunStop;
use crate::app::components::with_model::WithModel;
use crate::app::pages::play::controller::FEEDBACK_SAMPLES;
use crate::app::stoppable_call::StoppableCall;
use crate::app::worker_client::CallError;
use crate::estimators::progress::Progress;
use crate::runtime::protocol::{Reply, Request};
use crate::runtime::speed::{DECODE_STEPS, PREFILL_LENGTHS, SpeedReport, SpeedSetup};

/// Timed rounds after the untimed first one.
const ROUNDS: usize = 3;

#[component]
pub fn SpeedCheck() -> impl IntoView {
    let call = StoppableCall::new();
    let run = Action::new_local(move |_: &()| async move {
        let setup = SpeedSetup::new(ROUNDS, FEEDBACK_SAMPLES, 0).map_err(|e| e.to_string())?;
        let describe = |p: &Progress| {
            format!(
                "Measuring: {} of {} steps",
                p.contexts_done, p.contexts_total
            )
        };
        match call.run(Request::MeasureSpeed(setup), describe).await {
            Reply::Speed(report) => Ok(report),
            other => Err(CallError::from_reply(other).to_string()),
        }
    });
    let result: Signal<Option<Result<SpeedReport, String>>> = run.value().into();
    view! {
        <section class="speed-check" data-testid="speed-check" aria-labelledby="speed-heading">
            <h2 id="speed-heading">"Speed on this device"</h2>
            <p>
                "How long the loaded model takes here, on the backend shown above: what a participant on \
                    this machine waits for. Each figure is the median of " {ROUNDS}
                " runs after one untimed run."
            </p>
            <WithModel
                needs="The speed check times the model"
                render=move |_| {
                    view! {
                        <RunStop
                            label="Measure the speed".to_string()
                            testid="speed-run"
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
                failure="The speed check failed"
                render=move |report| view! { <SpeedTable report=report /> }
            />
        </section>
    }
}

#[component]
fn SpeedTable(report: SpeedReport) -> impl IntoView {
    let ms = |x: f64| format!("{x:.0} ms");
    let rows = [
        (
            "prefill-16",
            format!("Reading a {}-token context", PREFILL_LENGTHS[0]),
            ms(report.prefill_ms[0]),
            report.prefill_ms[0],
        ),
        (
            "prefill-64",
            format!("Reading a {}-token context", PREFILL_LENGTHS[1]),
            ms(report.prefill_ms[1]),
            report.prefill_ms[1],
        ),
        (
            "decode",
            format!("One more token after it (mean of {DECODE_STEPS})"),
            format!("{:.1} ms", report.decode_step_ms),
            report.decode_step_ms,
        ),
        (
            "words",
            format!(
                "The game's feedback: {} sampled continuations, their first words",
                report.word_samples
            ),
            format!("{:.2} s", report.word_distribution_ms / 1e3),
            report.word_distribution_ms,
        ),
    ];
    view! {
        <table class="speed" data-testid="speed-table">
            <tbody>
                {rows
                    .into_iter()
                    .map(|(key, what, shown, ms)| {
                        view! {
                            <tr data-op=key>
                                <th scope="row">{what}</th>
                                <td data-ms=ms.to_string()>{shown}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}
