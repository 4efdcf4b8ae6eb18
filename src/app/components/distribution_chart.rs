//! GPT-2's next-token distribution: a plotters bar chart on a canvas, plus the same numbers as
//! an accessible list (screen readers, copy-paste and the end-to-end test read the list).

use crate::runtime::distributions::TokenLogProb;
use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

const ROW_HEIGHT: i32 = 24;
const LABEL_WIDTH: i32 = 150;
const WIDTH: u32 = 640;

/// Why the chart could not be drawn (the list beside it still shows the numbers).
#[derive(Debug, thiserror::Error)]
enum ChartError {
    #[error("no 2D canvas context")]
    NoContext,
    #[error("drawing failed: {0}")]
    Draw(String),
}

fn drawing<E: std::error::Error + Send + Sync>(
    e: plotters::drawing::DrawingAreaErrorKind<E>,
) -> ChartError {
    ChartError::Draw(e.to_string())
}

fn draw(canvas: &web_sys::HtmlCanvasElement, tokens: &[TokenLogProb]) -> Result<(), ChartError> {
    let height = (tokens.len() as i32 * ROW_HEIGHT + 16).max(40) as u32;
    canvas.set_width(WIDTH);
    canvas.set_height(height);
    let backend = CanvasBackend::with_canvas_object(canvas.clone()).ok_or(ChartError::NoContext)?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(drawing)?;
    let max_p = tokens
        .iter()
        .map(|t| t.logprob.exp())
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let bar_space = (WIDTH as i32 - LABEL_WIDTH - 70) as f64;
    let label_style = ("monospace", 14).into_font().color(&BLACK);
    for (i, t) in tokens.iter().enumerate() {
        let y = 8 + i as i32 * ROW_HEIGHT;
        let p = t.logprob.exp();
        let w = (p / max_p * bar_space).round() as i32;
        let mut label = t.label.clone();
        if label.chars().count() > 16 {
            label = label.chars().take(15).collect::<String>() + "…";
        }
        root.draw(&Text::new(label, (6, y + 4), label_style.clone()))
            .map_err(drawing)?;
        root.draw(&Rectangle::new(
            [
                (LABEL_WIDTH, y + 2),
                (LABEL_WIDTH + w.max(1), y + ROW_HEIGHT - 4),
            ],
            RGBColor(70, 110, 190).filled(),
        ))
        .map_err(drawing)?;
        root.draw(&Text::new(
            format!("{:.2}%", 100.0 * p),
            (LABEL_WIDTH + w + 6, y + 4),
            label_style.clone(),
        ))
        .map_err(drawing)?;
    }
    root.present().map_err(drawing)
}

#[component]
pub fn DistributionChart(
    /// Tokens to show, most likely first.
    tokens: Signal<Vec<TokenLogProb>>,
    /// The context they were computed for (exposed as `data-context`).
    context: Signal<String>,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        let tokens = tokens.get();
        if let Some(element) = canvas.get()
            && let Err(e) = draw(&element, &tokens)
        {
            web_sys::console::warn_1(&format!("chart: {e}").into());
        }
    });
    view! {
        <figure class="distribution">
            <canvas
                node_ref=canvas
                role="img"
                aria-label="bar chart of the most likely next tokens"
            ></canvas>
            <figcaption>"Most likely next tokens (␣ = space, ↵ = newline)"</figcaption>
            <ol class="token-list" data-testid="token-list" data-context=move || context.get()>
                <For
                    each=move || tokens.get().into_iter().enumerate()
                    key=|(i, t)| (*i, t.id)
                    let:item
                >
                    <li data-id=item.1.id data-logprob=item.1.logprob.to_string()>
                        <code>{item.1.label.clone()}</code>
                        {format!(" {:.2}%", 100.0 * item.1.logprob.exp())}
                    </li>
                </For>
            </ol>
        </figure>
    }
}
