//! Play mode's feedback for one guess: right or wrong, the humans' and the loaded model's words
//! side by side (Figure 1 of Ilia & Aziz), their TVD, and the running score. The model is named
//! as loaded (GPT-2, a Pythia, a SmolLM2: switched on the Model page).

use std::collections::BTreeMap;

use leptos::prelude::*;

use super::controller::{FEEDBACK_SAMPLES, ModelFeedback, use_game};
use crate::analysis::metrics::{WordDistribution, tvd};
use crate::app::components::word_bars::WordBars;
use crate::app::data::use_lab_data;
use crate::runtime::model_source::short_name;

fn percent(x: Option<f64>) -> String {
    x.map_or("—".to_string(), |v| format!("{:.0}%", v * 100.0))
}

#[component]
pub fn Feedback() -> impl IntoView {
    let game = use_game();
    let lab = use_lab_data();
    let runtime = crate::app::state::use_runtime();
    let model_name = move || {
        runtime
            .model_summary()
            .map_or("the model".to_string(), |m| short_name(&m.name))
    };
    let Some(r) = game.reveal.get_untracked() else {
        return ().into_any();
    };
    let truth = crate::text::words::normalize(&r.true_word);
    let mine = r.record.normalized.clone();
    let human_n = lab
        .humans
        .with_untracked(|h| h.total(&r.record.passage, r.record.position));
    let human = lab
        .humans
        .with_untracked(|h| h.distribution(&r.record.passage, r.record.position));
    let human_bars: Option<BTreeMap<String, f64>> = human
        .as_ref()
        .map(|d| d.support().map(|(w, p)| (w.to_string(), p)).collect());
    let (truth2, mine2) = (truth.clone(), mine.clone());
    view! {
        <div class="feedback" data-testid="feedback">
            <p
                data-testid="verdict"
                data-correct=r.correct.to_string()
                class=if r.correct { "right" } else { "wrong" }
            >
                {if r.correct { "Right! " } else { "Not this time. " }}
                "The word was "
                <strong>{r.true_word.clone()}</strong>
                "; you said "
                <strong>{r.record.response.clone()}</strong>
                "."
            </p>
            <div class="bars-pair">
                {human_bars
                    .map(|d| {
                        view! {
                            <WordBars
                                title=format!("Humans ({human_n} responses)")
                                dist=d
                                mine=mine.clone()
                                truth=truth.clone()
                                testid="human-bars"
                            />
                        }
                    })}
                {move || match game.model_feedback.get() {
                    ModelFeedback::NoModel => {
                        view! { <p>"Load a model (Model page) to compare with it."</p> }.into_any()
                    }
                    ModelFeedback::Computing => {
                        view! {
                            <p aria-live="polite">{format!("{} is guessing…", model_name())}</p>
                        }
                            .into_any()
                    }
                    ModelFeedback::Failed(e) => {
                        view! {
                            <p class="error">{format!("{} could not guess: {e}", model_name())}</p>
                        }
                            .into_any()
                    }
                    ModelFeedback::Ready(d) => {
                        let model = WordDistribution::from_counts(
                                d.iter().map(|(w, p)| (w.clone(), *p)),
                            )
                            .ok();
                        let distance = human.as_ref().zip(model.as_ref()).map(|(h, m)| tvd(h, m));
                        view! {
                            <WordBars
                                title=format!("{} ({FEEDBACK_SAMPLES} samples)", model_name())
                                dist=d
                                mine=mine2.clone()
                                truth=truth2.clone()
                                testid="model-bars"
                            />
                            {distance
                                .map(|t| {
                                    view! {
                                        <p data-testid="tvd">
                                            {format!(
                                                "Total variation distance, {} vs humans: {t:.2}",
                                                model_name(),
                                            )}
                                        </p>
                                    }
                                })}
                        }
                            .into_any()
                    }
                }}
            </div>
            <p class="score" data-testid="score">
                {move || {
                    let s = game.score.get();
                    format!(
                        "Top-1 accuracy — you: {} · {}: {} · average human: {}",
                        percent(s.participant_accuracy()),
                        model_name(),
                        percent(s.model_accuracy()),
                        percent(s.human_accuracy()),
                    )
                }}
            </p>
        </div>
    }
    .into_any()
}
