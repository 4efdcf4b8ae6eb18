//! Whose answers a study's results leave out: JATOS's test runs and previews (by default), the
//! incomplete, those who failed an attention check, those screened out, and those who answered
//! faster than a median the researcher sets. Every run left out is listed in `exclusions.csv`.

use leptos::prelude::*;

use super::options::check_box;
use crate::game::readback::exclusions::ExclusionRules;

#[component]
pub(super) fn ExclusionOptions(exclude: RwSignal<ExclusionRules>) -> impl IntoView {
    view! {
        <fieldset class="analysis-options" data-testid="exclusion-options">
            <legend>"Of a study's results, leave out"</legend>
            {check_box(
                "analysis-no-test-runs",
                " JATOS test runs and previews",
                true,
                move |on| exclude.update(|e| e.test_runs = on),
            )}
            {check_box(
                "analysis-only-complete",
                " participants who did not complete",
                false,
                move |on| exclude.update(|e| e.incomplete = on),
            )}
            {check_box(
                "analysis-no-failed-attention",
                " participants who failed an attention check",
                false,
                move |on| exclude.update(|e| e.failed_attention = on),
            )}
            {check_box(
                "analysis-no-screened-out",
                " participants a question screened out",
                false,
                move |on| exclude.update(|e| e.screened_out = on),
            )}
            <label>
                " runs whose median response time is under "
                <input
                    type="number"
                    min="0"
                    step="50"
                    placeholder="ms"
                    data-testid="analysis-min-median-ms"
                    on:input=move |ev| {
                        let ms = event_target_value(&ev).trim().parse::<f64>().ok();
                        exclude
                            .update(|e| {
                                e.min_median_response_ms = ms.filter(|m| m.is_finite() && *m > 0.0);
                            });
                    }
                /> " ms"
            </label>
        </fieldset>
    }
}
