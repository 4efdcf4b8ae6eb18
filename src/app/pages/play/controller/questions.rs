//! The consent and the study's questions in the next-word game: the consent's time recorded,
//! and what follows a block of answers (the next step, or the end for one screened out).

use super::GameController;

impl GameController {
    /// The participant agreed to the consent: its time is recorded, then the study starts.
    pub fn accept_consent(self) {
        leptos::task::spawn_local(async move {
            self.questionnaire.consent().await;
            self.show_next();
        });
    }

    /// A block of questions was answered and saved: on to what comes next, unless an answer
    /// screened the participant out.
    pub fn questions_done(self, screened_out: bool) {
        if screened_out {
            self.screen_out();
        } else {
            self.show_next();
        }
    }
}
