//! The inference worker's product helpers: more workers running this same wasm, each holding
//! its columns of every packed weight, woken through shared memory to compute them beside the
//! worker (the browser's CPU backend on several cores; see
//! [`crate::model::ops::product_helpers`]).
//!
//! Shared memory exists only where the page is cross-origin isolated ([`super::cpu_threads`]
//! decides how many helpers; [`super::shared_job`] is its layout). The worker writes a job
//! (weight, rows, input) and bumps the generation; each helper claims the pieces of its columns
//! one at a time, computes them, writes how many values it wrote and the job it finished, and
//! counts itself done. The worker, its own columns done, claims the pieces no helper has, then
//! waits for the helpers that claimed any. Each side watches the other's count for a moment,
//! then sleeps on it (`Atomics.wait`, allowed in workers) until woken
//! ([`super::shared_job::wait_for_change`]); the worker's sleep has a time limit: a helper that
//! does not answer stops the pool, and the worker computes alone from then on.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use js_sys::{Atomics, Float32Array, Int32Array, SharedArrayBuffer};
use wasm_bindgen::JsValue;

use super::helper_messages;
use super::shared_job::{
    CAPACITY, CLAIMS, DONE, FAILED, FINISHED, GENERATION, HEADER_INTS, HELPERS_ASLEEP, INPUT_BYTES,
    LENGTHS, MAX_THREADS, ROWS, STOP, WEIGHT, WORKER_ASLEEP, Waited, claim_piece, job_tag,
    output_bytes, unclaimed, wait_for_change, wake_sleepers,
};
use super::started_job::StartedJob;
use crate::model::ops::product_helpers::{HelperError, ProductHelpers, WeightPart};

/// How long the worker waits for the helpers' answers: the first job also waits for them to
/// finish starting and taking their parts.
const ANSWER_WITHIN_MS: u32 = 30_000;

/// The helpers of one loaded model (stopped when it goes).
#[derive(Debug)]
pub struct WorkerHelpers {
    workers: Vec<web_sys::Worker>,
    control: Int32Array,
    memory: SharedArrayBuffer,
    stopped: AtomicBool,
    joined: AtomicUsize,
    job: RefCell<StartedJob>,
}

// Safety: this wasm is built without atomics, so it runs on one thread and nothing can reach
// these JS handles from another; `ProductHelpers` asks for `Send + Sync` because burn's modules
// (which hold the packed weights) must be.
unsafe impl Send for WorkerHelpers {}
unsafe impl Sync for WorkerHelpers {}

impl WorkerHelpers {
    /// Starts `count` helpers and waits until each is ready to take its parts.
    pub async fn start(count: usize) -> Result<Self, String> {
        let count = count.min(MAX_THREADS - 1);
        let memory = SharedArrayBuffer::new(output_bytes(count, CAPACITY));
        let workers = helper_messages::spawn(count, &memory).await?;
        Ok(Self {
            workers,
            control: Int32Array::new_with_byte_offset_and_length(&memory, 0, HEADER_INTS),
            memory,
            stopped: AtomicBool::new(false),
            joined: AtomicUsize::new(0),
            job: RefCell::default(),
        })
    }

    /// Tells every helper that all its parts are there: from now on it waits for products.
    pub fn serve(&self) {
        for worker in &self.workers {
            helper_messages::serve(worker);
        }
    }

    /// Stops the helpers for good (their parts go with them): products stay on the worker's
    /// thread from then on.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let _ = Atomics::store(&self.control, STOP, 1);
        let _ = Atomics::add(&self.control, GENERATION, 1);
        let _ = Atomics::notify(&self.control, GENERATION);
        for worker in &self.workers {
            worker.terminate();
        }
    }

    fn failed(&self, error: HelperError) -> HelperError {
        web_sys::console::warn_1(&format!("{error}; computing on one thread from now on").into());
        self.stop();
        error
    }

    fn floats(&self, byte_offset: u32, len: usize) -> Float32Array {
        Float32Array::new_with_byte_offset_and_length(&self.memory, byte_offset, len as u32)
    }
}

