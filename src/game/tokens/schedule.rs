//! What a participant plays, slot by slot, and where a reload resumes: the first slot without a
//! saved record.

use std::collections::BTreeSet;

/// One thing to answer: a position of a passage (and, in the two-token game, which round).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    pub passage: String,
    /// 0-based token position: the token predicted from the tokens before it.
    pub position: u32,
    /// 0-based round at this position (always 0 in the top-1 game).
    pub round: u32,
    pub practice: bool,
}

/// The slots in playing order, and which are answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    slots: Vec<Slot>,
    answered: BTreeSet<(String, u32, u32)>,
}

impl Schedule {
    /// `passages`: (passage id, positions, practice) in playing order; each position gets
    /// `rounds` slots.
    pub fn new(passages: &[(String, Vec<u32>, bool)], rounds: u32) -> Self {
        let slots = passages
            .iter()
            .flat_map(|(passage, positions, practice)| {
                positions.iter().flat_map(move |&position| {
                    (0..rounds.max(1)).map(move |round| Slot {
                        passage: passage.clone(),
                        position,
                        round,
                        practice: *practice,
                    })
                })
            })
            .collect();
        Self {
            slots,
            answered: BTreeSet::new(),
        }
    }

    /// Marks saved answers (passage, position, round); unknown ones are ignored.
    pub fn resume<'a>(mut self, saved: impl IntoIterator<Item = (&'a str, u32, u32)>) -> Self {
        for (passage, position, round) in saved {
            self.answered.insert((passage.to_string(), position, round));
        }
        self
    }

    fn is_answered(&self, slot: &Slot) -> bool {
        self.answered
            .contains(&(slot.passage.clone(), slot.position, slot.round))
    }

    /// The next slot to play (the first unanswered one).
    pub fn current(&self) -> Option<&Slot> {
        self.slots.iter().find(|s| !self.is_answered(s))
    }

    /// Records an answer to `slot`.
    pub fn answer(&mut self, slot: &Slot) {
        self.answered
            .insert((slot.passage.clone(), slot.position, slot.round));
    }

    /// (answered, total) over the scheduled slots.
    pub fn progress(&self) -> (usize, usize) {
        let done = self.slots.iter().filter(|s| self.is_answered(s)).count();
        (done, self.slots.len())
    }

    pub fn is_finished(&self) -> bool {
        self.current().is_none()
    }

    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resumes_at_the_first_unanswered_slot() {
        let plan = [
            ("practice".to_string(), vec![1], true),
            ("a".to_string(), vec![1, 3], false),
        ];
        let mut s = Schedule::new(&plan, 2);
        assert_eq!(s.progress(), (0, 6));
        let first = s.current().unwrap().clone();
        assert!(first.practice);
        s.answer(&first);
        let resumed = Schedule::new(&plan, 2).resume([("practice", 1, 0), ("practice", 1, 1)]);
        let next = resumed.current().unwrap();
        assert_eq!(
            (next.passage.as_str(), next.position, next.round),
            ("a", 1, 0)
        );
        assert_eq!(resumed.progress(), (2, 6));
        let done = Schedule::new(&plan, 1).resume([("practice", 1, 0), ("a", 1, 0), ("a", 3, 0)]);
        assert!(done.is_finished());
    }
}
