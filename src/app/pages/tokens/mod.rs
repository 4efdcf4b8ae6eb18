//! The next-token games (Redwood Research) beside the next-word game: "/tokens/top1/:passage"
//! and "/tokens/two-token/:passage" in play mode, with feedback, practice rounds, resume and
//! exports; the same games as studies ([`TokenStudy`]); and the chooser on the first screen.

mod bias;
mod chooser;
mod controller;
mod exports;
mod feedback;
mod imported;
mod leaving;
mod opponent;
mod play_page;
mod prepare;
mod results;
mod storage;
mod strip;
mod study;
mod top1;
mod two_token;

use leptos::prelude::*;

use crate::app::components::storage_warning::StorageWarning;

use crate::app::components::attention_check::AttentionCheckView;
use crate::app::components::completion::CompletionScreen;
use crate::app::components::consent::ConsentScreen;
use crate::app::components::progress_bar::ProgressBar;
use crate::app::components::question_block::QuestionsStage;
use crate::app::components::withdrawal::{LeftStudy, WithdrawButton};
use crate::app::state::ModelState;
use crate::game::design::participant_texts::Say;
use crate::game::design::study::GameKind;
use crate::game::run::withdrawal::Leaving;
use bias::BiasSimulation;
pub use chooser::TokenGameChooser;
use controller::{Stage, use_token_game};
use exports::TokenExports;
use feedback::{RoundFeedback, RunningScore};
pub use imported::ImportedTokenResults;
use imported::LiveTop1Histogram;
use opponent::OpponentPanel;
pub use play_page::TokenGamePage;
use results::PerplexityResults;
pub use study::TokenStudy;
use top1::Top1Round;
use two_token::TwoTokenRound;

/// A next-token game over the controller in context, from the model loading to the end.
#[component]
pub(super) fn TokenGameBody(title: String) -> impl IntoView {
    let tg = use_token_game();
    let runtime = tg.runtime;
    let game = tg.game;
    let experiment = tg.experiment;
    // Starts once a model is ready (the worker tokenises the passages too).
    let started = StoredValue::new(false);
    Effect::new(move |_| {
        if matches!(runtime.model.get(), ModelState::Ready(_)) && !started.get_value() {
            started.set_value(true);
            leptos::task::spawn_local(tg.prepare());
        }
    });
    let say = tg.say;
    let model_line = move || match runtime.model.get() {
        ModelState::Loading { loaded, total, .. } => Some(match total {
            Some(t) if t > 0 => say.fill(
                Say::LoadingModel,
                &[
                    ("loaded", &(loaded / 1_000_000).to_string()),
                    ("total", &(t / 1_000_000).to_string()),
                ],
            ),
            _ => say.get(Say::LoadingModelSteps),
        }),
        ModelState::Failed(e) if experiment => Some(say.fill(Say::ModelFailed, &[("error", &e)])),
        _ => None,
    };
    view! {
        <section class="game token-game" data-testid="token-game" data-game=game.name()>
            <h2>{title}</h2>
            <StorageWarning message=tg.memory_only />
            {move || match tg.stage.get() {
                Stage::Preparing(message) => {
                    let no_model = matches!(
                        runtime.model.get(),
                        ModelState::Empty | ModelState::Failed(_)
                    );
                    view! {
                        <p class="status" data-testid="preparing">
                            {message}
                        </p>
                        <p class="status" data-testid="model-loading">
                            {model_line}
                        </p>
                        {(no_model && !experiment)
                            .then(|| {
                                view! {
                                    <p>
                                        "This game needs GPT-2: load it on the "
                                        <a href="/model">"Model"</a> " page."
                                    </p>
                                }
                            })}
                    }
                        .into_any()
                }
                Stage::Consent => {
                    let (consent, instructions) = tg
                        .study
                        .with_value(|s| (s.consent.clone(), s.instructions.clone()));
                    view! {
                        <ConsentScreen
                            consent
                            instructions
                            on_accept=Callback::new(move |_| tg.accept_consent())
                            on_decline=Callback::new(move |_| tg.leave(Leaving::Declined))
                        />
                    }
                        .into_any()
                }
                Stage::Questions(block) => {
                    view! {
                        <QuestionsStage
                            questionnaire=tg.questionnaire
                            block
                            on_done=Callback::new(move |screened| tg.questions_done(screened))
                            on_withdraw=Callback::new(move |_| tg.leave(Leaving::Withdrew))
                        />
                    }
                        .into_any()
                }
                Stage::Playing { slot, shown_ms } => {
                    let context = tg.context_text(&slot);
                    let check = move || {
                        tg.attention
                            .pending
                            .get()
                            .map(|check| {
                                view! {
                                    <AttentionCheckView
                                        attention=tg.attention
                                        check
                                        context=context.clone()
                                        on_done=Callback::new(move |_| tg.show_current())
                                    />
                                }
                            })
                    };
                    if tg.attention.pending.get_untracked().is_some() {
                        return view! { {check} }.into_any();
                    }
                    let round = match game {
                        GameKind::TwoToken => {
                            view! { <TwoTokenRound round=slot shown_ms /> }.into_any()
                        }
                        _ => view! { <Top1Round round=slot shown_ms /> }.into_any(),
                    };
                    let withdraw = Callback::new(move |_| tg.leave(Leaving::Withdrew));
                    view! {
                        {round}
                        {experiment.then(|| view! { <WithdrawButton on_withdraw=withdraw /> })}
                    }
                        .into_any()
                }
                Stage::Left(message) => view! { <LeftStudy message /> }.into_any(),
                Stage::Scoring => {
                    view! {
                        <p class="status" data-testid="scoring">
                            {say.get(Say::Saving)}
                        </p>
                    }
                        .into_any()
                }
                Stage::Finished => {
                    let code = tg.study.with_value(|s| s.completion_code.clone());
                    view! {
                        {(!experiment)
                            .then(|| {
                                view! {
                                    <p class="done" data-testid="token-game-done">
                                        "You have played every position of this passage."
                                    </p>
                                }
                            })}
                        <CompletionScreen
                            code
                            experiment
                            status=tg.redirect_status
                            back_href="/".to_string()
                            next_participant=tg
                                .study
                                .with_value(crate::app::web::participant::on_shared_computer)
                            done_text="Play another passage or game from the first screen."
                        />
                    }
                        .into_any()
                }
                Stage::Failed(e) => {
                    view! {
                        <p class="error" role="alert" data-testid="game-error">
                            {e}
                        </p>
                    }
                        .into_any()
                }
            }}
            <div class="progress" data-testid="token-progress">
                {move || {
                    tg.schedule
                        .with(|s| {
                            s.as_ref()
                                .map(|s| {
                                    let (done, total) = s.progress();
                                    let counted = if game == GameKind::TwoToken && tg.rounds > 1 {
                                        Say::ProgressRounds
                                    } else {
                                        Say::ProgressPositions
                                    };
                                    view! { <ProgressBar done total counted /> }
                                })
                        })
                }}
            </div>
            <RunningScore />
            <RoundFeedback />
            {(game == GameKind::TwoToken && !experiment)
                .then(|| {
                    view! {
                        <PerplexityResults />
                        <OpponentPanel />
                        <BiasSimulation />
                    }
                })}
            {(game == GameKind::Top1 && !experiment).then(|| view! { <LiveTop1Histogram /> })}
            <TokenExports />
        </section>
    }
}
