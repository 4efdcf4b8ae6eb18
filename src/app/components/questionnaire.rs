//! A study's questions inside the next-word game: [`Questionnaire`] holds the two blocks, the
//! answers given and the consent's time (saved in IndexedDB, in memory for a preview), and says
//! which questions of a block are still to be asked.

use leptos::prelude::*;

use crate::app::web::clock::timestamp;
use crate::app::web::idb::IdbStore;
use crate::game::design::questions::{Block, Question, QuestionAnswer};
use crate::game::design::run_scope::RunScope;
use crate::game::run::export::RunDetails;

/// The questions of one participant's run.
#[derive(Clone, Copy)]
pub struct Questionnaire {
    before: StoredValue<Vec<Question>>,
    after: StoredValue<Vec<Question>>,
    scope: StoredValue<RunScope>,
    /// A preview keeps its answers in this page only.
    in_memory: StoredValue<bool>,
    pub answers: RwSignal<Vec<QuestionAnswer>>,
    pub consent_at: RwSignal<Option<String>>,
}

impl Questionnaire {
    /// No questions (play mode), until [`Self::start`].
    pub fn new() -> Self {
        Self {
            before: StoredValue::new(Vec::new()),
            after: StoredValue::new(Vec::new()),
            scope: StoredValue::new(RunScope::default()),
            in_memory: StoredValue::new(true),
            answers: RwSignal::new(Vec::new()),
            consent_at: RwSignal::new(None),
        }
    }

    /// The study's blocks for the run `scope`, with what an earlier visit of that run saved.
    pub async fn start(
        self,
        before: Vec<Question>,
        after: Vec<Question>,
        scope: RunScope,
        in_memory: bool,
    ) {
        self.before.set_value(before);
        self.after.set_value(after);
        self.scope.set_value(scope);
        self.in_memory.set_value(in_memory);
        self.clear();
        if in_memory {
            return;
        }
        if let Ok(store) = IdbStore::open().await
            && let Ok((answers, consent)) = store.question_answers(&self.scope.get_value()).await
        {
            self.answers.set(answers);
            self.consent_at.set(consent);
        }
    }

    /// Forgets the answers (the participant left the study).
    pub fn clear(self) {
        self.answers.set(Vec::new());
        self.consent_at.set(None);
    }

    /// The questions of `block` not answered yet.
    pub fn due(self, block: Block) -> Vec<Question> {
        let answered: Vec<String> = self
            .answers
            .with_untracked(|a| a.iter().map(|a| a.question.clone()).collect());
        let questions = match block {
            Block::Before => self.before.get_value(),
            Block::After => self.after.get_value(),
        };
        questions
            .into_iter()
            .filter(|q| !answered.contains(&q.id))
            .collect()
    }

    /// Records that the participant agreed to the consent, now.
    pub async fn consent(self) {
        let at = timestamp();
        if !self.in_memory.get_value()
            && let Ok(store) = IdbStore::open().await
        {
            let _ = store.save_consent(&self.scope.get_value(), &at).await;
        }
        self.consent_at.set(Some(at));
    }

    /// Records a block's answers (saved, where the browser can, before they count); `true`
    /// when one of them screens the participant out.
    pub async fn save(self, answers: Vec<QuestionAnswer>) -> bool {
        if !self.in_memory.get_value()
            && let Ok(store) = IdbStore::open().await
        {
            // Where the browser cannot store them, they still count for this page: they go to
            // the study's server in every bundle's manifest, and a reload asks again.
            for answer in &answers {
                let _ = store
                    .save_question_answer(&self.scope.get_value(), answer)
                    .await;
            }
        }
        let screened = answers.iter().any(|a| a.screened_out);
        self.answers.update(|all| {
            all.retain(|a| !answers.iter().any(|n| n.question == a.question));
            all.extend(answers);
        });
        screened
    }

    /// The run's details for its manifest, with the attention checks' `attention` answers.
    pub fn details(
        self,
        attention: Vec<crate::game::design::attention::AttentionResult>,
    ) -> RunDetails {
        RunDetails {
            consent_at: self.consent_at.get_untracked(),
            device: crate::app::web::device::device_info(),
            questions: self.answers.get_untracked(),
            attention,
        }
    }
}
