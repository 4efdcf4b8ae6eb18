//! GPT-2's side of play-mode feedback: one sampling request to the worker per guess, the last
//! one cancelled when a new one starts or the page is left.

use leptos::prelude::*;

use super::{FEEDBACK_SAMPLES, GameController, ModelFeedback};
use crate::estimators::decoding::DecodingStrategy;
use crate::estimators::sampler::DEFAULT_TOKEN_BUDGET;
use crate::game::run::session::Reveal;
use crate::runtime::protocol::{Reply, Request, SampleWordsRequest, SeededContext};

impl GameController {
    pub(super) fn cancel_feedback(self) {
        if let Some(old) = self.feedback_call.get_value() {
            self.runtime.cancel(old);
            self.feedback_call.set_value(None);
        }
    }

    /// Asks the worker for GPT-2's word distribution after `context` (cancelling the last one)
    /// and adds the guess to the score when it is there.
    pub(super) fn compute_feedback(self, context: String, reveal: &Reveal) {
        let ctx = self.runtime;
        let human = self
            .lab
            .humans
            .with_untracked(|h| h.distribution(&reveal.record.passage, reveal.record.position));
        let (truth, guess) = (reveal.true_word.clone(), reveal.record.response.clone());
        if ctx.model.with_untracked(|m| m.summary().is_none()) {
            self.model_feedback.set(ModelFeedback::NoModel);
            self.score
                .update(|s| s.add(&truth, &guess, None, human.as_ref()));
            return;
        }
        self.model_feedback.set(ModelFeedback::Computing);
        self.cancel_feedback();
        let seed = crate::rng::stable_hash(&format!(
            "{}:{}",
            reveal.record.passage, reveal.record.position
        ));
        let request = Request::SampleWords(SampleWordsRequest {
            contexts: vec![SeededContext { context, seed }],
            samples: FEEDBACK_SAMPLES,
            decoding: DecodingStrategy::default(),
            token_budget: DEFAULT_TOKEN_BUDGET,
        });
        let call = ctx.client().start(request, None);
        self.feedback_call.set_value(Some(call.id));
        leptos::task::spawn_local(async move {
            let reply = call.reply().await;
            let (model, shown) = match reply {
                Reply::Cancelled => return,
                Reply::Words(mut all) if all.len() == 1 => {
                    let samples = all.remove(0);
                    (
                        samples.distribution().ok(),
                        ModelFeedback::Ready(samples.relative_frequencies()),
                    )
                }
                Reply::Failed(e) => (None, ModelFeedback::Failed(e)),
                other => (
                    None,
                    ModelFeedback::Failed(format!("unexpected reply {other:?}")),
                ),
            };
            self.score
                .update(|s| s.add(&truth, &guess, model.as_ref(), human.as_ref()));
            self.model_feedback.set(shown);
        });
    }
}
