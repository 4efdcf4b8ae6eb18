//! Reductions over a workgroup's threads through shared memory, for the kernels that keep one
//! workgroup per row.

use cubecl::prelude::*;

/// The sum of `value` over the workgroup's `units` threads (a power of two), through `partial`.
#[cube]
pub(super) fn workgroup_sum<F: Float>(
    partial: &mut Shared<[F]>,
    value: F,
    unit: usize,
    #[comptime] units: usize,
) -> F {
    workgroup_reduce::<F>(partial, value, unit, units, false)
}

/// The largest `value` over the workgroup's `units` threads (a power of two), through `partial`.
#[cube]
pub(super) fn workgroup_max<F: Float>(
    partial: &mut Shared<[F]>,
    value: F,
    unit: usize,
    #[comptime] units: usize,
) -> F {
    workgroup_reduce::<F>(partial, value, unit, units, true)
}

/// A tree reduction, halving the active threads at each step: the maximum or the sum.
#[cube]
fn workgroup_reduce<F: Float>(
    partial: &mut Shared<[F]>,
    value: F,
    unit: usize,
    #[comptime] units: usize,
    #[comptime] maximum: bool,
) -> F {
    partial[unit] = value;
    sync_cube();
    let mut stride = comptime![units / 2].runtime();
    while stride > 0 {
        if unit < stride {
            let other = partial[unit + stride];
            if maximum {
                partial[unit] = F::max(partial[unit], other);
            } else {
                partial[unit] += other;
            }
        }
        sync_cube();
        stride /= 2;
    }
    let result = partial[0];
    // Nobody may overwrite `partial` for the next reduction before every thread has read this one.
    sync_cube();
    result
}
