//! [`ProductHelpers`] on native threads, and the tests that hold products split over helpers
//! against whole ones. Natively the CPU backend runs gemm on every core instead; this is the
//! contract the browser's helper workers keep (`app/worker/helper_pool.rs`), runnable here.

use std::sync::Arc;

use super::panel_product::PanelWeight;
use super::product_helpers::{HelperError, ProductHelpers, WeightPart};

/// [`ProductHelpers`] on native threads, each holding its parts: the contract the browser's
/// helper workers keep, runnable in the tests.
#[derive(Debug)]
pub struct ThreadHelpers {
    jobs: Vec<std::sync::Mutex<std::sync::mpsc::Sender<Job>>>,
    done: std::sync::Mutex<std::sync::mpsc::Receiver<(usize, Vec<f32>)>>,
    capacity: usize,
}

#[derive(Debug)]
enum Job {
    Share(usize, PanelWeight),
    Run(usize, Arc<[f32]>, usize),
}

impl ThreadHelpers {
    /// `count` helper threads whose jobs hold at most `capacity` values.
    pub fn new(count: usize, capacity: usize) -> Self {
        use std::collections::HashMap;
        use std::sync::{Mutex, mpsc};
        let (done_tx, done_rx) = mpsc::channel();
        let jobs = (0..count)
            .map(|helper| {
                let (tx, rx) = mpsc::channel::<Job>();
                let done = done_tx.clone();
                std::thread::spawn(move || {
                    let mut parts = HashMap::new();
                    for job in rx {
                        match job {
                            Job::Share(weight, part) => {
                                parts.insert(weight, part);
                            }
                            Job::Run(weight, input, rows) => {
                                let output = parts
                                    .get(&weight)
                                    .and_then(|p: &PanelWeight| p.product(&input, rows).ok())
                                    .unwrap_or_default();
                                if done.send((helper, output)).is_err() {
                                    return;
                                }
                            }
                        }
                    }
                });
                Mutex::new(tx)
            })
            .collect();
        Self {
            jobs,
            done: Mutex::new(done_rx),
            capacity,
        }
    }

    fn send(&self, helper: usize, job: Job) -> Result<(), HelperError> {
        self.jobs[helper]
            .lock()
            .map_err(|_| HelperError::Unavailable("a helper's queue is poisoned".into()))?
            .send(job)
            .map_err(|_| HelperError::Unavailable(format!("helper {helper} stopped")))
    }
}

impl ProductHelpers for ThreadHelpers {
    fn count(&self) -> usize {
        self.jobs.len()
    }

    fn available(&self) -> bool {
        true
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn share(&self, weight: usize, helper: usize, part: WeightPart) -> Result<(), HelperError> {
        let part = PanelWeight::from_panels(part.n_in, part.n_out, part.panels)
            .map_err(|e| HelperError::Unavailable(e.to_string()))?;
        self.send(helper, Job::Share(weight, part))
    }

    fn start(&self, weight: usize, input: &[f32], rows: usize) -> Result<(), HelperError> {
        let input: Arc<[f32]> = input.into();
        (0..self.count()).try_for_each(|h| self.send(h, Job::Run(weight, input.clone(), rows)))
    }

    fn join(&self, take: &mut dyn FnMut(usize, &[f32])) -> Result<(), HelperError> {
        let done = self
            .done
            .lock()
            .map_err(|_| HelperError::Unavailable("the answers' queue is poisoned".into()))?;
        for answered in 0..self.count() {
            let (helper, output) = done
                .recv_timeout(std::time::Duration::from_secs(10))
                .map_err(|_| HelperError::NoAnswer {
                    answered,
                    helpers: self.count(),
                    waited_ms: 10_000,
                })?;
            take(helper, &output);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ops::product_helpers::SPLIT_FROM;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn values(n: usize, seed: u32) -> Vec<f32> {
        (0..n as u32)
            .map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) % 997) as f32 / 498.0 - 1.0)
            .collect()
    }

    /// Helpers that count the products they start, and can be told to fail.
    #[derive(Debug)]
    struct Watched {
        inner: ThreadHelpers,
        started: AtomicUsize,
        fail: Option<HelperError>,
        short_answer: bool,
    }

