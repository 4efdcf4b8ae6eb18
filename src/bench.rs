//! Benchmarks (printed ratios, never timed tests).
use crate::cli::Args;

pub fn forward(_args: &Args) -> Result<(), String> {
    Err("not yet".into())
}
