//! The Analysis page's options: the oracle's resamples and size and the ECE convention (whose
//! answers a study's results leave out: [`super::exclusion_options`]).

use leptos::prelude::*;

/// A checkbox (`checked` at first) bound to a part of a signal.
pub(super) fn check_box(
    testid: &'static str,
    text: &'static str,
    checked: bool,
    on_change: impl Fn(bool) + 'static,
) -> impl IntoView {
    view! {
        <label>
            <input
                type="checkbox"
                checked=checked
                data-testid=testid
                on:change=move |ev| on_change(event_target_checked(&ev))
            />
            {text}
        </label>
    }
}

#[component]
pub(super) fn AnalysisOptions(
    resamples: RwSignal<usize>,
    oracle: RwSignal<String>,
    paper_ece: RwSignal<bool>,
) -> impl IntoView {
    view! {
        <div class="analysis-options">
            <label>
                "Oracle resamples "
                <input
                    type="number"
                    min="1"
                    max="50"
                    data-testid="analysis-resamples"
                    prop:value=move || resamples.get().to_string()
                    on:input=move |ev| {
                        resamples.set(event_target_value(&ev).parse().unwrap_or(10).clamp(1, 50))
                    }
                />
            </label>
            <label>
                "Oracle "
                <select
                    data-testid="analysis-oracle"
                    on:change=move |ev| oracle.set(event_target_value(&ev))
                >
                    <option value="half" selected=true>
                        "halves"
                    </option>
                    <option value="10">"2 × 10 responses"</option>
                    <option value="20">"2 × 20 responses"</option>
                </select>
            </label>
            {check_box(
                "analysis-paper-ece",
                " ECE as the paper's code bins it (confidence 1 left out)",
                false,
                move |on| paper_ece.set(on),
            )}
        </div>
    }
}
