//! Which backend and adapter run the model.

use leptos::prelude::*;

use crate::app::components::precision_line::PrecisionLine;
use crate::app::state::{BackendState, use_runtime};

#[component]
pub fn BackendStatus() -> impl IntoView {
    let ctx = use_runtime();
    view! {
        <p class="backend-status" data-testid="backend-status" aria-live="polite">
            {move || match ctx.backend.get() {
                BackendState::Idle => view! { <span>"The model is not started."</span> }.into_any(),
                BackendState::Detecting => view! { <span>"Detecting WebGPU…"</span> }.into_any(),
                BackendState::Failed(e) => {
                    view! {
                        <span class="error">{format!("The inference worker failed: {e}")}</span>
                    }
                        .into_any()
                }
                BackendState::Ready { kind, adapter, fallback_reason, precision, f16_offered } => {
                    view! {
                        <span data-backend=kind
                            .name()>
                            {format!(
                                "Backend: {} — {}",
                                if kind == crate::runtime::backend::BackendKind::Wgpu {
                                    "WebGPU"
                                } else {
                                    "CPU"
                                },
                                adapter,
                            )}
                        </span>
                        {fallback_reason
                            .map(|r| {
                                view! {
                                    <span class="note">{format!(" (WebGPU not used: {r})")}</span>
                                }
                            })}
                        <PrecisionLine precision f16_offered />
                    }
                        .into_any()
                }
            }}
        </p>
    }
}
