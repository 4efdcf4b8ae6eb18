//! A question screened the participant out of a next-word study (see
//! [`end_screened_out`]): only the answers that screened them out are kept and sent.

use leptos::prelude::*;

use super::{GameController, Phase};
use crate::app::components::screening::end_screened_out;
use crate::game::run::export::ExportKind;

impl GameController {
    pub(super) fn screen_out(self) {
        let study = self.study.get_value();
        let Some(plan) = self
            .session
            .with_value(|s| s.as_ref().map(|s| s.plan().clone()))
        else {
            return;
        };
        self.phase.set(Phase::Loading);
        leptos::task::spawn_local(async move {
            self.questionnaire
                .answers
                .update(|answers| answers.retain(|a| a.screened_out));
            let bundle = ExportKind::Bundle
                .render(&[], &[], self.manifest().as_ref())
                .ok();
            let message = end_screened_out(&study, &plan, bundle, self.say).await;
            self.store.set_value(None);
            self.records.set(Vec::new());
            self.trial.set(None);
            self.phase.set(Phase::Left(message));
        });
    }
}
