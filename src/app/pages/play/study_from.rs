//! A study's run from its config: fetched from the app's own origin (`?study=URL`, with adaptive
//! norming's state file beside it) or given by JATOS, then played.

use leptos::prelude::*;

use super::GameRun;
use crate::app::components::outcome::Outcome;
use crate::app::web::fetch::fetch_text_uncached;
use crate::app::web::norming_state_file::assign_from_state_file;
use crate::data::served_file::FileKind;
use crate::game::design::study::StudyConfig;

#[derive(Clone, Debug, thiserror::Error)]
enum StudyLoadError {
    #[error(transparent)]
    Fetch(crate::app::web::WebError),
    #[error(transparent)]
    Config(crate::game::design::study::StudyError),
    #[error("{0}")]
    Jatos(String),
}

/// Where a study's config comes from.
#[derive(Clone, Debug)]
pub(super) enum StudySource {
    /// `?study=URL` on the app's own origin.
    Url(String),
    /// The JATOS run this page belongs to.
    Jatos(crate::game::design::jatos_run::JatosRun),
}

/// A study config fetched from the app's own origin (or JATOS), then run.
#[component]
pub(super) fn StudyFrom(source: StudySource) -> impl IntoView {
    let config = LocalResource::new(move || {
        let source = source.clone();
        async move {
            match source {
                StudySource::Url(url) => {
                    let text = fetch_text_uncached(&url, FileKind::Json)
                        .await
                        .map_err(StudyLoadError::Fetch)?;
                    let mut config =
                        StudyConfig::from_json(&text).map_err(StudyLoadError::Config)?;
                    assign_from_state_file(&mut config, &url).await;
                    Ok(config)
                }
                StudySource::Jatos(run) => crate::app::web::jatos_client::study_config(run)
                    .await
                    .map_err(StudyLoadError::Jatos),
            }
        }
    });
    view! {
        <Outcome
            result=move || config.get()
            pending=|| view! { <p>"Loading the study…"</p> }
            failure="Cannot load the study"
            error_testid="game-error"
            render=|config| view! { <GameRun config experiment=true /> }
        />
    }
}