    impl ProductHelpers for Watched {
        fn count(&self) -> usize {
            self.inner.count()
        }
        fn available(&self) -> bool {
            true
        }
        fn capacity(&self) -> usize {
            self.inner.capacity()
        }
        fn share(&self, weight: usize, helper: usize, part: WeightPart) -> Result<(), HelperError> {
            self.inner.share(weight, helper, part)
        }
        fn start(&self, weight: usize, input: &[f32], rows: usize) -> Result<(), HelperError> {
            self.started.fetch_add(1, Ordering::SeqCst);
            match &self.fail {
                Some(e) => Err(e.clone()),
                None => self.inner.start(weight, input, rows),
            }
        }
        fn join(&self, take: &mut dyn FnMut(usize, &[f32])) -> Result<(), HelperError> {
            let short = self.short_answer;
            self.inner
                .join(&mut |h, values| take(h, if short { &values[1..] } else { values }))
        }
    }

    fn watched(count: usize, capacity: usize) -> Arc<Watched> {
        Arc::new(Watched {
            inner: ThreadHelpers::new(count, capacity),
            started: AtomicUsize::new(0),
            fail: None,
            short_answer: false,
        })
    }

    #[test]
    fn split_products_equal_whole_ones_to_the_bit() {
        // Widths that leave a part-filled last panel, 1 to 3 helpers, rows from the one-row
        // kernel to several chunks of the helpers' capacity (three rows: no part is wider than `in`).
        for (n_in, n_out) in [(160, 150), (97, 61), (300, 37)] {
            let weight = values(n_in * n_out, 5);
            let whole = PanelWeight::pack(&weight, n_in, n_out).unwrap();
            for count in 1..=3 {
                let helpers = watched(count, 3 * n_in);
                let dynamic: Arc<dyn ProductHelpers> = helpers.clone();
                let mut split = whole.clone();
                split.share_with(&dynamic, 7).unwrap();
                assert_eq!(split.is_shared(), whole.panel_count() > count);
                for rows in [1, 2, 5, 9, 40] {
                    let input = values(rows * n_in, rows as u32);
                    let before = helpers.started.load(Ordering::SeqCst);
                    let got = split.product(&input, rows).unwrap();
                    assert_eq!(
                        got,
                        whole.product(&input, rows).unwrap(),
                        "[{n_in}, {n_out}] × {rows}, {count} helpers"
                    );
                    let splits = helpers.started.load(Ordering::SeqCst) - before;
                    let pays = rows * n_in * n_out >= SPLIT_FROM && split.is_shared();
                    // Chunks of at most three rows (the capacity above).
                    assert_eq!(splits, if pays { rows.div_ceil(3) } else { 0 });
                }
            }
        }
    }

    #[test]
    fn helpers_that_fail_leave_the_product_to_the_calling_thread() {
        let (n_in, n_out) = (128, 100);
        let weight = values(n_in * n_out, 9);
        let whole = PanelWeight::pack(&weight, n_in, n_out).unwrap();
        let input = values(8 * n_in, 3);
        let want = whole.product(&input, 8).unwrap();
        let failing = [
            Watched {
                fail: Some(HelperError::NoAnswer {
                    answered: 0,
                    helpers: 2,
                    waited_ms: 5,
                }),
                ..Arc::into_inner(watched(2, 1 << 20)).unwrap()
            },
            Watched {
                short_answer: true,
                ..Arc::into_inner(watched(2, 1 << 20)).unwrap()
            },
        ];
        for helpers in failing {
            let helpers: Arc<dyn ProductHelpers> = Arc::new(helpers);
            let mut split = whole.clone();
            split.share_with(&helpers, 0).unwrap();
            assert!(split.is_shared());
            assert_eq!(split.product(&input, 8).unwrap(), want);
        }
    }

    #[test]
    fn nothing_is_split_without_helpers_or_with_too_few_panels() {
        let whole = PanelWeight::pack(&values(4 * 24, 1), 4, 24).unwrap();
        for count in [0, 2, 5] {
            let helpers: Arc<dyn ProductHelpers> = Arc::new(ThreadHelpers::new(count, 1 << 10));
            let mut split = whole.clone();
            split.share_with(&helpers, 0).unwrap();
            // Two panels: one helper and the calling thread at most.
            assert!(!split.is_shared(), "{count} helpers");
        }
    }
}
