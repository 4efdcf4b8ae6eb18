//! The production probes' tables: the per-strategy summary beside the human control, and the
//! per-context rows with their CSV.

use leptos::prelude::*;

use super::figure_card::FigureCard;
use crate::app::web::files::download_text;
use crate::runtime::productions::ProbeReport;

#[component]
pub(super) fn ProbeTables(report: ProbeReport) -> impl IntoView {
    let csv = report.per_context_csv();
    let summary = report
        .summary
        .iter()
        .map(|s| {
            view! {
                <tr data-strategy=s.strategy.clone() data-probe=s.probe.label()>
                    <th scope="row">{s.strategy.clone()}</th>
                    <td>{s.probe.label()}</td>
                    <td>{s.contexts}</td>
                    <td>{format!("{:+.3}", s.mean_difference)}</td>
                    <td data-col="w1">{format!("{:.3}", s.w1)}</td>
                    <td>
                        {s.control_w1.map(|v| format!("{v:.3}")).unwrap_or_else(|| "—".into())}
                    </td>
                </tr>
            }
        })
        .collect_view();
    let per_context = report
        .rows
        .iter()
        .map(|r| {
            view! {
                <tr>
                    <td>{r.strategy.clone()}</td>
                    <td>{r.context.clone()}</td>
                    <td>{r.result.probe.label()}</td>
                    <td>{format!("{:.3}", r.result.model.mean_human)}</td>
                    <td>{format!("{:.3}", r.result.model.mean_model)}</td>
                    <td>{format!("{:.3}", r.result.model.w1_cross_human)}</td>
                    <td>
                        {r
                            .result
                            .control
                            .map(|c| format!("{:.3}", c.w1_cross_human))
                            .unwrap_or_else(|| "—".into())}
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-scroll">
            <table data-testid="probes-summary">
                <thead>
                    <tr>
                        <th scope="col">"strategy"</th>
                        <th scope="col">"probe"</th>
                        <th scope="col">"contexts"</th>
                        <th scope="col">"μM − μH"</th>
                        <th scope="col">"W1(C, H)"</th>
                        <th scope="col">"human control W1"</th>
                    </tr>
                </thead>
                <tbody>{summary}</tbody>
            </table>
        </div>
        <details>
            <summary>"Per context"</summary>
            <div class="table-scroll">
                <table data-testid="probes-per-context">
                    <thead>
                        <tr>
                            <th scope="col">"strategy"</th>
                            <th scope="col">"context"</th>
                            <th scope="col">"probe"</th>
                            <th scope="col">"μH"</th>
                            <th scope="col">"μM"</th>
                            <th scope="col">"W1(C, H)"</th>
                            <th scope="col">"control W1"</th>
                        </tr>
                    </thead>
                    <tbody>{per_context}</tbody>
                </table>
            </div>
        </details>
        <button
            data-testid="download-probes"
            on:click=move |_| {
                let _ = download_text("probes_per_context.csv", "text/csv", &csv);
            }
        >
            "Per-context probes as CSV"
        </button>
        <div class="figures">
            {report.figures.into_iter().map(|f| view! { <FigureCard figure=f /> }).collect_view()}
        </div>
    }
}
