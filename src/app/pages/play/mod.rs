//! Play: the passage list, a passage's game (play mode, with feedback), and a study's run
//! (experiment mode, from `?study=URL`, JATOS or a picked config file: [`study_from`]). Small
//! components over the [`controller::GameController`] they share through context.

pub mod controller;
mod data_panel;
mod feedback;
mod passage_list;
mod study_from;
mod trial;

use crate::app::components::model_switch::ModelSwitch;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::app::components::attention_check::AttentionCheckView;
use crate::app::components::completion::CompletionScreen;
use crate::app::components::consent::ConsentScreen;
use crate::app::components::get_model::GetModel;
use crate::app::components::question_block::QuestionsStage;
use crate::app::components::storage_warning::StorageWarning;
use crate::app::components::withdrawal::{LeftStudy, WithdrawButton};
use crate::app::data::use_lab_data;
use crate::app::pages::tokens::{ImportedTokenResults, TokenGameChooser, TokenStudy};
use crate::app::web::query_param;
use crate::game::design::study::StudyConfig;
use crate::game::run::withdrawal::Leaving;
use controller::{ModelFeedback, Phase, provide_game_controller};
use data_panel::DataPanel;
use passage_list::PassageList;
use study_from::{StudyFrom, StudySource};
use trial::TrialView;

/// "/": a study when JATOS runs this page or the URL (or a picked file) names one, else the
/// passages to choose from.
#[component]
pub fn PlayHome() -> impl IntoView {
    let lab = use_lab_data();
    let source = match crate::app::web::jatos_client::run() {
        Some(run) => Some(StudySource::Jatos(run)),
        None => query_param("study").map(StudySource::Url),
    };
    move || match (source.clone(), lab.study.get()) {
        (Some(source), _) => view! { <StudyFrom source /> }.into_any(),
        (None, Some(config)) => view! { <GameRun config experiment=true /> }.into_any(),
        (None, None) => view! {
            <GetModel />
            <PassageList />
            <TokenGameChooser />
            <DataPanel />
            <ImportedTokenResults />
        }
        .into_any(),
    }
}

/// "/play/:passage": one passage in play mode (resumes where this browser left it).
#[component]
pub fn PlayPassage() -> impl IntoView {
    let params = use_params_map();
    let lab = use_lab_data();
    move || {
        let id = params.read().get("passage").unwrap_or_default();
        match lab
            .passages
            .with(|all| all.iter().find(|p| p.id == id).cloned())
        {
            Some(passage) => {
                let mut config = StudyConfig::default_play();
                config.passages = vec![passage.id.clone()];
                config.texts = vec![passage];
                view! { <GameRun config experiment=false /> }.into_any()
            }
            None => view! {
                <p class="error" role="alert" data-testid="game-error">
                    {format!("There is no passage {id:?} here.")}
                </p>
                <a href="/">"All passages"</a>
            }
            .into_any(),
        }
    }
}

/// One game over `config`, from the first screen to completion.
#[component]
pub(crate) fn GameRun(config: StudyConfig, experiment: bool) -> impl IntoView {
    crate::app::texts::provide_texts_context(config.participant_texts());
    if config.game != crate::game::design::study::GameKind::NextWord {
        return view! { <TokenStudy config /> }.into_any();
    }
    let game = provide_game_controller();
    let title = if experiment {
        if config.title.is_empty() {
            "Study".to_string()
        } else {
            config.title.clone()
        }
    } else {
        config
            .texts
            .first()
            .map_or_else(|| "Guess the next word".to_string(), |p| p.title.clone())
    };
    game.start(config, experiment);
    view! {
        // `data-gpt2` says whether GPT-2's feedback is still being computed (it goes on in the
        // worker after the player moves to the next word).
        <section
            class="game"
            aria-labelledby="game-heading"
            data-gpt2=move || game.model_feedback.with(ModelFeedback::state_name)
        >
            <h2 id="game-heading">{title}</h2>
            <StorageWarning message=game.storage_problem />
            {move || match game.phase.get() {
                Phase::Loading => view! { <p>"Loading…"</p> }.into_any(),
                Phase::Failed(m) => {
                    view! {
                        <p class="error" role="alert" data-testid="game-error">
                            {m}
                        </p>
                    }
                        .into_any()
                }
                Phase::Consent => {
                    let (consent, instructions) = game
                        .study
                        .with_value(|s| (s.consent.clone(), s.instructions.clone()));
                    view! {
                        <ConsentScreen
                            consent
                            instructions
                            on_accept=Callback::new(move |_| game.accept_consent())
                            on_decline=Callback::new(move |_| game.leave(Leaving::Declined))
                        />
                    }
                        .into_any()
                }
                Phase::Questions(block) => {
                    view! {
                        <QuestionsStage
                            questionnaire=game.questionnaire
                            block
                            on_done=Callback::new(move |screened| game.questions_done(screened))
                            on_withdraw=Callback::new(move |_| game.leave(Leaving::Withdrew))
                        />
                    }
                        .into_any()
                }
                Phase::Playing | Phase::Feedback => {
                    let trial_or_check = move || match game.attention.pending.get() {
                        Some(check) => {
                            let context = game.trial.get_untracked().map(|t| t.context);
                            view! {
                                <AttentionCheckView
                                    attention=game.attention
                                    check
                                    context=context.unwrap_or_default()
                                    on_done=Callback::new(move |_| game.show_next())
                                />
                            }
                                .into_any()
                        }
                        None => view! { <TrialView /> }.into_any(),
                    };
                    view! {
                        {trial_or_check}
                        // Outside a study a player may compare with another model.
                        {(!experiment).then(|| view! { <ModelSwitch /> })}
                        {experiment
                            .then(|| {
                                view! {
                                    <WithdrawButton on_withdraw=Callback::new(move |_| {
                                        game.leave(Leaving::Withdrew)
                                    }) />
                                }
                            })}
                    }
                        .into_any()
                }
                Phase::Left(message) => view! { <LeftStudy message /> }.into_any(),
                Phase::Complete => {
                    let code = game.study.with_value(|s| s.completion_code.clone());
                    view! {
                        <CompletionScreen
                            code
                            experiment
                            status=game.redirect_status
                            back_href="/".to_string()
                            next_participant=game
                                .study
                                .with_value(crate::app::web::participant::on_shared_computer)
                            done_text="You have finished this passage."
                        />
                    }
                        .into_any()
                }
            }}
            <DataPanel />
        </section>
    }
    .into_any()
}
