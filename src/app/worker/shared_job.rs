//! The shared memory a product job goes through, as the worker writes it
//! ([`super::helper_pool`]) and each helper reads it ([`super::product_helper`]): a header of
//! 32-bit integers, then the job's input, then one output region per helper.

/// Threads the CPU backend uses at most (helpers and the worker).
pub(super) const MAX_THREADS: usize = 8;

/// Values one job's input, and each helper's output, may hold (8 MB each).
pub(super) const CAPACITY: usize = 1 << 21;

/// The header's integers.
pub(super) const GENERATION: u32 = 0;
pub(super) const WEIGHT: u32 = 1;
pub(super) const ROWS: u32 = 2;
pub(super) const DONE: u32 = 3;
pub(super) const STOP: u32 = 4;
/// A helper that could not compute writes its index + 1 here.
pub(super) const FAILED: u32 = 5;
/// Helper `h` writes how many values it wrote at `LENGTHS + h`.
pub(super) const LENGTHS: u32 = 8;
pub(super) const HEADER_INTS: u32 = LENGTHS + MAX_THREADS as u32;

/// Where the job's input starts, in bytes.
pub(super) const INPUT_BYTES: u32 = HEADER_INTS * 4;

/// Where helper `helper`'s output starts, in bytes.
pub(super) fn output_bytes(helper: usize, capacity: usize) -> u32 {
    INPUT_BYTES + ((1 + helper) * capacity * 4) as u32
}
