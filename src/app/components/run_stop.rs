//! The two buttons of a long computation in the worker: start it (unless it runs or cannot),
//! and stop it while it runs.

use leptos::prelude::*;

#[component]
pub fn RunStop(
    /// The start button's text.
    label: String,
    /// The start button's test id; the stop button's is the same with `-stop`.
    testid: &'static str,
    /// Whether the computation runs now.
    #[prop(into)]
    running: Signal<bool>,
    /// Whether it cannot start now, beside running already.
    #[prop(optional, into)]
    blocked: Signal<bool>,
    on_run: Callback<()>,
    on_stop: Callback<()>,
) -> impl IntoView {
    view! {
        <button
            data-testid=testid
            disabled=move || running.get() || blocked.get()
            on:click=move |_| on_run.run(())
        >
            {label}
        </button>
        " "
        <button
            data-testid=format!("{testid}-stop")
            disabled=move || !running.get()
            on:click=move |_| on_stop.run(())
        >
            "Stop"
        </button>
    }
}
