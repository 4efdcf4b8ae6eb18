//! Progress reports and cancellation for long runs, with the clock passed in (the core never
//! reads a global clock): the CLI hands in `Instant`, the browser `performance.now()`.

/// Where a run stands.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    pub contexts_done: usize,
    pub contexts_total: usize,
    /// Samples finished (accepted or failed) so far, over all contexts.
    pub samples_done: usize,
    /// Seconds since the run started, by the monitor's clock.
    pub elapsed_s: f64,
}

impl Progress {
    /// Finished samples per second; `None` before any time has passed.
    pub fn samples_per_s(&self) -> Option<f64> {
        (self.elapsed_s > 0.0).then(|| self.samples_done as f64 / self.elapsed_s)
    }

    /// Fraction of contexts done, in [0, 1] (1 when there are none).
    pub fn fraction(&self) -> f64 {
        if self.contexts_total == 0 {
            1.0
        } else {
            self.contexts_done as f64 / self.contexts_total as f64
        }
    }
}

/// Receives progress after every step of a run and decides whether it goes on.
pub trait Monitor {
    /// Seconds since some fixed point of the caller's choosing.
    fn now_s(&self) -> f64;
    /// Called after each step; returning `false` cancels the run before its next step.
    fn report(&mut self, progress: &Progress) -> bool;
    /// Awaited before each report: where a run lets its host breathe. The browser's inference
    /// worker yields to its event loop here, so that a cancel message can arrive between two
    /// tree levels; natively there is nothing to wait for.
    fn pause(&mut self) -> Pause<'_> {
        Box::pin(std::future::ready(()))
    }
}

/// What [`Monitor::pause`] returns.
pub type Pause<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + 'a>>;

/// No reports, never cancels.
pub struct Unmonitored;

impl Monitor for Unmonitored {
    fn now_s(&self) -> f64 {
        0.0
    }
    fn report(&mut self, _: &Progress) -> bool {
        true
    }
}

/// A monitor from a clock and a callback.
pub struct FnMonitor<C: Fn() -> f64, R: FnMut(&Progress) -> bool> {
    pub clock: C,
    pub on_progress: R,
}

impl<C: Fn() -> f64, R: FnMut(&Progress) -> bool> Monitor for FnMonitor<C, R> {
    fn now_s(&self) -> f64 {
        (self.clock)()
    }
    fn report(&mut self, progress: &Progress) -> bool {
        (self.on_progress)(progress)
    }
}

/// Runs [`Monitor::pause`] then [`Monitor::report`]: the check every estimator makes after a
/// step. `false` means cancelled.
pub async fn checkpoint(monitor: &mut dyn Monitor, progress: &Progress) -> bool {
    monitor.pause().await;
    monitor.report(progress)
}
