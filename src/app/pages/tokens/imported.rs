//! Results over imported next-token exports (several participants): top-1 accuracy per
//! participant as a histogram with GPT-2's accuracy marked (the paper's Figure 1), and the
//! pooled perplexity estimate beside GPT-2 (Figure 3).

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use super::results::PerplexityChart;
use crate::app::data::use_lab_data;
use crate::game::tokens::top1::{ParticipantAccuracy, accuracies};

const BINS: usize = 10;

fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    people: &[ParticipantAccuracy],
    you: Option<f64>,
) -> Option<()> {
    let mut counts = [0u32; BINS];
    for p in people {
        counts[((p.accuracy * BINS as f64) as usize).min(BINS - 1)] += 1;
    }
    let with_model: Vec<f64> = people.iter().filter_map(|p| p.model_accuracy).collect();
    let model =
        (!with_model.is_empty()).then(|| with_model.iter().sum::<f64>() / with_model.len() as f64);
    let root = CanvasBackend::with_canvas_object(canvas.clone())?.into_drawing_area();
    root.fill(&WHITE).ok()?;
    let top = counts.iter().copied().max().unwrap_or(1).max(1);
    let mut chart = ChartBuilder::on(&root)
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(30)
        .build_cartesian_2d(0.0..1.0, 0u32..top + 1)
        .ok()?;
    chart
        .configure_mesh()
        .x_desc("top-1 accuracy per participant")
        .y_desc("participants")
        .draw()
        .ok()?;
    chart
        .draw_series(counts.iter().enumerate().map(|(i, &c)| {
            let x = i as f64 / BINS as f64;
            Rectangle::new(
                [(x, 0), (x + 1.0 / BINS as f64, c)],
                RGBColor(200, 90, 40).filled(),
            )
        }))
        .ok()?;
    let lines = [(model, RGBColor(70, 110, 190)), (you, RGBColor(30, 30, 30))];
    for (x, color) in lines {
        if let Some(x) = x {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, 0), (x, top + 1)],
                    color.stroke_width(3),
                )))
                .ok()?;
        }
    }
    root.present().ok()
}

/// Top-1 accuracy per participant as a histogram (the paper's Figure 1): GPT-2's mean accuracy
/// on their positions in blue and, when `you` names one of them, that participant in black.
#[component]
pub fn AccuracyHistogram(
    people: Signal<Option<Vec<ParticipantAccuracy>>>,
    #[prop(optional)] you: Option<String>,
    title: &'static str,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let you_stored = StoredValue::new(you.clone());
    let you_accuracy = {
        let you = you.clone();
        move || {
            let you = you.as_ref()?;
            people.with(|p| {
                p.as_ref()?
                    .iter()
                    .find(|p| &p.participant == you)
                    .map(|p| p.accuracy)
            })
        }
    };
    let marked = you_accuracy.clone();
    Effect::new(move |_| {
        if let (Some(c), Some(p)) = (canvas.get(), people.get()) {
            c.set_width(560);
            c.set_height(220);
            let _ = draw(&c, &p, marked());
        }
    });
    view! {
        <Show when=move || people.with(Option::is_some)>
            <section class="results" data-testid="top1-histogram">
                <h3>{title}</h3>
                <canvas node_ref=canvas aria-hidden="true"></canvas>
                <ul>
                    {move || {
                        people
                            .get()
                            .unwrap_or_default()
                            .into_iter()
                            .map(|p| {
                                let is_you = you_stored
                                    .with_value(|y| y.as_deref() == Some(p.participant.as_str()));
                                let who = if is_you {
                                    format!("{} (you)", p.participant)
                                } else {
                                    p.participant.clone()
                                };
                                view! {
                                    <li class:you=is_you>
                                        {format!(
                                            "{who}: {:.1} % over {} positions (GPT-2 {})",
                                            100.0 * p.accuracy,
                                            p.positions,
                                            p
                                                .model_accuracy
                                                .map(|m| format!("{:.1} %", 100.0 * m))
                                                .unwrap_or_else(|| "not recorded".into()),
                                        )}
                                    </li>
                                }
                            })
                            .collect_view()
                    }}
                </ul>
            </section>
        </Show>
    }
}

#[component]
pub fn ImportedTokenResults() -> impl IntoView {
    let lab = use_lab_data();
    let people = Memo::new(move |_| accuracies(&lab.top1.get()));
    view! {
        <AccuracyHistogram
            people=people.into()
            title="Top-1 token accuracy of the imported participants (GPT-2 in blue)"
        />
        <Show when=move || lab.two_token.with(|r| r.iter().any(|r| !r.practice))>
            <PerplexityChart records=lab.two_token.into() who="imported participants" />
        </Show>
    }
}

/// The player's top-1 accuracy, live, among the participants imported in "Your data".
#[component]
pub fn LiveTop1Histogram() -> impl IntoView {
    let lab = use_lab_data();
    let game = super::controller::use_token_game();
    let you = game.participant.get_value();
    let me = you.clone();
    let people = Memo::new(move |_| {
        // Their own imported export would count twice.
        let mut all: Vec<_> = lab
            .top1
            .get()
            .into_iter()
            .filter(|r| r.participant != me)
            .collect();
        all.extend(game.top1.get());
        accuracies(&all)
    });
    view! {
        <AccuracyHistogram
            people=people.into()
            you
            title="Top-1 accuracy per participant: you in black, GPT-2 in blue (import others' exports on the first screen)"
        />
    }
}
