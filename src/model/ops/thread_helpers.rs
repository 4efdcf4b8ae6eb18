//! [`ProductHelpers`] on native threads, and the tests that hold products split over helpers
//! against whole ones. Natively the CPU backend runs gemm on every core instead; this is the
//! contract the browser's helper workers keep (`app/worker/helper_pool.rs`), runnable here.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::panel_product::PanelWeight;
use super::product_helpers::{HelperError, ProductHelpers, WeightPart};

/// [`ProductHelpers`] on native threads, each holding its parts: the contract the browser's
/// helper workers keep, runnable in the tests.
#[derive(Debug)]
pub struct ThreadHelpers {
    jobs: Vec<std::sync::Mutex<std::sync::mpsc::Sender<Job>>>,
    done: std::sync::Mutex<std::sync::mpsc::Receiver<(usize, Vec<f32>)>>,
    /// The next unclaimed piece of each helper's part of the product started.
    next_piece: Arc<Vec<AtomicUsize>>,
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
        Self::late(count, capacity, Duration::ZERO)
    }

    /// The same, each helper starting on a product only `late` after it was asked (as a
    /// browser's helper the system has set aside for another thread).
    pub fn late(count: usize, capacity: usize, late: Duration) -> Self {
        use std::collections::HashMap;
        use std::sync::{Mutex, mpsc};
        let (done_tx, done_rx) = mpsc::channel();
        let next_piece: Arc<Vec<AtomicUsize>> =
            Arc::new((0..count).map(|_| AtomicUsize::new(0)).collect());
        let jobs = (0..count)
            .map(|helper| {
                let (tx, rx) = mpsc::channel::<Job>();
                let done = done_tx.clone();
                let next_piece = next_piece.clone();
                std::thread::spawn(move || {
                    let mut parts = HashMap::new();
                    for job in rx {
                        match job {
                            Job::Share(weight, part) => {
                                parts.insert(weight, part);
                            }
                            Job::Run(weight, input, rows) => {
                                std::thread::sleep(late);
                                let output = parts
                                    .get(&weight)
                                    .map(|part: &PanelWeight| {
                                        let mut output = vec![0.0; rows * part.dims()[1]];
                                        part.pieces_product(
                                            &input,
                                            rows,
                                            || {
                                                Some(
                                                    next_piece[helper]
                                                        .fetch_add(1, Ordering::SeqCst),
                                                )
                                            },
                                            |at, values| {
                                                output[at..at + values.len()]
                                                    .copy_from_slice(values)
                                            },
                                        );
                                        output
                                    })
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
            next_piece,
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
        let part =
            PanelWeight::from_part(part).map_err(|e| HelperError::Unavailable(e.to_string()))?;
        self.send(helper, Job::Share(weight, part))
    }

    fn start(&self, weight: usize, input: &[f32], rows: usize) -> Result<(), HelperError> {
        // Every helper has answered the last product (`join`), so none is still claiming.
        self.next_piece
            .iter()
            .for_each(|next| next.store(0, Ordering::SeqCst));
        let input: Arc<[f32]> = input.into();
        (0..self.count()).try_for_each(|h| self.send(h, Job::Run(weight, input.clone(), rows)))
    }

    fn claim(&self, helper: usize, chunks: usize) -> Option<usize> {
        let piece = self.next_piece.get(helper)?.fetch_add(1, Ordering::SeqCst);
        (piece < chunks).then_some(piece)
    }

    fn join(&self, take: &mut dyn FnMut(usize, &[f32])) -> Result<(), HelperError> {
        let done = self
            .done
            .lock()
            .map_err(|_| HelperError::Unavailable("the answers' queue is poisoned".into()))?;
        for answered in 0..self.count() {
            let (helper, output) =
                done.recv_timeout(Duration::from_secs(10))
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
    use crate::model::ops::product_helpers::{CHUNKS, SPLIT_FROM};

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
        /// Pieces of the helpers' parts the calling thread claimed.
        claimed: AtomicUsize,
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
        fn claim(&self, helper: usize, chunks: usize) -> Option<usize> {
            let piece = self.inner.claim(helper, chunks);
            if piece.is_some() {
                self.claimed.fetch_add(1, Ordering::SeqCst);
            }
            piece
        }
        fn join(&self, take: &mut dyn FnMut(usize, &[f32])) -> Result<(), HelperError> {
            let short = self.short_answer;
            self.inner
                .join(&mut |h, values| take(h, if short { &values[1..] } else { values }))
        }
    }

    fn watched(count: usize, capacity: usize) -> Arc<Watched> {
        watched_late(count, capacity, Duration::ZERO)
    }

    fn watched_late(count: usize, capacity: usize, late: Duration) -> Arc<Watched> {
        Arc::new(Watched {
            inner: ThreadHelpers::late(count, capacity, late),
            started: AtomicUsize::new(0),
            claimed: AtomicUsize::new(0),
            fail: None,
            short_answer: false,
        })
    }

    #[test]
    fn split_products_equal_whole_ones_to_the_bit() {
        // Widths that leave a part-filled last panel, 1 to 3 helpers, rows from the one-row
        // kernel to several chunks of the helpers' capacity (three rows: no part is wider than
        // `in`); each helper adds its columns of the bias.
        for (n_in, n_out) in [(160, 150), (97, 61), (300, 37)] {
            let weight = values(n_in * n_out, 5);
            let whole = PanelWeight::pack(&weight, n_in, n_out)
                .and_then(|w| w.with_bias(values(n_out, 6)))
                .unwrap();
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
    fn the_calling_thread_computes_the_pieces_of_helpers_that_are_late() {
        // Helpers that start 50 ms after being asked: the calling thread has claimed every
        // piece of theirs by then, and the product is still the whole one.
        let (n_in, n_out) = (64, 1200);
        let whole = PanelWeight::pack(&values(n_in * n_out, 4), n_in, n_out).unwrap();
        let helpers = watched_late(2, 1 << 20, Duration::from_millis(50));
        let dynamic: Arc<dyn ProductHelpers> = helpers.clone();
        let mut split = whole.clone();
        split.share_with(&dynamic, 0).unwrap();
        for rows in [1, 4] {
            let input = values(rows * n_in, 8);
            let before = helpers.claimed.load(Ordering::SeqCst);
            assert_eq!(
                split.product(&input, rows).unwrap(),
                whole.product(&input, rows).unwrap()
            );
            // Two helpers of 100 panels' thirds: 16 pieces each.
            assert_eq!(helpers.claimed.load(Ordering::SeqCst) - before, 2 * CHUNKS);
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
