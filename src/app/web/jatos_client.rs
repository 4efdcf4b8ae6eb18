//! The page's side of running inside JATOS ([`crate::game::design::jatos_run`]): finding the run this page
//! belongs to, reading the study config from JATOS, the participant's list from its batch
//! session, and the heartbeat.

use std::cell::OnceCell;

use wasm_bindgen::JsCast;

use crate::game::design::jatos_run::JatosRun;
use crate::game::design::study::StudyConfig;

thread_local! {
    static RUN: OnceCell<Option<JatosRun>> = const { OnceCell::new() };
}

/// The JATOS run this page is part of (`None` outside JATOS), read once from the address and
/// JATOS's ID cookie.
pub fn run() -> Option<JatosRun> {
    RUN.with(|cell| {
        cell.get_or_init(|| {
            let window = web_sys::window()?;
            let path = window.location().pathname().ok()?;
            let cookies = window
                .document()?
                .dyn_into::<web_sys::HtmlDocument>()
                .ok()?
                .cookie()
                .ok()?;
            JatosRun::detect(&path, &cookies)
        })
        .clone()
    })
}

/// Where the app's own files are: the component's folder in JATOS, else the site's root.
pub fn app_root() -> String {
    run().map_or_else(|| "/".to_string(), |r| r.base_path)
}

/// The study config of this run: the component's input in JATOS (where `jatos-package` puts the
/// study's JSON, and where researchers can edit it), else `study.json` beside the page.
pub async fn study_config(mut run: JatosRun) -> Result<StudyConfig, String> {
    use super::fetch::fetch_text_uncached;
    use crate::data::served_file::FileKind;
    let init = fetch_text_uncached(&run.init_data_url(), FileKind::Json)
        .await
        .map_err(|e| {
            // Back after the end: JATOS has closed the run (403), and it has every answer.
            if super::delivered::was_delivered(&delivered_run_key(&run)) {
                "this study run has ended and your answers reached the study's server; you \
                 may close this page"
                    .to_string()
            } else {
                format!("JATOS did not give this run's data ({e})")
            }
        })?;
    let input = run.read_init_data(&init).map_err(|e| e.to_string())?;
    let text = match input {
        Some(text) => text,
        None => fetch_text_uncached(&format!("{}study.json", run.base_path), FileKind::Json)
            .await
            .map_err(|e| format!("the JATOS component has no study config ({e})"))?,
    };
    let config = StudyConfig::from_json(&text).map_err(|e| e.to_string())?;
    start_heartbeat(&run);
    let mut config = config.in_jatos(run);
    // The list comes before the plan: from the batch session, shared by the batch's runs.
    let params = super::query_params();
    if let Ok(participant) =
        config.participant_id(&params, &super::participant::local_participant_id())
    {
        use crate::game::design::adaptive_norming::NormingAssignment;
        use crate::game::run::jatos_batch::BatchOutcome;
        match super::jatos_batch::batch_list(&config, &participant, &params).await {
            Some(BatchOutcome::List { name, reason }) => {
                if let Some(reason) = reason {
                    config.norming_assignment = Some(NormingAssignment::List {
                        name: name.clone(),
                        reason,
                    });
                }
                if let Some(run) = config.jatos.as_mut() {
                    run.batch_list = Some(name);
                }
            }
            Some(BatchOutcome::Full(reason)) => {
                config.norming_assignment = Some(NormingAssignment::Full { reason });
            }
            None => {}
        }
    }
    Ok(config)
}

/// The key under which a JATOS run's final delivery is remembered (see
/// [`super::delivered::mark_delivered`]), known before the study's config is.
pub fn delivered_run_key(run: &JatosRun) -> String {
    format!("jatos/{}", run.study_result_uuid)
}

/// JATOS tells a participant still at work from one who left by a heartbeat (jatos.js sends
/// one a minute); failures are ignored, as jatos.js does.
fn start_heartbeat(run: &JatosRun) {
    let url = run.heartbeat_url();
    let beat = move || {
        let url = url.clone();
        leptos::task::spawn_local(async move {
            if let Ok(request) = gloo_net::http::Request::post(&url).build() {
                let _ = request.send().await;
            }
        });
    };
    beat();
    gloo_timers::callback::Interval::new(60_000, beat).forget();
}
