//! The worker's record of the product job it started ([`super::helper_pool`]): the job's tag,
//! and how many pieces of each helper's part the worker claimed, from which it knows which
//! helpers it must wait for.

/// The job started: its tag ([`super::shared_job::job_tag`]), and per helper how many of its
/// pieces the worker claimed, and of how many (once it has asked).
#[derive(Debug, Default)]
pub(super) struct StartedJob {
    pub tag: i32,
    claimed: Vec<(usize, Option<usize>)>,
}

impl StartedJob {
    pub fn new(tag: i32, helpers: usize) -> Self {
        Self {
            tag,
            claimed: vec![(0, None); helpers],
        }
    }

    /// Notes that the worker asked for a piece of `helper`'s `pieces`, and whether it got one.
    pub fn asked(&mut self, helper: usize, pieces: usize, got: bool) {
        if let Some((claimed, of)) = self.claimed.get_mut(helper) {
            *of = Some(pieces);
            *claimed += usize::from(got);
        }
    }

    /// The helpers that claimed pieces: the worker claimed fewer than all of theirs (or never
    /// asked).
    pub fn needed(&self) -> Vec<usize> {
        (0..self.claimed.len())
            .filter(|&h| {
                let (mine, of) = self.claimed[h];
                of.is_none_or(|of| mine < of)
            })
            .collect()
    }
}
