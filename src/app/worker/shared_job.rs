//! The shared memory a product job goes through, as the worker writes it
//! ([`super::helper_pool`]) and each helper reads it ([`super::product_helper`]): a header of
//! 32-bit integers, then the job's input, then one output region per helper; how the pieces of
//! a helper's part are claimed, by it or by the worker; and how each side waits for the other.

use js_sys::{Atomics, Int32Array};

/// Threads the CPU backend uses at most (helpers and the worker).
pub(super) const MAX_THREADS: usize = 8;

/// Values one job's input, and each helper's output, may hold (8 MB each).
pub(super) const CAPACITY: usize = 1 << 21;

/// The header's integers.
pub(super) const GENERATION: u32 = 0;
pub(super) const WEIGHT: u32 = 1;
pub(super) const ROWS: u32 = 2;
/// Counts up each time a helper finishes a job: the worker sleeps on it.
pub(super) const DONE: u32 = 3;
pub(super) const STOP: u32 = 4;
/// A helper that could not compute writes its index + 1 here.
pub(super) const FAILED: u32 = 5;
/// How many helpers sleep in `Atomics.wait` for the next job (the worker wakes them only then).
pub(super) const HELPERS_ASLEEP: u32 = 6;
/// 1 while the worker sleeps in `Atomics.wait` for the helpers' answers.
pub(super) const WORKER_ASLEEP: u32 = 7;
/// Helper `h` writes how many values it wrote at `LENGTHS + h`,
pub(super) const LENGTHS: u32 = 8;
/// and the tag ([`job_tag`]) of the job it finished at `FINISHED + h`.
pub(super) const FINISHED: u32 = LENGTHS + MAX_THREADS as u32;
/// Helper `h`'s part of the job is claimed piece by piece at `CLAIMS + h`: the job's tag and
/// the next unclaimed piece ([`claim_piece`]).
pub(super) const CLAIMS: u32 = FINISHED + MAX_THREADS as u32;
pub(super) const HEADER_INTS: u32 = CLAIMS + MAX_THREADS as u32;

/// Bits of a claim word that count pieces (at most [`crate::model::ops::product_helpers::CHUNKS`]).
const PIECE_BITS: u32 = 10;

/// A job's tag: its generation, in the bits a claim word leaves (jobs that follow each other
/// never share one).
pub(super) fn job_tag(generation: i32) -> i32 {
    generation & ((1 << (31 - PIECE_BITS)) - 1)
}

/// The claim word of job `tag` with no piece claimed yet.
pub(super) fn unclaimed(tag: i32) -> i32 {
    tag << PIECE_BITS
}

/// Claims the next piece of helper `helper`'s part of job `tag` (of `pieces`), for whichever
/// thread asks; `None` once all are claimed, or when the job is no longer `tag` (a helper that
/// woke after the worker had claimed all its pieces and moved on).
pub(super) fn claim_piece(
    control: &Int32Array,
    helper: usize,
    tag: i32,
    pieces: usize,
) -> Option<usize> {
    let index = CLAIMS + helper as u32;
    loop {
        let word = Atomics::load(control, index).ok()?;
        let next = (word & ((1 << PIECE_BITS) - 1)) as usize;
        if word >> PIECE_BITS != tag || next >= pieces {
            return None;
        }
        if Atomics::compare_exchange(control, index, word, word + 1).ok()? == word {
            return Some(next);
        }
    }
}

/// Where the job's input starts, in bytes.
pub(super) const INPUT_BYTES: u32 = HEADER_INTS * 4;

/// Where helper `helper`'s output starts, in bytes.
pub(super) fn output_bytes(helper: usize, capacity: usize) -> u32 {
    INPUT_BYTES + ((1 + helper) * capacity * 4) as u32
}

/// How long a side checks the header in a loop before it sleeps. Waking a sleeping thread
/// (`Atomics.notify`, a futex) took tens of microseconds in Chromium, for each of the ~50
/// products of a forward pass and on both sides; the next job, or the answer, mostly comes
/// sooner than this (the worker's work between two products is its norms, attention and GELU).
const SPIN_MS: f64 = 5.0;

/// Whether the wait ended because the value changed or because time ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Waited {
    Changed,
    TimedOut,
}

/// Waits until `control[index]` is no longer `seen`: checking it in a loop for [`SPIN_MS`],
/// then asleep (counted at `asleep`, so that the other side knows to wake it) for at most
/// `timeout_ms` more.
pub(super) fn wait_for_change(
    control: &Int32Array,
    index: u32,
    seen: i32,
    asleep: u32,
    timeout_ms: f64,
) -> Waited {
    let clock = performance();
    let started = clock.as_ref().map_or(0.0, |c| c.now());
    let mut checks = 0u32;
    loop {
        if Atomics::load(control, index).unwrap_or(seen) != seen {
            return Waited::Changed;
        }
        checks += 1;
        // The clock is a call out of wasm: read it every few checks.
        if checks.is_multiple_of(64) && clock.as_ref().is_none_or(|c| c.now() - started > SPIN_MS) {
            break;
        }
    }
    let _ = Atomics::add(control, asleep, 1);
    // `Atomics.wait` returns at once if the value changed since it was last read, so a change
    // made before the count above was seen is not missed.
    let woke = Atomics::wait_with_timeout(control, index, seen, timeout_ms);
    let _ = Atomics::sub(control, asleep, 1);
    match woke.ok().and_then(|w| w.as_string()).as_deref() {
        Some("timed-out") => Waited::TimedOut,
        _ => Waited::Changed,
    }
}

/// Wakes whoever sleeps on `control[index]`, if anyone does (counted at `asleep`): a
/// notification costs a system call even when no one waits.
pub(super) fn wake_sleepers(control: &Int32Array, index: u32, asleep: u32) {
    if Atomics::load(control, asleep).unwrap_or(1) > 0 {
        let _ = Atomics::notify(control, index);
    }
}

fn performance() -> Option<web_sys::Performance> {
    use wasm_bindgen::JsCast;
    js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .ok()
        .and_then(|scope| scope.performance())
}