impl Drop for WorkerHelpers {
    fn drop(&mut self) {
        self.stop();
    }
}

impl ProductHelpers for WorkerHelpers {
    fn count(&self) -> usize {
        self.workers.len()
    }

    fn available(&self) -> bool {
        !self.stopped.load(Ordering::SeqCst)
    }

    fn capacity(&self) -> usize {
        CAPACITY
    }

    fn share(&self, weight: usize, helper: usize, part: WeightPart) -> Result<(), HelperError> {
        let worker = self
            .workers
            .get(helper)
            .ok_or_else(|| HelperError::Unavailable(format!("no helper {helper}")))?;
        helper_messages::share(worker, weight, &part);
        Ok(())
    }

    fn start(&self, weight: usize, input: &[f32], rows: usize) -> Result<(), HelperError> {
        if !self.available() {
            return Err(HelperError::Unavailable("stopped".into()));
        }
        if input.len() > CAPACITY {
            return Err(HelperError::Unavailable(format!(
                "an input of {} values is more than the shared memory's {CAPACITY}",
                input.len()
            )));
        }
        let c = &self.control;
        let _ = Atomics::store(c, WEIGHT, weight as i32);
        let _ = Atomics::store(c, ROWS, rows as i32);
        let _ = Atomics::store(c, FAILED, 0);
        self.floats(INPUT_BYTES, input.len()).copy_from(input);
        let generation = Atomics::load(c, GENERATION).unwrap_or(0).wrapping_add(1);
        let tag = job_tag(generation);
        for helper in 0..self.count() {
            let _ = Atomics::store(c, CLAIMS + helper as u32, unclaimed(tag));
        }
        *self.job.borrow_mut() = StartedJob::new(tag, self.count());
        let _ = Atomics::store(c, GENERATION, generation);
        wake_sleepers(c, GENERATION, HELPERS_ASLEEP);
        Ok(())
    }

    fn claim(&self, helper: usize, chunks: usize) -> Option<usize> {
        let mut job = self.job.borrow_mut();
        let piece = claim_piece(&self.control, helper, job.tag, chunks);
        job.asked(helper, chunks, piece.is_some());
        piece
    }

    fn join(&self, take: &mut dyn FnMut(usize, &[f32])) -> Result<(), HelperError> {
        let c = &self.control;
        let (tag, needed) = {
            let job = self.job.borrow();
            (job.tag, job.needed())
        };
        loop {
            let done = Atomics::load(c, DONE).unwrap_or(0);
            let finished = needed
                .iter()
                .filter(|&&h| Atomics::load(c, FINISHED + h as u32).ok() == Some(tag))
                .count();
            if finished == needed.len() {
                break;
            }
            let waited = wait_for_change(c, DONE, done, WORKER_ASLEEP, f64::from(ANSWER_WITHIN_MS));
            if waited == Waited::TimedOut {
                return Err(self.failed(HelperError::NoAnswer {
                    answered: finished,
                    helpers: needed.len(),
                    waited_ms: ANSWER_WITHIN_MS,
                }));
            }
        }
        let failed = Atomics::load(c, FAILED).unwrap_or(0);
        if failed != 0 {
            return Err(self.failed(HelperError::Unavailable(format!(
                "helper {} could not compute its part",
                failed - 1
            ))));
        }
        let mut values = Vec::new();
        for &helper in &needed {
            let len = Atomics::load(c, LENGTHS + helper as u32)
                .unwrap_or(0)
                .max(0) as usize;
            values.resize(len.min(CAPACITY), 0.0);
            self.floats(output_bytes(helper, CAPACITY), values.len())
                .copy_to(&mut values);
            take(helper, &values);
        }
        // How many products the helpers computed pieces of, for the tests to read in the
        // worker (the helpers themselves cannot be asked: they sleep in `Atomics.wait`).
        if needed.is_empty() {
            return Ok(());
        }
        let joined = self.joined.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = js_sys::Reflect::set(
            &js_sys::global(),
            &JsValue::from_str("__clozelabSplitProducts"),
            &JsValue::from_f64(joined as f64),
        );
        Ok(())
    }
}
