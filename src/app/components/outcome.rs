//! The three states of an asynchronous result in one place: nothing yet (what `pending`
//! shows), the error as an alert, or the value drawn by `render`.

use std::fmt::Display;

use leptos::prelude::*;

/// Shows `result()`: `pending` while it is `None`, `"{failure}: {error}"` (or the error alone)
/// as an alert, else `render(value)`.
#[component]
pub fn Outcome<T, E, V>(
    result: impl Fn() -> Option<Result<T, E>> + Send + Sync + 'static,
    render: impl Fn(T) -> V + Send + Sync + 'static,
    /// Shown while there is no result.
    #[prop(optional, into)]
    pending: ViewFn,
    /// What failed, before the error's own text.
    #[prop(optional)]
    failure: Option<&'static str>,
    #[prop(optional)] error_testid: Option<&'static str>,
) -> impl IntoView
where
    T: 'static,
    E: Display + 'static,
    V: IntoView + 'static,
{
    move || match result() {
        None => pending.run(),
        Some(Err(e)) => {
            let message = match failure {
                Some(what) => format!("{what}: {e}"),
                None => e.to_string(),
            };
            view! {
                <p class="error" role="alert" data-testid=error_testid>
                    {message}
                </p>
            }
            .into_any()
        }
        Some(Ok(value)) => render(value).into_any(),
    }
}
