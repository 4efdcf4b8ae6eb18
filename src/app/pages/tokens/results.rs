//! Results of the two-token game, live: perplexity of the player (importance sampling, ±2σ over
//! pairs) beside GPT-2 scored the same way, unrounded and rounded to the buttons (the paper's
//! Figure 3), drawn with plotters on a canvas; the numbers are also listed as text.

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use super::controller::use_token_game;
use crate::analysis::perplexity::{LossEstimate, estimate_loss, model_player_pairs};
use crate::game::tokens::two_token::{ModelScores, TwoTokenRecord, pairs};

/// (label, perplexity, low, high) per player.
type Bar = (String, f64, f64, f64);

fn bar(label: &str, e: &LossEstimate) -> Bar {
    (
        label.to_string(),
        e.perplexity_human,
        e.perplexity_human_low,
        e.perplexity_human_high,
    )
}

fn bars(records: &[TwoTokenRecord], who: &str, opponent: Option<&ModelScores>) -> Option<Vec<Bar>> {
    let player = pairs(records, None).ok()?;
    let human = estimate_loss(&player).ok()?;
    // GPT-2 answering the same rounds with its own probabilities: ln m = ln g.
    let logp: Vec<(f64, Vec<f64>)> = player
        .iter()
        .map(|p| (p.logp_true, p.rounds.iter().map(|r| r.logp_other).collect()))
        .collect();
    let exact = estimate_loss(&model_player_pairs(&player, &logp, false)).ok()?;
    let rounded = estimate_loss(&model_player_pairs(&player, &logp, true)).ok()?;
    let mut all = vec![
        bar(who, &human),
        bar("GPT-2", &exact),
        bar("GPT-2, rounded to the buttons", &rounded),
    ];
    // The second model on the same rounds, once it has scored every one.
    if let Some((name, logm)) = opponent.and_then(|o| Some((&o.name, o.for_pairs(records)?))) {
        let exact = estimate_loss(&model_player_pairs(&player, &logm, false)).ok()?;
        let rounded = estimate_loss(&model_player_pairs(&player, &logm, true)).ok()?;
        all.push(bar(name, &exact));
        all.push(bar(&format!("{name}, rounded to the buttons"), &rounded));
    }
    Some(all)
}

fn draw(canvas: &web_sys::HtmlCanvasElement, bars: &[Bar]) -> Option<()> {
    let backend = CanvasBackend::with_canvas_object(canvas.clone())?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE).ok()?;
    let max = bars.iter().map(|b| b.3).fold(1.0f64, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(10)
        .build_cartesian_2d(0.0..max, 0.0..bars.len() as f64)
        .ok()?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_labels(5)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .x_desc("perplexity (lower is better)")
        .draw()
        .ok()?;
    for (i, (label, value, low, high)) in bars.iter().enumerate() {
        let y = bars.len() as f64 - i as f64 - 1.0;
        let color = if i == 0 {
            RGBColor(200, 90, 40)
        } else {
            RGBColor(70, 110, 190)
        };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, y + 0.2), (*value, y + 0.8)],
                color.filled(),
            )))
            .ok()?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(*low, y + 0.5), (*high, y + 0.5)],
                BLACK.stroke_width(2),
            )))
            .ok()?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{label}: {value:.1}"),
                (max * 0.02, y + 0.95),
                ("sans-serif", 13).into_font(),
            )))
            .ok()?;
    }
    root.present().ok()
}

/// The player's own estimate, live.
#[component]
pub fn PerplexityResults() -> impl IntoView {
    let game = use_token_game();
    view! { <PerplexityChart records=game.two_token.into() who="You" opponent=game.opponent.into() /> }
}

/// Perplexity bars for `records` (pooled over their participants), GPT-2 beside them.
#[component]
pub fn PerplexityChart(
    records: Signal<Vec<TwoTokenRecord>>,
    /// Label of the human bar.
    who: &'static str,
    /// A second model scored on the same rounds.
    #[prop(optional)]
    opponent: Option<Signal<Option<ModelScores>>>,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let results = Memo::new(move |_| {
        let opponent = opponent.and_then(|o| o.get());
        bars(&records.get(), who, opponent.as_ref())
    });
    Effect::new(move |_| {
        if let (Some(c), Some(b)) = (canvas.get(), results.get()) {
            c.set_width(560);
            c.set_height(40 + 45 * b.len() as u32);
            let _ = draw(&c, &b);
        }
    });
    view! {
        <section class="results" data-testid="perplexity-results">
            <h3>{format!("Perplexity, estimated from the two-token answers ({who})")}</h3>
            <Show
                when=move || results.get().is_some()
                fallback=|| view! { <p>"Answer a scored round to see your estimate."</p> }
            >
                <canvas node_ref=canvas aria-hidden="true"></canvas>
                <ul data-testid="perplexity-list">
                    {move || {
                        results
                            .get()
                            .unwrap_or_default()
                            .into_iter()
                            .map(|(label, v, lo, hi)| {
                                view! {
                                    <li>
                                        {format!("{label}: {v:.1} (±2σ: {lo:.1} – {hi:.1})")}
                                    </li>
                                }
                            })
                            .collect_view()
                    }}
                </ul>
                <p class="note">
                    "With few rounds per position this estimate is biased low (it underestimates \
                        your loss); the simulation on the two-token game page shows by how much."
                </p>
            </Show>
        </section>
    }
}
