//! One participant's game: the state machine from the first context to the completion screen.
//! Every response is saved through a [`ResponseStore`] before the game moves on, and a game
//! rebuilt from what the store holds resumes exactly where it stopped.

use std::collections::BTreeSet;

use super::store::{ResponseStore, StoreError};
use crate::data::ResponseRecord;
use crate::game::design::participant_texts::{ParticipantTexts, Say};
use crate::game::design::plan::Plan;
use crate::text::words::normalize;

/// Longest accepted entry, in characters.
pub const MAX_ENTRY_CHARS: usize = 40;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EntryError {
    #[error("type a word first")]
    Empty,
    #[error("one word only: letters, digits, apostrophes and hyphens")]
    Characters,
    #[error("that is too long for one word")]
    TooLong,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SubmitError {
    #[error("{0}")]
    Entry(#[from] EntryError),
    #[error("could not save the response: {0}")]
    Store(#[from] StoreError),
    #[error("the game is already finished")]
    Finished,
}

impl EntryError {
    /// What the participant reads, in the study's texts.
    pub fn say(&self) -> Say {
        match self {
            EntryError::Empty => Say::EntryEmpty,
            EntryError::Characters => Say::EntryCharacters,
            EntryError::TooLong => Say::EntryTooLong,
        }
    }
}

/// Validates a typed word: trimmed; letters, digits, apostrophes and hyphens only.
///
/// ```
/// use clozelab::game::run::session::{validate_entry, EntryError};
/// assert_eq!(validate_entry("  don't "), Ok("don't".to_string()));
/// assert_eq!(validate_entry("two words"), Err(EntryError::Characters));
/// assert_eq!(validate_entry("<b>"), Err(EntryError::Characters));
/// ```
pub fn validate_entry(raw: &str) -> Result<String, EntryError> {
    let word = raw.trim();
    if word.is_empty() {
        return Err(EntryError::Empty);
    }
    if word.chars().count() > MAX_ENTRY_CHARS {
        return Err(EntryError::TooLong);
    }
    let allowed = |c: char| {
        c.is_alphanumeric()
            || unicode_normalization::char::is_combining_mark(c)
            || matches!(c, '\'' | '\u{2019}' | '-')
    };
    if !word.chars().all(allowed) || normalize(word).is_empty() {
        return Err(EntryError::Characters);
    }
    Ok(word.to_string())
}

/// What the participant is asked now.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    pub passage_index: usize,
    pub passage_id: String,
    /// 1-based position of the word to predict.
    pub position: usize,
    pub context: String,
    pub practice: bool,
    /// Positions to predict in this passage (for a progress bar).
    pub positions_in_passage: usize,
}

/// What the participant learns after a guess.
#[derive(Clone, Debug, PartialEq)]
pub struct Reveal {
    pub record: ResponseRecord,
    pub true_word: String,
    pub correct: bool,
}

/// Times measured by the UI for one trial, in milliseconds from the context being shown.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timing {
    pub first_keystroke_ms: Option<f64>,
    pub submit_ms: Option<f64>,
}

/// A participant's game over a plan. Positions 2…n of each passage are predicted (the first
/// word is shown, as in the Provo norms).
#[derive(Clone, Debug)]
pub struct GameSession {
    plan: Plan,
    passage_index: usize,
    position: usize,
}

impl GameSession {
    /// A new game, or the resumed game when `stored` holds this participant's earlier
    /// responses: it continues after the furthest stored trial of the plan.
    pub fn resume(plan: Plan, stored: &[ResponseRecord]) -> Self {
        let done: BTreeSet<(String, u32)> = stored
            .iter()
            .filter(|r| r.participant == plan.participant && r.run == plan.run)
            .map(|r| (r.passage.clone(), r.position))
            .collect();
        let mut game = Self {
            plan,
            passage_index: 0,
            position: 2,
        };
        while let Some(t) = game.current() {
            if !done.contains(&(t.passage_id.clone(), t.position as u32)) {
                break;
            }
            game.advance();
        }
        game
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The current trial; `None` when the game is finished.
    pub fn current(&self) -> Option<Trial> {
        let (passage, practice) = self.plan.items.get(self.passage_index)?;
        let words = passage.words();
        Some(Trial {
            passage_index: self.passage_index,
            passage_id: passage.id.clone(),
            position: self.position,
            context: passage.context(self.position),
            practice: *practice,
            positions_in_passage: words.len().saturating_sub(1),
        })
    }

    pub fn is_finished(&self) -> bool {
        self.current().is_none()
    }

    /// Trials done and in all, over the whole plan.
    pub fn progress(&self) -> (usize, usize) {
        let per: Vec<usize> = self
            .plan
            .items
            .iter()
            .map(|(p, _)| p.words().len().saturating_sub(1))
            .collect();
        let total = per.iter().sum();
        if self.is_finished() {
            return (total, total);
        }
        (
            per[..self.passage_index].iter().sum::<usize>() + self.position - 2,
            total,
        )
    }

    fn advance(&mut self) {
        let Some((passage, _)) = self.plan.items.get(self.passage_index) else {
            return;
        };
        if self.position < passage.words().len() {
            self.position += 1;
        } else {
            self.passage_index += 1;
            self.position = 2;
            // Skip passages too short to predict anything.
            while self
                .plan
                .items
                .get(self.passage_index)
                .is_some_and(|(p, _)| p.words().len() < 2)
            {
                self.passage_index += 1;
            }
        }
    }

    /// Validates the entry, saves the response, and only then moves on. A rejected entry or a
    /// failed save leaves the game where it was (nothing half-done).
    pub async fn submit<S: ResponseStore>(
        &mut self,
        store: &mut S,
        raw: &str,
        timing: Timing,
        timestamp: &str,
    ) -> Result<Reveal, SubmitError> {
        let trial = self.current().ok_or(SubmitError::Finished)?;
        let word = validate_entry(raw)?;
        let (passage, _) = &self.plan.items[self.passage_index];
        let true_word = passage
            .words()
            .get(self.position - 1)
            .map(|w| w.to_string())
            .unwrap_or_default();
        let normalized = normalize(&word);
        let record = ResponseRecord {
            participant: self.plan.participant.clone(),
            passage: trial.passage_id,
            position: trial.position as u32,
            response: word,
            response_time_ms: timing.submit_ms,
            timestamp: timestamp.to_string(),
            normalized: normalized.clone(),
            first_keystroke_ms: timing.first_keystroke_ms,
            practice: trial.practice,
            run: self.plan.run.clone(),
        };
        store.save(&self.plan.scope(), &record).await?;
        self.advance();
        Ok(Reveal {
            correct: normalized == normalize(&true_word),
            true_word,
            record,
        })
    }
}

/// Why a finished participant may not be sent on yet.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum NotConfirmed {
    #[error("only {saved} of {total} responses are in storage: download them below before leaving")]
    Missing { saved: usize, total: usize },
    #[error("responses are only in memory here: download them below before leaving")]
    MemoryOnly,
}

impl NotConfirmed {
    /// What the participant reads, in the study's texts.
    pub fn in_texts(&self, texts: &ParticipantTexts) -> String {
        match self {
            NotConfirmed::Missing { saved, total } => texts.fill(
                Say::NotAllSaved,
                &[("saved", &saved.to_string()), ("total", &total.to_string())],
            ),
            NotConfirmed::MemoryOnly => texts.get(Say::MemoryOnly).to_string(),
        }
    }
}

/// What will hold a run's answers once the page is gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keepers {
    /// The browser's lasting storage (IndexedDB) holds them.
    pub browser: bool,
    /// The study's server (JATOS or its submit path) is sent them, and the participant goes on
    /// only once it has acknowledged them.
    pub server: bool,
}

