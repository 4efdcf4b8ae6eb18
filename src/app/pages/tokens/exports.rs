//! Downloads of a next-token game: long format as CSV or JSON, and the bundle with its manifest.

use leptos::prelude::*;

use super::controller::{TokenGame, use_token_game};
use crate::app::components::error_note::ErrorNote;
use crate::app::web::files::download_text;
use crate::game::design::participant_texts::Say;

#[derive(Clone, Copy)]
enum Kind {
    Csv,
    /// The CSV with formula-like cells made inert, for spreadsheets.
    SpreadsheetCsv,
    Json,
    Bundle,
}

fn render(game: TokenGame, kind: Kind) -> Result<(String, &'static str, String), String> {
    let records = game.records();
    if records.is_empty() {
        return Err("nothing to export yet".into());
    }
    let participant = game.participant.get_value();
    let stem = format!(
        "clozelab-{}-{}",
        game.game.name(),
        crate::game::run::export::file_safe(&participant)
    );
    let text = match kind {
        Kind::Csv => records
            .to_csv()
            .map(|t| (format!("{stem}.csv"), "text/csv", t)),
        Kind::SpreadsheetCsv => records.to_csv().and_then(|t| {
            let name = format!("{stem}-spreadsheet.csv");
            crate::data::spreadsheet_safe_csv(&name, &t)
                .map(|t| (name, "text/csv", t))
                .map_err(|e| crate::game::run::export::ExportError::Serialize(e.to_string()))
        }),
        Kind::Json => records
            .to_json()
            .map(|t| (format!("{stem}.json"), "application/json", t)),
        Kind::Bundle => records
            .to_bundle(&game.manifest())
            .map(|t| (format!("{stem}-bundle.json"), "application/json", t)),
    };
    text.map_err(|e| e.to_string())
}

#[component]
pub fn TokenExports() -> impl IntoView {
    let game = use_token_game();
    let problem = RwSignal::new(None::<String>);
    let say = game.say;
    let offer = move |kind: Kind| {
        let result = render(game, kind).and_then(|(name, mime, text)| {
            download_text(&name, mime, &text).map_err(|e| e.to_string())
        });
        problem.set(
            result
                .err()
                .map(|e| say.fill(Say::CannotExport, &[("error", &e)])),
        );
    };
    view! {
        <section class="data-panel" aria-labelledby="token-data-heading">
            <h3 id="token-data-heading">{say.get(Say::YourData)}</h3>
            <p>{say.get(Say::KeptHere)}</p>
            <button data-testid="export-token-csv" on:click=move |_| offer(Kind::Csv)>
                {say.get(Say::ExportCsv)}
            </button>
            <button
                data-testid="export-token-spreadsheet"
                on:click=move |_| offer(Kind::SpreadsheetCsv)
            >
                {say.get(Say::ExportSpreadsheet)}
            </button>
            <button data-testid="export-token-json" on:click=move |_| offer(Kind::Json)>
                {say.get(Say::ExportJson)}
            </button>
            <button data-testid="export-token-bundle" on:click=move |_| offer(Kind::Bundle)>
                {say.get(Say::ExportBundle)}
            </button>
            <ErrorNote message=problem />
        </section>
    }
}
