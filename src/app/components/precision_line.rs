//! The weights' precision beside the backend, with a link that reloads the page in the other
//! one where the adapter offers f16 (the choice travels as `?precision=`).

use leptos::prelude::*;

use crate::app::web::{query_param, url_with_query_param};
use crate::model::Precision;
use crate::model::precision::F16_MAX_TVD_GPT2_SMALL_SHAPE;

#[component]
pub fn PrecisionLine(precision: Precision, f16_offered: bool) -> impl IntoView {
    let asked_f16 = query_param("precision").as_deref() == Some("f16");
    let switch = |to: Precision, label: String| {
        url_with_query_param("precision", to.name()).map(|href| {
            view! {
                " "
                <a href=href data-testid="precision-switch">
                    {label}
                </a>
            }
        })
    };
    let tvd_percent = F16_MAX_TVD_GPT2_SMALL_SHAPE * 100.0;
    view! {
        <span class="precision" data-testid="precision" data-precision=precision.name()>
            {format!(" · weights in {}.", precision.name())}
            {match precision {
                Precision::F16 => {
                    switch(Precision::F32, "Back to f32 (the reference precision)".into())
                        .into_any()
                }
                Precision::F32 if f16_offered => {
                    switch(
                            Precision::F16,
                            format!(
                                "Use f16 (a third less GPU memory for the weights; next-token probabilities within {tvd_percent:.1}% in total variation of f32's)",
                            ),
                        )
                        .into_any()
                }
                Precision::F32 if asked_f16 => {
                    view! {
                        <span class="note">
                            " (f16 was asked for: it needs WebGPU with shader-f16, which this device does not offer)"
                        </span>
                    }
                        .into_any()
                }
                Precision::F32 => ().into_any(),
            }}
        </span>
    }
}
