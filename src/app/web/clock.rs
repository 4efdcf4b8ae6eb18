//! The page's clocks, one place for every game: reaction times from `performance.now` (monotonic,
//! sub-millisecond, unaffected by the system clock being set while a participant answers), and
//! wall-clock timestamps for the records.

use wasm_bindgen::JsCast;

/// Milliseconds on the page's monotonic clock (`performance.now`); only differences mean
/// anything.
pub fn now_ms() -> f64 {
    js_sys::global()
        .dyn_into::<web_sys::Window>()
        .ok()
        .and_then(|w| w.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}

/// The current time as RFC 3339 (UTC), for a record's timestamp.
pub fn timestamp() -> String {
    String::from(js_sys::Date::new_0().to_iso_string())
}

/// Milliseconds since the Unix epoch on the system clock, for what other browsers compare
/// (JATOS's batch ledger).
pub fn epoch_ms() -> f64 {
    js_sys::Date::now()
}
