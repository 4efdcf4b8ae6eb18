//! Sending what the outbox still holds ([`super::outbox`]): when the app starts (an earlier
//! visit's), and whenever the page is hidden or left or the browser comes back online.

use super::idb::IdbStore;
use super::outbox::{deliver, in_flight};

/// Sends whatever is still unacknowledged (an earlier visit's, or this page's whose tries ran
/// out), but for what this page is sending now.
pub async fn resend_pending() {
    let Ok(store) = IdbStore::open().await else {
        return;
    };
    for pending in store.outbox().await.unwrap_or_default() {
        if !in_flight(&pending.key) {
            let _ = deliver(pending, 60_000.0, |_| {}).await;
        }
    }
}

/// Sends what is pending now, when the app starts, and again whenever the page is hidden or
/// left (those sends go with `keepalive`, so closing the tab does not cut them) and whenever
/// the browser comes back online.
pub fn flush_now_and_on_leave_or_online() {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::Closure;
    leptos::task::spawn_local(resend_pending());
    let Some(window) = web_sys::window() else {
        return;
    };
    let flush = Closure::<dyn Fn()>::new(|| leptos::task::spawn_local(resend_pending()));
    let on_hidden = Closure::<dyn Fn()>::new(|| {
        let hidden = web_sys::window()
            .and_then(|w| w.document())
            .is_some_and(|d| d.hidden());
        if hidden {
            leptos::task::spawn_local(resend_pending());
        }
    });
    for event in ["online", "pagehide"] {
        let _ = window.add_event_listener_with_callback(event, flush.as_ref().unchecked_ref());
    }
    if let Some(document) = window.document() {
        let _ = document.add_event_listener_with_callback(
            "visibilitychange",
            on_hidden.as_ref().unchecked_ref(),
        );
    }
    // The listeners live as long as the page.
    flush.forget();
    on_hidden.forget();
}
