//! A long worker request that a page can stop: it remembers the request in flight, cancels it
//! on the page's Stop button or when its component goes away, and shows the worker's progress
//! as a line of text.

use leptos::prelude::*;

use crate::app::state::{RuntimeContext, use_runtime};
use crate::estimators::progress::Progress;
use crate::runtime::protocol::{Reply, Request};

#[derive(Clone, Copy)]
pub struct StoppableCall {
    runtime: RuntimeContext,
    in_flight: StoredValue<Option<u64>>,
    /// The last progress report in words; empty while nothing runs.
    pub progress: RwSignal<String>,
}

impl StoppableCall {
    /// A handle for the current component: a request still running when the component is
    /// dropped is cancelled.
    pub fn new() -> Self {
        let call = Self {
            runtime: use_runtime(),
            in_flight: StoredValue::new(None),
            progress: RwSignal::new(String::new()),
        };
        on_cleanup(move || call.stop());
        call
    }

    /// Sends `request` and waits for its final reply; each progress report is shown as
    /// `describe(progress)`.
    pub async fn run(self, request: Request, describe: fn(&Progress) -> String) -> Reply {
        let progress = self.progress;
        let on_progress = Box::new(move |reply: &Reply| {
            if let Reply::Progress(p) = reply {
                progress.set(describe(p));
            }
        });
        let started = self.runtime.client().start(request, Some(on_progress));
        self.in_flight.set_value(Some(started.id));
        let reply = started.reply().await;
        self.in_flight.set_value(None);
        self.progress.set(String::new());
        reply
    }

    /// Cancels the request in flight, if any.
    pub fn stop(self) {
        if let Some(id) = self.in_flight.get_value() {
            self.runtime.cancel(id);
        }
    }
}
