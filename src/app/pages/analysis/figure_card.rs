//! One figure on the page: drawn on a canvas, downloadable as SVG, PNG and the CSV behind it.

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use crate::analysis::figures::Figure;
use crate::app::components::error_note::ErrorNote;
use crate::app::web::files::{download_text, download_url};

#[component]
pub fn FigureCard(figure: Figure) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let drawn = RwSignal::new(false);
    let problem = RwSignal::new(None::<String>);
    let (width, height) = figure.size();
    let figure = StoredValue::new(figure);
    Effect::new(move |_| {
        let Some(c) = canvas.get() else { return };
        c.set_width(width);
        c.set_height(height);
        let result = CanvasBackend::with_canvas_object(c)
            .ok_or_else(|| "no 2D canvas".to_string())
            .and_then(|backend| {
                figure.with_value(|f| {
                    f.draw(&backend.into_drawing_area())
                        .map_err(|e| e.to_string())
                })
            });
        match result {
            Ok(()) => drawn.set(true),
            Err(e) => problem.set(Some(e)),
        }
    });
    let id = figure.with_value(|f| f.id.clone());
    let offer = move |kind: &'static str| {
        let result = figure.with_value(|f| match kind {
            "svg" => f
                .to_svg(width, height)
                .map_err(|e| e.to_string())
                .and_then(|svg| {
                    download_text(&format!("{}.svg", f.id), "image/svg+xml", &svg)
                        .map_err(|e| e.to_string())
                }),
            "png" => canvas
                .get_untracked()
                .ok_or_else(|| "the figure is not drawn yet".to_string())
                .and_then(|c| {
                    c.to_data_url()
                        .map_err(|e| crate::app::web::js_error_text(&e))
                })
                .and_then(|url| {
                    download_url(&format!("{}.png", f.id), &url).map_err(|e| e.to_string())
                }),
            "spreadsheet" => {
                let name = format!("{}-spreadsheet.csv", f.id);
                crate::data::spreadsheet_safe_csv(&name, &f.csv)
                    .map_err(|e| e.to_string())
                    .and_then(|csv| {
                        download_text(&name, "text/csv", &csv).map_err(|e| e.to_string())
                    })
            }
            _ => download_text(&format!("{}.csv", f.id), "text/csv", &f.csv)
                .map_err(|e| e.to_string()),
        });
        problem.set(result.err());
    };
    view! {
        <figure
            class="figure-card"
            data-testid="figure"
            data-figure=id
            data-drawn=move || drawn.get().to_string()
        >
            <canvas
                node_ref=canvas
                role="img"
                aria-label=figure.with_value(|f| f.title.clone())
            ></canvas>
            <figcaption>
                {figure.with_value(|f| f.title.clone())} <span class="downloads">
                    <button data-testid="download-svg" on:click=move |_| offer("svg")>
                        "SVG"
                    </button>
                    <button data-testid="download-png" on:click=move |_| offer("png")>
                        "PNG"
                    </button>
                    <button data-testid="download-csv" on:click=move |_| offer("csv")>
                        "CSV"
                    </button>
                    <button
                        data-testid="download-csv-spreadsheet"
                        title="Cells starting with = + - @ get a leading ' so a spreadsheet cannot run them"
                        on:click=move |_| offer("spreadsheet")
                    >
                        "CSV for a spreadsheet"
                    </button>
                </span>
            </figcaption>
            <ErrorNote message=problem />
        </figure>
    }
}
