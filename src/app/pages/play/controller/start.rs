//! Starting a game: the participant and plan from the URL, the store (IndexedDB, or memory for
//! a preview or a browser without storage), the answers saved before, the attention checks and
//! the questions, then the consent screen or what is due next.

use leptos::prelude::*;

use super::{AnyStore, GameController, Phase};
use crate::app::web::{self, idb::IdbStore};
use crate::game::design::participant_texts::Say;
use crate::game::design::study::StudyConfig;
use crate::game::run::session::GameSession;
use crate::game::run::store::{MemoryStore, ResponseStore};

impl GameController {
    /// Starts (or resumes from storage) `config` for this browser's participant.
    pub fn start(self, config: StudyConfig, experiment: bool) {
        leptos::task::spawn_local(async move {
            let params = web::query_params();
            let participant = match config.participant_id(
                &params,
                &crate::app::web::participant::local_participant_id(),
            ) {
                Ok(id) => id,
                Err(e) => return self.phase.set(Phase::Failed(e.to_string())),
            };
            // Adaptive norming's target was met before this participant came.
            if let Some(crate::game::design::adaptive_norming::NormingAssignment::Full { reason }) =
                config.norming_assignment.clone()
            {
                let message = crate::app::components::study_full::leave_full_study(
                    &config, &reason, self.say,
                )
                .await;
                return self.phase.set(Phase::Left(message));
            }
            let plan = match config.plan(&participant, &params) {
                Ok(p) => p.in_run(crate::app::web::participant::local_run_id),
                Err(e) => return self.phase.set(Phase::Failed(e.to_string())),
            };
            let scope = plan.scope();
            // A second tab of a study's run writes nothing while the first is open.
            if experiment && !config.preview {
                let open_elsewhere = || {
                    self.phase
                        .set(Phase::Failed(self.say.get(Say::OpenElsewhere)))
                };
                crate::app::web::run_lock::one_tab_per_run(&scope, open_elsewhere).await;
                self.phase.set(Phase::Loading);
            }
            // A preview's answers live in this page only: gone when the preview ends.
            let opened = if config.preview {
                Ok(None)
            } else {
                IdbStore::open().await.map(Some)
            };
            let store = match opened {
                Ok(None) => AnyStore::Memory(MemoryStore::default()),
                Ok(Some(s)) => AnyStore::Idb(s),
                Err(e) => {
                    // With a server to send each answer to, nothing is lost: the study goes on.
                    let say = if config.submit_url.is_some() && config.send_each_response {
                        Say::MemoryOnlyServer
                    } else {
                        Say::MemoryOnlyStorage
                    };
                    self.storage_problem
                        .set(Some(self.say.fill(say, &[("error", &e.to_string())])));
                    AnyStore::Memory(MemoryStore::default())
                }
            };
            self.memory_only.set(matches!(store, AnyStore::Memory(_)));
            let stored = store.load(&scope).await.unwrap_or_default();
            self.attention
                .start(
                    config.attention_checks.clone(),
                    scope.clone(),
                    config.preview,
                )
                .await;
            self.questionnaire
                .start(
                    config.questions_before.clone(),
                    config.questions_after.clone(),
                    scope,
                    config.preview,
                )
                .await;
            // A first visit starts on the consent/instructions screen when the study has either.
            let consent_needed = stored.is_empty()
                && self.questionnaire.consent_at.get_untracked().is_none()
                && !(config.consent.trim().is_empty() && config.instructions.trim().is_empty());
            self.records.set(stored.clone());
            self.session
                .set_value(Some(GameSession::resume(plan, &stored)));
            self.store.set_value(Some(store));
            self.study.set_value(config);
            self.experiment.set(experiment);
            if consent_needed {
                self.phase.set(Phase::Consent)
            } else {
                self.show_next()
            }
        });
    }
}