/// The rule before a study's submission and redirect: every response of the plan must have been
/// read back from where it is kept, and something that outlives the page must keep it: the
/// browser's storage, or the study's server (whose acknowledgement the redirect waits for).
///
/// ```
/// use clozelab::game::run::session::{confirm_saved, Keepers, NotConfirmed};
/// let memory_only = Keepers { browser: false, server: false };
/// assert_eq!(confirm_saved(4, 4, memory_only), Err(NotConfirmed::MemoryOnly));
/// assert!(confirm_saved(4, 4, Keepers { browser: false, server: true }).is_ok());
/// ```
pub fn confirm_saved(saved: usize, total: usize, keepers: Keepers) -> Result<(), NotConfirmed> {
    if saved < total {
        return Err(NotConfirmed::Missing { saved, total });
    }
    if !(keepers.browser || keepers.server) {
        return Err(NotConfirmed::MemoryOnly);
    }
    Ok(())
}

#[cfg(test)]
mod confirm_tests {
    use super::*;

    #[test]
    fn leaving_needs_every_response_in_lasting_storage() {
        let browser = Keepers {
            browser: true,
            server: false,
        };
        let nothing = Keepers {
            browser: false,
            server: false,
        };
        let server = Keepers {
            browser: false,
            server: true,
        };
        assert_eq!(
            confirm_saved(3, 4, browser),
            Err(NotConfirmed::Missing { saved: 3, total: 4 })
        );
        assert_eq!(
            confirm_saved(3, 4, server),
            Err(NotConfirmed::Missing { saved: 3, total: 4 })
        );
        assert_eq!(confirm_saved(4, 4, nothing), Err(NotConfirmed::MemoryOnly));
        assert_eq!(confirm_saved(4, 4, browser), Ok(()));
        assert_eq!(confirm_saved(4, 4, server), Ok(()));
        assert_eq!(confirm_saved(0, 0, browser), Ok(()));
    }
}
