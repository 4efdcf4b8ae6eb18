//! How far a study with adaptive norming is from its precision target, from its results so far:
//! what the Analysis page shows and `clozelab norming-state` prints (computed from the study's
//! results by `game::readback::norming_progress`).

use serde::{Deserialize, Serialize};

/// One study's progress towards its target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NormingProgress {
    /// The study's title.
    pub study: String,
    /// The target, in words.
    pub target: String,
    pub contexts: usize,
    /// Contexts meeting the target (each with at least the first runs' answers).
    pub met: usize,
    /// Whether the target holds: the study is full.
    pub done: bool,
    /// Completed runs per list, in the study's order.
    pub runs: Vec<(String, u64)>,
    /// The state file (JSON) a study outside JATOS serves beside its config.
    pub state_file: String,
}

impl NormingProgress {
    /// One sentence for the page.
    ///
    /// ```
    /// use clozelab::analysis::norming::progress::NormingProgress;
    /// let p = NormingProgress { study: "S".into(), target: "all of the contexts with …".into(),
    ///     contexts: 4, met: 3, done: false, runs: vec![], state_file: "{}".into() };
    /// assert_eq!(p.sentence(), "3 of 4 contexts meet the target (all of the contexts with …) on the completed runs: not yet.");
    /// ```
    pub fn sentence(&self) -> String {
        format!(
            "{} of {} contexts meet the target ({}) on the completed runs: {}",
            self.met,
            self.contexts,
            self.target,
            if self.done {
                "met, so new participants are told the study is full."
            } else {
                "not yet."
            }
        )
    }
}
