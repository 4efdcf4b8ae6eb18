//! A participant declining or withdrawing from a next-word study: nothing of theirs is kept.

use leptos::prelude::*;

use super::{GameController, Phase};
use crate::app::components::withdrawal::leave_without_data;
use crate::game::run::withdrawal::Leaving;

impl GameController {
    /// Ends the study for this participant without keeping anything (see
    /// [`leave_without_data`]); the page then says what happened.
    pub fn leave(self, leaving: Leaving) {
        let study = self.study.get_value();
        let Some(scope) = self
            .session
            .with_value(|s| s.as_ref().map(|s| s.plan().scope()))
        else {
            return;
        };
        self.phase.set(Phase::Loading);
        leptos::task::spawn_local(async move {
            // The list's place is free again (before JATOS's run is aborted and its channel shut).
            self.mark_list(
                crate::game::run::jatos_batch::LedgerState::Ended,
                Vec::new(),
            )
            .await;
            let message = leave_without_data(&study, &scope, leaving, self.say).await;
            // What this page still held goes too (the in-memory store of a preview, say).
            self.store.set_value(None);
            self.session.set_value(None);
            self.records.set(Vec::new());
            self.trial.set(None);
            self.attention.clear();
            self.questionnaire.clear();
            self.phase.set(Phase::Left(message));
        });
    }
}
