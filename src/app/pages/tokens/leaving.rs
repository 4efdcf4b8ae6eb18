//! A participant declining or withdrawing from a next-token study: nothing of theirs is kept.

use leptos::prelude::*;

use super::controller::{Stage, TokenGame};
use crate::app::components::withdrawal::leave_without_data;
use crate::game::design::participant_texts::Say;
use crate::game::run::withdrawal::Leaving;

impl TokenGame {
    /// Ends the study for this participant without keeping anything (see
    /// [`leave_without_data`]); the page then says what happened.
    pub fn leave(self, leaving: Leaving) {
        let study = self.study.get_value();
        let scope = self.scope();
        // The game's stage that says only what is going on, with no round on screen.
        self.stage.set(Stage::Preparing(self.say.get(Say::Leaving)));
        leptos::task::spawn_local(async move {
            self.mark_list(crate::game::run::jatos_batch::LedgerState::Ended)
                .await;
            let message = leave_without_data(&study, &scope, leaving, self.say).await;
            self.attention.clear();
            self.questionnaire.clear();
            self.stage.set(Stage::Left(message));
        });
    }
}
