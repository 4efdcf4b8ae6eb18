//! "/study": the Study page. A form that builds a study config for any of the three games
//! ([`passage_fields`], [`line_fields`], a Latin square's [`latin_square_fields`], how balanced lists are outside JATOS ([`list_links`]), adaptive norming's target ([`norming_fields`]),
//! [`screen_fields`], the questions' [`question_fields`] and [`own_question`],
//! [`language_fields`], [`game_fields`]), checked as you type by the same loader participants' browsers run; an
//! existing config can be loaded ([`load_config`]); the study can be played as a participant
//! would ([`preview`]) and goes out as `study.json`, a JATOS archive or a static site
//! ([`packages`]).

mod build_notice;
mod fields;
mod game_fields;
mod language_fields;
mod latin_square_fields;
mod line_fields;
mod list_links;
mod load_config;
mod norming_fields;
mod own_question;
mod packages;
mod passage_fields;
mod preview;
mod question_fields;
mod screen_fields;

use leptos::prelude::*;

use crate::game::design::study::StudyConfig;
use crate::game::design::study_draft::validated_json;
use game_fields::GameFields;
use language_fields::LanguageFields;
use latin_square_fields::LatinSquareFields;
use list_links::ListLinks;
use load_config::LoadConfig;
use norming_fields::NormingFields;
use packages::StudyPackages;
use passage_fields::PassageFields;
use preview::StudyPreview;
use question_fields::QuestionFields;
use screen_fields::ScreenFields;

/// The config being edited, shared by the page's parts.
#[derive(Clone, Copy)]
pub(crate) struct StudyDraftContext {
    pub config: RwSignal<StudyConfig>,
}

fn provide_study_draft_context() -> StudyDraftContext {
    let mut config = StudyConfig::default_play();
    config.title = "My cloze study".into();
    // Its own id, so that its participants' answers never meet another study's.
    config.study_id = Some(crate::game::design::run_scope::new_study_id(
        (js_sys::Math::random() * 4294967296.0) as u32,
        (js_sys::Math::random() * 4294967296.0) as u32,
    ));
    let context = StudyDraftContext {
        config: RwSignal::new(config),
    };
    provide_context(context);
    context
}

pub(crate) fn use_study_draft() -> StudyDraftContext {
    expect_context::<StudyDraftContext>()
}

#[component]
pub fn StudyPage() -> impl IntoView {
    let draft = provide_study_draft_context();
    let checked = Memo::new(move |_| draft.config.with(validated_json).map_err(|e| e.to_string()));
    let previewing = RwSignal::new(false);
    let end_preview = Callback::new(move |_| previewing.set(false));
    view! {
        <section class="study-page" aria-labelledby="study-heading">
            <h2 id="study-heading">"Build a study"</h2>
            <Show
                when=move || !previewing.get()
                fallback=move || {
                    view! {
                        <StudyPreview config=draft.config.get_untracked() on_end=end_preview />
                    }
                }
            >
                <StudyForm checked />
                <button
                    type="button"
                    data-testid="study-preview"
                    disabled=move || checked.with(Result::is_err)
                    on:click=move |_| previewing.set(true)
                >
                    "Preview as a participant"
                </button>
                <StudyPackages checked />
            </Show>
        </section>
    }
}

/// The form, what the loader says of it, and the JSON it makes.
#[component]
fn StudyForm(checked: Memo<Result<String, String>>) -> impl IntoView {
    let draft = use_study_draft();
    view! {
        <p>
            "Choose the game, the passages and what participants read; the config is checked \
             as you type by the same code that loads it in participants' browsers. Preview it \
             as a participant, then download it as a JATOS study archive, as a website for any \
             host, or as study.json. Nothing is uploaded: the packages are made in this page."
        </p>
        <LoadConfig />
        <form class="study-form" on:submit=|ev| ev.prevent_default()>
            <GameFields />
            <PassageFields />
            <LatinSquareFields />
            <ListLinks />
            <NormingFields />
            <ScreenFields />
            <QuestionFields />
            <LanguageFields />
        </form>
        {move || match checked.get() {
            Ok(_) => {
                view! {
                    <p class="ok" data-testid="study-valid">
                        "The config is valid."
                    </p>
                }
                    .into_any()
            }
            Err(e) => {
                view! {
                    <p class="error" role="alert" data-testid="study-error">
                        {format!("Not yet valid: {e}")}
                    </p>
                }
                    .into_any()
            }
        }}
        <details class="study-json">
            <summary>"study.json"</summary>
            <pre data-testid="study-json">
                {move || {
                    checked
                        .get()
                        .unwrap_or_else(|_| {
                            draft.config.with(crate::game::design::study_draft::tidy_json)
                        })
                }}
            </pre>
        </details>
    }
}
