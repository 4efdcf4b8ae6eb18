//! How a long computation in the worker reports progress to the page and learns that the page
//! cancelled it.

use super::{Responder, Shared};
use crate::estimators::progress::{Monitor, Pause, Progress};
use crate::runtime::protocol::Reply;

/// Reports progress to the page and stops when the page cancels the request.
pub(super) struct PageMonitor {
    pub state: Shared,
    pub responder: Responder,
}

impl PageMonitor {
    pub fn new(state: &Shared, responder: &Responder) -> Self {
        Self {
            state: state.clone(),
            responder: responder.clone(),
        }
    }
}

impl Monitor for PageMonitor {
    fn now_s(&self) -> f64 {
        js_sys::Date::now() / 1000.0
    }
    fn report(&mut self, progress: &Progress) -> bool {
        if self.state.borrow().cancelled.contains(&self.responder.id) {
            return false;
        }
        self.responder.send(Reply::Progress(progress.clone()));
        true
    }
    fn pause(&mut self) -> Pause<'_> {
        // One macrotask: a Cancel message queued meanwhile is received before the next level.
        Box::pin(gloo_timers::future::TimeoutFuture::new(0))
    }
}

/// Seconds on the global scope's monotonic clock (`performance.now`, in a worker or in a page
/// that holds the worker's wasm itself), for timings below a millisecond; `Date.now` where the
/// scope has none.
pub(super) fn monotonic_now_s() -> f64 {
    use wasm_bindgen::JsCast;
    let performance = js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok());
    performance.map_or_else(js_sys::Date::now, |p| p.now()) / 1000.0
}
