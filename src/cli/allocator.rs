//! The CLI's allocator setting: mimalloc (the `clozelab` binary's global allocator) keeps the
//! memory it frees instead of returning it to the OS.

use libmimalloc_sys::{mi_option_get, mi_option_set, mi_option_t};

/// mimalloc's `mi_option_purge_delay`: its place in `mi_option_e` (mimalloc.h of mimalloc 3,
/// which libmimalloc-sys builds by default); libmimalloc-sys names no constant for it.
const PURGE_DELAY: mi_option_t = 15;
/// mimalloc's own purge delay (ms), by which the test below knows [`PURGE_DELAY`] is the option.
#[cfg(test)]
const DEFAULT_PURGE_DELAY_MS: std::ffi::c_long = 1000;

/// Freed memory stays mapped for reuse (mimalloc returns it to the OS after a second by
/// default). The CPU backend frees and allocates buffers of megabytes in every operation of a
/// forward pass; mapped afresh, each is zeroed by the kernel first, which was half of a
/// profiled CPU forward pass. The cost is memory: the process keeps its peak.
pub fn keep_freed_memory() {
    // SAFETY: setting an option is a plain store into mimalloc's option table, allowed at any
    // time; the option index is checked by the test below.
    unsafe { mi_option_set(PURGE_DELAY, -1) }
}

/// mimalloc's purge delay now, in ms (-1: never purges).
pub fn purge_delay_ms() -> std::ffi::c_long {
    // SAFETY: reading an option is a plain load from mimalloc's option table.
    unsafe { mi_option_get(PURGE_DELAY) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_set_is_the_purge_delay() {
        // Another option at this index would not start at mimalloc's purge delay.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(purge_delay_ms(), DEFAULT_PURGE_DELAY_MS);
        }
        keep_freed_memory();
        assert_eq!(purge_delay_ms(), -1);
    }
}
