//! The end of a game: thanks, the completion code, and what happened to the responses.

use leptos::prelude::*;

#[component]
pub fn CompletionScreen(
    /// The study's completion code (empty: none shown).
    code: String,
    experiment: bool,
    /// Sending and redirecting, as it goes.
    status: RwSignal<String>,
    /// Where play mode offers to go next.
    back_href: String,
    done_text: &'static str,
) -> impl IntoView {
    view! {
        <div class="complete" data-testid="complete">
            <p>{if experiment { "Thank you — you have finished." } else { done_text }}</p>
            {(!code.is_empty()).then(|| view! { <p>"Completion code: " <strong data-testid="completion-code">{code}</strong></p> })}
            <p aria-live="polite" data-testid="redirect-status">{move || status.get()}</p>
            {(!experiment).then(|| view! { <a href=back_href data-testid="back-to-passages">"Choose another passage"</a> })}
        </div>
    }
}

/// `text` with its first letter upper-case (error messages start lower-case).
pub fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// What a finished study does, for every game: once every response is confirmed in storage
/// (`confirmed`), sends `body` to the study's submit path (if any), then redirects (if asked).
/// Each step's outcome shows in `status`; nothing is sent or left before the one before it
/// succeeded.
pub async fn leave_study(
    status: RwSignal<String>,
    confirmed: Result<(), String>,
    body: impl FnOnce() -> Result<String, String>,
    submit_path: Option<String>,
    redirect: Option<String>,
) {
    if let Err(e) = confirmed {
        return status.set(e);
    }
    if let Some(path) = submit_path {
        status.set("Sending your responses…".into());
        let body = match body() {
            Ok(body) => body,
            Err(e) => {
                return status.set(format!(
                    "Your responses could not be prepared ({e}): download them below."
                ));
            }
        };
        if let Err(e) = crate::app::web::fetch::post_json(&path, &body).await {
            return status.set(format!("Your responses could not be sent ({e}). They are saved on this device: download them below and send them to the researcher."));
        }
        status.set("Your responses were sent. Thank you!".into());
    }
    let Some(url) = redirect else { return };
    status.set("All responses saved. Redirecting…".into());
    if let Some(w) = web_sys::window() {
        let _ = w.location().assign(&url);
    }
}
