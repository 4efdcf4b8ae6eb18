//! Table 1 of Ilia & Aziz (2024) as a table, the published mean TVD beside ours.

use leptos::prelude::*;

use crate::analysis::table1::{PUBLISHED_TVD, Row, is_reference_system};
use crate::app::web::files::download_text;

fn cell(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "—".into())
}

/// Table 1, or (with people's answers only) what it needs; `left_out` says who the study's
/// exclusions left out.
#[component]
pub fn Table1View(rows: Vec<Row>, csv: String, left_out: Option<String>) -> impl IntoView {
    let left_out = left_out.map(|text| {
        view! {
            <p class="note" data-testid="table1-left-out">
                {text}
            </p>
        }
    });
    if rows.iter().all(|r| is_reference_system(&r.system)) {
        return view! {
            <section class="table1" data-testid="table1">
                <h3>"Table 1: calibration and distance to the human distributions"</h3>
                <p class="note" data-testid="table1-needs-model">
                    "Table 1 compares a model's next-word distributions with people's. These files \
                     hold people's answers only: add model samples (the paper's sample files, or \
                     sample GPT-2 for these contexts below), or the Provo norms with them."
                </p>
                {left_out}
            </section>
        }
        .into_any();
    }
    let body = rows
        .into_iter()
        .map(|r| {
            let published = PUBLISHED_TVD
                .iter()
                .find(|(n, _)| *n == r.system)
                .map(|(_, v)| *v);
            view! {
                <tr data-system=r.system.clone()>
                    <th scope="row">{r.system.clone()}</th>
                    <td>{r.contexts}</td>
                    <td data-col="ece_original">{cell(r.ece_original)}</td>
                    <td data-col="ece_human_majority">{cell(r.ece_human_majority)}</td>
                    <td data-col="ece_oracle_majority">
                        {cell(r.ece_oracle_majority.map(|e| e.mean))}
                    </td>
                    <td data-col="tvd_human">{cell(r.tvd_human)}</td>
                    <td>
                        {r
                            .tvd_human_ci
                            .map(|ci| format!("{ci:.3}"))
                            .unwrap_or_else(|| "—".into())}
                    </td>
                    <td>{published.map(|p| format!("{p:.2}")).unwrap_or_else(|| "—".into())}</td>
                    <td data-col="w1_to_oracle">{cell(r.w1_to_oracle)}</td>
                    <td data-col="top1_accuracy">{format!("{:.3}", r.top1_accuracy)}</td>
                    <td>{format!("{:.2}", r.mean_entropy)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="table1" data-testid="table1">
            <h3>"Table 1: calibration and distance to the human distributions"</h3>
            <div class="table-scroll">
                <table>
                    <thead>
                        <tr>
                            <th scope="col">"system"</th>
                            <th scope="col">"contexts"</th>
                            <th scope="col">"ECE original"</th>
                            <th scope="col">"ECE majority"</th>
                            <th scope="col">"ECE oracle"</th>
                            <th scope="col">"TVD"</th>
                            <th scope="col">"95 % CI"</th>
                            <th scope="col">"published TVD"</th>
                            <th scope="col">"W1 to oracle"</th>
                            <th scope="col">"top-1"</th>
                            <th scope="col">"entropy"</th>
                        </tr>
                    </thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
            {left_out}
            <button
                data-testid="download-table1"
                on:click=move |_| {
                    let _ = download_text("table1.csv", "text/csv", &csv);
                }
            >
                "Table 1 as CSV"
            </button>
        </section>
    }
    .into_any()
}
