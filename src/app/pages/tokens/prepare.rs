//! Starting a next-token game: the plan's passages cut into GPT-2 tokens by the worker, the
//! schedule (play mode or the study's), and this player's saved answers.

use leptos::prelude::*;

use super::controller::{PRACTICE_ROUNDS, Stage, TokenGame};
use crate::app::worker_client::CallError;
use crate::game::design::participant_texts::Say;
use crate::game::tokens::TokenPassage;
use crate::game::tokens::records::TokenRecords;
use crate::game::tokens::schedule::{PlannedPassage, Schedule};
use crate::runtime::protocol::{Reply, Request, TokenizeRequest};

impl TokenGame {
    /// Cuts the plan's passages into tokens in the worker, loads this player's saved answers,
    /// and shows the consent screen (a study's first visit) or the first unanswered round.
    pub async fn prepare(self) {
        self.stage
            .set(Stage::Preparing(self.say.get(Say::CuttingTokens)));
        let items = self.plan.with_value(|p| p.items.clone());
        let mut all = Vec::new();
        for (passage, _) in &items {
            let reply = self
                .runtime
                .client()
                .call(Request::Tokenize(TokenizeRequest {
                    text: passage.text.clone(),
                }))
                .await;
            match reply {
                Reply::Tokens(tokens) => all.push(TokenPassage {
                    passage: passage.id.clone(),
                    ids: tokens.iter().map(|(id, _)| *id).collect(),
                    bytes: tokens.into_iter().map(|(_, b)| b).collect(),
                }),
                other => return self.fail(CallError::from_reply(other).to_string()),
            }
        }
        let planned: Vec<PlannedPassage> = items
            .iter()
            .zip(&all)
            .map(|((p, practice), t)| PlannedPassage {
                id: p.id.clone(),
                tokens: t.len(),
                practice: *practice,
            })
            .collect();
        let schedule = match (self.experiment, planned.first()) {
            (false, Some(p)) => {
                Schedule::play(&p.id, p.tokens, PRACTICE_ROUNDS as usize, self.rounds)
            }
            _ => {
                let per_passage = self.study.with_value(|s| s.positions_per_passage);
                Schedule::study(&planned, per_passage, self.rounds, self.seed)
            }
        };
        // A second tab of a study's run writes nothing while the first is open.
        if self.experiment && !self.study.with_value(|s| s.preview) {
            let open_elsewhere = || self.fail(self.say.get(Say::OpenElsewhere));
            crate::app::web::run_lock::one_tab_per_run(&self.scope(), open_elsewhere).await;
        }
        let saved = match self.load_saved().await {
            Ok(saved) => saved,
            Err(e) => return self.fail(format!("Your saved answers could not be read: {e}")),
        };
        let (checks, preview) = self
            .study
            .with_value(|s| (s.attention_checks.clone(), s.preview));
        self.attention.start(checks, self.scope(), preview).await;
        let (before, after) = self
            .study
            .with_value(|s| (s.questions_before.clone(), s.questions_after.clone()));
        self.questionnaire
            .start(before, after, self.scope(), preview)
            .await;
        let first_visit =
            saved.is_empty() && self.questionnaire.consent_at.get_untracked().is_none();
        let schedule = schedule.resume(saved.slots());
        match saved {
            TokenRecords::Top1(r) => self.top1.set(r),
            TokenRecords::TwoToken(r) => self.two_token.set(r),
        }
        self.tokens.set(all);
        self.schedule.set(Some(schedule));
        let has_consent = self
            .study
            .with_value(|s| !(s.consent.trim().is_empty() && s.instructions.trim().is_empty()));
        if self.experiment && first_visit && has_consent {
            self.stage.set(Stage::Consent);
        } else {
            self.show_current();
        }
    }
}
