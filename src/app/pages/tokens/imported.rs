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

fn draw(canvas: &web_sys::HtmlCanvasElement, people: &[ParticipantAccuracy]) -> Option<()> {
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
    if let Some(m) = model {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(m, 0), (m, top + 1)],
                RGBColor(70, 110, 190).stroke_width(3),
            )))
            .ok()?;
    }
    root.present().ok()
}

#[component]
pub fn ImportedTokenResults() -> impl IntoView {
    let lab = use_lab_data();
    let canvas = NodeRef::<Canvas>::new();
    let people = Memo::new(move |_| accuracies(&lab.top1.get()));
    Effect::new(move |_| {
        if let (Some(c), Some(p)) = (canvas.get(), people.get()) {
            c.set_width(560);
            c.set_height(220);
            let _ = draw(&c, &p);
        }
    });
    view! {
        <Show when=move || people.get().is_some()>
            <section class="results" data-testid="imported-top1">
                <h3>"Top-1 token accuracy of the imported participants (GPT-2 in blue)"</h3>
                <canvas node_ref=canvas aria-hidden="true"></canvas>
                <ul>{move || people.get().unwrap_or_default().into_iter().map(|p| view! {
                    <li>{format!("{}: {:.1} % over {} positions (GPT-2 {})", p.participant, 100.0 * p.accuracy, p.positions,
                        p.model_accuracy.map(|m| format!("{:.1} %", 100.0 * m)).unwrap_or_else(|| "not recorded".into()))}</li>
                }).collect_view()}</ul>
            </section>
        </Show>
        <Show when=move || lab.two_token.with(|r| r.iter().any(|r| !r.practice))>
            <PerplexityChart records=lab.two_token.into() who="imported participants"/>
        </Show>
    }
}
