//! A next-token game as a study (experiment mode): the model the study names is loaded in the
//! participant's browser (the two-token game samples from it), the rounds are the study's plan,
//! and at the end every answer is confirmed in storage before it is sent and the participant
//! redirected: the same rules as the next-word game.

use leptos::prelude::*;

use super::TokenGameBody;
use super::controller::{Stage, TokenGame};
use crate::app::components::completion::leave_study;
use crate::app::load_model::{LOCAL_GPT2_URL, load_from_url};
use crate::app::state::use_runtime;
use crate::app::texts::use_texts;
use crate::app::web::clock::timestamp;
use crate::app::web::participant::local_participant_id;
use crate::app::web::query_params;
use crate::game::design::participant_texts::Say;
use crate::game::design::study::StudyConfig;
use crate::game::run::export::Manifest;
use crate::game::run::session::{Keepers, confirm_saved};

/// Runs `config` (a top-1 or two-token study) for the participant the URL names.
#[component]
pub fn TokenStudy(config: StudyConfig) -> impl IntoView {
    let runtime = use_runtime();
    let params = query_params();
    let plan = config
        .participant_id(&params, &local_participant_id())
        .and_then(|participant| config.plan(&participant, &params));
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            return view! {
                <p class="error" role="alert" data-testid="game-error">
                    {use_texts().fill(Say::StudyCannotStart, &[("error", &e.to_string())])}
                </p>
            }
            .into_any();
        }
    };
    // The worker starts only here: next-word studies never download it.
    let model = config
        .model
        .clone()
        .unwrap_or_else(|| LOCAL_GPT2_URL.to_string());
    leptos::task::spawn_local(load_from_url(runtime, model));
    let title = if config.title.is_empty() {
        "Study".to_string()
    } else {
        config.title.clone()
    };
    TokenGame::provide(config, plan, true, 1, runtime);
    view! { <TokenGameBody title /> }.into_any()
}

impl TokenGame {
    /// The export manifest: model, study, plan, seed.
    pub fn manifest(self) -> Manifest {
        let manifest = self.study.with_value(|study| {
            self.plan.with_value(|plan| {
                Manifest::new(
                    &self.runtime.model_info(),
                    study,
                    plan,
                    self.seed,
                    &timestamp(),
                )
            })
        });
        match self
            .schedule
            .with_untracked(|s| s.as_ref().map(|s| s.progress().1))
        {
            Some(planned) => manifest.with_planned_answers(planned),
            None => manifest,
        }
        .with_details(
            self.questionnaire
                .details(self.attention.results.get_untracked()),
        )
    }

    /// The participant agreed to the consent: its time is recorded, then the game starts.
    pub fn accept_consent(self) {
        leptos::task::spawn_local(async move {
            self.questionnaire.consent().await;
            self.show_current();
        });
    }

    /// A block of questions was answered and saved: on, unless an answer screened the
    /// participant out (see [`crate::app::components::screening::end_screened_out`]).
    pub fn questions_done(self, screened_out: bool) {
        if !screened_out {
            return self.show_current();
        }
        let study = self.study.get_value();
        let plan = self.plan.get_value();
        self.stage.set(Stage::Preparing(self.say.get(Say::Leaving)));
        leptos::task::spawn_local(async move {
            self.questionnaire
                .answers
                .update(|answers| answers.retain(|a| a.screened_out));
            // A bundle of no answers: the manifest carries the answer that screened them out.
            let bundle = crate::game::run::export::ExportKind::Bundle
                .render(&[], &[], Some(&self.manifest()))
                .ok();
            let message = crate::app::components::screening::end_screened_out(
                &study, &plan, bundle, self.say,
            )
            .await;
            self.stage.set(Stage::Left(message));
        });
    }

    /// Records in JATOS's batch session how this run of its list ended (nothing outside JATOS,
    /// or without lists).
    pub async fn mark_list(self, state: crate::game::run::jatos_batch::LedgerState) {
        let plan = self.plan.get_value();
        if let Some(list) = &plan.list {
            let study = self.study.get_value();
            crate::app::web::jatos_batch::mark_list(
                &study,
                &plan.participant,
                &list.name,
                state,
                Vec::new(),
            )
            .await;
        }
    }

    /// The end of a study: reads every answer back from storage, and only when each scheduled
    /// round is there sends them (the bundle) and redirects.
    pub async fn finish(self) {
        let study = self.study.get_value();
        if study.submit_url.is_none() && study.redirect_url.is_none() {
            return;
        }
        let status = self.redirect_status;
        self.mark_list(crate::game::run::jatos_batch::LedgerState::Complete)
            .await;
        let saved = self.load_saved().await;
        let confirmed = match &saved {
            Ok(records) => self
                .schedule
                .with_untracked(|s| {
                    s.as_ref()
                        .map(|s| (s.saved_count(records.slots()), s.progress().1))
                })
                .map_or(Err("The game has no plan".to_string()), |(n, total)| {
                    let keepers = Keepers {
                        browser: self.memory_only.get_untracked().is_none(),
                        server: study.submit_url.is_some(),
                    };
                    confirm_saved(n, total, keepers).map_err(|e| self.say.with(|t| e.in_texts(t)))
                }),
            Err(e) => Err(self.say.fill(Say::CannotConfirm, &[("error", e)])),
        };
        let body = || {
            saved
                .map_err(|e| e.to_string())?
                .to_bundle(&self.manifest())
                .map_err(|e| e.to_string())
        };
        let key = self.scope().submission_key();
        leave_study(status, confirmed, body, &study, key).await;
    }
}
