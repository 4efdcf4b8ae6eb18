//! What a participant plays, slot by slot, and where a reload resumes: the first slot without a
//! saved record.

use std::collections::BTreeSet;

use super::positions;

/// A passage as a next-token game plays it: its id, its length in GPT-2 tokens, and whether it
/// is the practice passage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedPassage {
    pub id: String,
    pub tokens: usize,
    pub practice: bool,
}

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

    /// A study's slots: the passages in plan order; `per_passage` positions of each drawn with
    /// `seed` (every position when `None`), `rounds` rounds at each.
    pub fn study(
        passages: &[PlannedPassage],
        per_passage: Option<usize>,
        rounds: u32,
        seed: u64,
    ) -> Self {
        let plan: Vec<(String, Vec<u32>, bool)> = passages
            .iter()
            .map(|p| {
                let chosen = positions(p.tokens, per_passage, seed, &p.id);
                (p.id.clone(), chosen, p.practice)
            })
            .collect();
        Self::new(&plan, rounds)
    }

    /// Play mode: every position of one passage, the first `practice` of them marked practice.
    pub fn play(passage: &str, tokens: usize, practice: usize, rounds: u32) -> Self {
        let all = positions(tokens, None, 0, passage);
        let (first, rest) = all.split_at(practice.min(all.len()));
        let plan = [
            (passage.to_string(), first.to_vec(), true),
            (passage.to_string(), rest.to_vec(), false),
        ];
        Self::new(&plan, rounds)
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

    /// Where the next slot stands in its passage: (passage, its slots answered, its slots in
    /// all), for placing attention checks; `None` at the end.
    pub fn place_in_passage(&self) -> Option<(String, usize, usize)> {
        let next = self.current()?;
        let same: Vec<&Slot> = self
            .slots
            .iter()
            .filter(|s| s.passage == next.passage)
            .collect();
        let answered = same.iter().filter(|s| self.is_answered(s)).count();
        Some((next.passage.clone(), answered, same.len()))
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

    /// How many scheduled slots `saved` (passage, position, round) covers: the count a study
    /// confirms before it submits and redirects.
    pub fn saved_count<'a>(&self, saved: impl IntoIterator<Item = (&'a str, u32, u32)>) -> usize {
        let saved: BTreeSet<(&str, u32, u32)> = saved.into_iter().collect();
        self.slots
            .iter()
            .filter(|s| saved.contains(&(s.passage.as_str(), s.position, s.round)))
            .count()
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
        assert_eq!(resumed.place_in_passage(), Some(("a".to_string(), 0, 4)));
        let done = Schedule::new(&plan, 1).resume([("practice", 1, 0), ("a", 1, 0), ("a", 3, 0)]);
        assert!(done.is_finished());
        assert_eq!(done.place_in_passage(), None);
    }

    #[test]
    fn a_study_draws_positions_per_passage_and_rounds_per_position() {
        let passages = [
            PlannedPassage {
                id: "warm-up".into(),
                tokens: 6,
                practice: true,
            },
            PlannedPassage {
                id: "a".into(),
                tokens: 50,
                practice: false,
            },
            PlannedPassage {
                id: "b".into(),
                tokens: 3,
                practice: false,
            },
        ];
        let s = Schedule::study(&passages, Some(4), 3, 9);
        // 4 positions of each passage with enough tokens (b has only positions 1 and 2).
        assert_eq!(s.progress(), (0, (4 + 4 + 2) * 3));
        assert!(
            s.slots()[..12]
                .iter()
                .all(|x| x.practice && x.passage == "warm-up")
        );
        assert!(s.slots()[12..].iter().all(|x| !x.practice));
        assert_eq!(
            s,
            Schedule::study(&passages, Some(4), 3, 9),
            "the seed fixes the plan"
        );
        let other_seed = Schedule::study(&passages, Some(4), 3, 10);
        assert_ne!(s.slots()[12..24], other_seed.slots()[12..24]);
        let every = Schedule::study(&passages, None, 1, 9);
        assert_eq!(every.progress().1, 5 + 49 + 2);
        // What a study confirms before leaving: only slots it scheduled count.
        let first = &s.slots()[0];
        let saved = [
            (first.passage.as_str(), first.position, 0),
            ("a", 999, 0),
            ("zzz", 1, 0),
        ];
        assert_eq!(s.saved_count(saved), 1);
    }

    #[test]
    fn play_mode_marks_the_first_positions_practice() {
        let s = Schedule::play("p", 5, 2, 2);
        let flags: Vec<(u32, u32, bool)> = s
            .slots()
            .iter()
            .map(|x| (x.position, x.round, x.practice))
            .collect();
        assert_eq!(
            flags,
            [
                (1, 0, true),
                (1, 1, true),
                (2, 0, true),
                (2, 1, true),
                (3, 0, false),
                (3, 1, false),
                (4, 0, false),
                (4, 1, false)
            ]
        );
        assert_eq!(Schedule::play("p", 2, 5, 1).progress(), (0, 1));
    }
}
