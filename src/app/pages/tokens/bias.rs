//! The estimator's bias, shown (the paper's Figure 2): a known player (GPT-2 at another
//! temperature) answers every round exactly; the worker plays the two-token game with it on this
//! passage many times and reports how far the estimated loss falls from the player's true loss
//! for 1, 4, 10 and 40 rounds per position.

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use super::controller::use_token_game;
use crate::analysis::perplexity::{BiasPoint, BiasSetup};
use crate::app::components::outcome::Outcome;
use crate::app::worker_client::CallError;
use crate::runtime::protocol::{Reply, Request, SimulateBiasRequest};

type SimulationResult = Result<(usize, Vec<BiasPoint>, BiasSetup), String>;

fn draw(canvas: &web_sys::HtmlCanvasElement, points: &[BiasPoint]) -> Option<()> {
    let root = CanvasBackend::with_canvas_object(canvas.clone())?.into_drawing_area();
    root.fill(&WHITE).ok()?;
    let low = points.iter().map(|p| p.bias - p.sd).fold(0.0f64, f64::min);
    let high = points.iter().map(|p| p.bias + p.sd).fold(0.0f64, f64::max);
    let pad = 0.1 * (high - low).max(0.01);
    let n_max = points.iter().map(|p| p.rounds_per_pair).max().unwrap_or(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d((0.8..n_max * 1.25).log_scale(), (low - pad)..(high + pad))
        .ok()?;
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .x_desc("rounds per position (n)")
        .y_desc("estimated − true loss (nats)")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .ok()?;
    chart
        .draw_series(LineSeries::new(
            [(0.8, 0.0), (n_max * 1.25, 0.0)],
            BLACK.mix(0.4),
        ))
        .ok()?;
    let color = RGBColor(70, 110, 190);
    chart
        .draw_series(points.iter().map(|p| {
            let n = p.rounds_per_pair as f64;
            ErrorBar::new_vertical(n, p.bias - p.sd, p.bias, p.bias + p.sd, color.filled(), 8)
        }))
        .ok()?;
    chart
        .draw_series(LineSeries::new(
            points.iter().map(|p| (p.rounds_per_pair as f64, p.bias)),
            color.stroke_width(2),
        ))
        .ok()?;
    root.present().ok()
}

#[component]
pub fn BiasSimulation() -> impl IntoView {
    let game = use_token_game();
    let player_temperature = RwSignal::new(0.7f64);
    let progress = RwSignal::new(String::new());
    let call_id = StoredValue::new(None::<u64>);
    let run = Action::new_local(move |setup: &BiasSetup| {
        let setup = setup.clone();
        let setup_shown = setup.clone();
        let texts: Vec<String> = game
            .plan
            .with_value(|p| p.items.iter().map(|(p, _)| p.text.clone()).collect());
        async move {
            let on_progress = Box::new(move |reply: &Reply| {
                if let Reply::Progress(p) = reply {
                    progress.set(format!(
                        "GPT-2's distribution at position {} of {}…",
                        p.contexts_done + 1,
                        p.contexts_total
                    ));
                }
            });
            let call = game.runtime.client().start(
                Request::SimulateBias(SimulateBiasRequest { texts, setup }),
                Some(on_progress),
            );
            call_id.set_value(Some(call.id));
            let reply = call.reply().await;
            call_id.set_value(None);
            progress.set(String::new());
            match reply {
                Reply::Bias { contexts, points } => Ok((contexts, points, setup_shown)),
                other => Err(CallError::from_reply(other).to_string()),
            }
        }
    });
    // Leaving the page stops the simulation in the worker.
    on_cleanup(move || {
        if let Some(id) = call_id.get_value() {
            game.runtime.cancel(id);
        }
    });
    let start = move |_| {
        // The random test model is nearly uniform: a generator temperature of 0.15 makes it as
        // peaked as GPT-2, for a realistic simulation.
        let random = game
            .runtime
            .model_summary()
            .is_some_and(|s| s.random_test_model);
        let setup = BiasSetup {
            generator_temperature: if random { 0.15 } else { 1.0 },
            player_temperature: player_temperature.get_untracked(),
            truth_from_generator: random,
            seed: game.seed,
            ..BiasSetup::paper_default()
        };
        run.dispatch(setup);
    };
    let canvas = NodeRef::<Canvas>::new();
    let outcome: Signal<Option<SimulationResult>> = run.value().into();
    Effect::new(move |_| {
        if let (Some(c), Some(Ok((_, points, _)))) = (canvas.get(), outcome.get()) {
            c.set_width(520);
            c.set_height(240);
            let _ = draw(&c, &points);
        }
    });
    let choices = [0.5f64, 0.7, 1.5, 2.0].map(|t| {
        view! {
            <option value=t.to_string() selected=t == 0.7>
                {format!("T = {t}")}
            </option>
        }
    });
    view! {
        <details class="results bias" data-testid="bias-simulation">
            <summary>"How biased is this estimate? (simulation)"</summary>
            <p>
                "With few rounds per position the importance-sampling estimate underestimates the \
                    loss (the paper's Figure 2). Here GPT-2 at another temperature plays the \
                    game on this passage with known answers, 200 times, and the chart shows how \
                    far its estimated loss falls from its true loss (mean ± sd) as the rounds \
                    per position grow."
            </p>
            <label>
                "Simulated player: GPT-2 at "
                <select
                    data-testid="bias-temperature"
                    on:change=move |ev| {
                        player_temperature.set(event_target_value(&ev).parse().unwrap_or(0.7))
                    }
                >
                    {choices}
                </select>
            </label>
            " "
            <button data-testid="bias-run" on:click=start disabled=move || run.pending().get()>
                "Run the simulation"
            </button>
            <p class="status" aria-live="polite">
                {move || progress.get()}
            </p>
            <Outcome
                result=move || outcome.get()
                failure="The simulation failed"
                render=move |(contexts, points, setup): (usize, Vec<BiasPoint>, BiasSetup)| {
                    view! {
                        <ul data-testid="bias-list">
                            {points
                                .into_iter()
                                .map(|p| {
                                    view! {
                                        <li>
                                            {format!(
                                                "n = {}: estimated − true loss {:+.3} ± {:.3} nats (true loss {:.2})",
                                                p.rounds_per_pair,
                                                p.bias,
                                                p.sd,
                                                p.true_loss,
                                            )}
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                        <p class="note">
                            {format!(
                                "{contexts} positions of this passage, {} repetitions, \
                                        generator = GPT-2 at T = {}, true tokens from {}. The \
                                        same on the command line: clozelab perplexity-sim \
                                        --model DIR --text PASSAGE.txt --positions {} \
                                        --generator-temperature {} --player-temperature {} \
                                        --truth {} --repetitions {} --seed {}",
                                setup.repetitions,
                                setup.generator_temperature,
                                if setup.truth_from_generator {
                                    "the generator (the random test model's passages are not its own text)"
                                } else {
                                    "the passage"
                                },
                                setup.positions,
                                setup.generator_temperature,
                                setup.player_temperature,
                                if setup.truth_from_generator { "generator" } else { "text" },
                                setup.repetitions,
                                setup.seed,
                            )}
                        </p>
                    }
                }
            />
            <canvas
                node_ref=canvas
                aria-hidden="true"
                style:display=move || {
                    if matches!(outcome.get(), Some(Ok(_))) { "block" } else { "none" }
                }
            ></canvas>
        </details>
    }
}
