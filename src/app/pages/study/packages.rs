//! The study's packages, made in the page from the running app's own files (listed in
//! `app-files.json` by the build) by the same core functions as `clozelab jatos-package` and
//! `site-package`: nothing to install, nothing uploaded.

use leptos::prelude::*;

use super::build_notice::BuildNotice;
use crate::app::components::error_note::ErrorNote;
use crate::app::web::fetch::{fetch_bytes_cached, fetch_bytes_uncached, fetch_text_uncached};
use crate::app::web::files::{download_bytes, download_text};
use crate::app::web::jatos_client::app_root;
use crate::data::served_file::FileKind;
use crate::game::design::study::StudyConfig;
use crate::game::packages::destination::{AnswersGo, answers_destination};
use crate::game::packages::jatos_archive::assets_dir_name;
use crate::game::packages::package::{
    APP_FILES_LIST, AppFile, jatos_study_archive, package_file_names, parse_file_list,
    static_site_archive,
};

#[derive(Clone, Copy, PartialEq)]
enum Package {
    Jatos,
    StaticSite,
}

#[component]
pub(super) fn StudyPackages(checked: Memo<Result<String, String>>) -> impl IntoView {
    let progress = RwSignal::new(None::<String>);
    let problem = RwSignal::new(None::<String>);
    let build = Action::new_local(move |package: &Package| {
        let package = *package;
        async move {
            let Ok(json) = checked.get_untracked() else {
                return;
            };
            problem.set(None);
            match make(package, &json, progress).await {
                Ok((name, bytes)) => {
                    progress.set(Some(format!("{name}: {:.1} MB", bytes.len() as f64 / 1e6)));
                    if let Err(e) = download_bytes(&name, "application/zip", &bytes) {
                        problem.set(Some(e.to_string()));
                    }
                }
                Err(e) => {
                    progress.set(None);
                    problem.set(Some(e));
                }
            }
        }
    });
    let invalid = move || checked.with(Result::is_err) || build.pending().get();
    // Where the website's answers go, or why it cannot be made (it would lose them).
    let destination = Memo::new(move |_| {
        let json = checked.get().ok()?;
        let config = StudyConfig::from_json(&json).ok()?;
        Some(answers_destination(&config).map_err(|e| e.to_string()))
    });
    let site_refused = move || invalid() || destination.with(|d| matches!(d, Some(Err(_))));
    let save_config = move |_| {
        if let Ok(json) = checked.get_untracked()
            && let Err(e) = download_text("study.json", "application/json", &json)
        {
            problem.set(Some(e.to_string()));
        }
    };
    view! {
        <section class="study-packages" aria-labelledby="packages-heading">
            <h3 id="packages-heading">"Get the study out"</h3>
            <BuildNotice />
            <ul>
                <li>
                    <button
                        type="button"
                        data-testid="study-download-jatos"
                        disabled=invalid
                        on:click=move |_| {
                            build.dispatch(Package::Jatos);
                        }
                    >
                        "JATOS study archive (.jzip)"
                    </button>
                    " Import it in JATOS (Studies › Import); results come back with JATOS's \
                     Export Results, which the Analysis page reads."
                </li>
                <li>
                    <button
                        type="button"
                        data-testid="study-download-site"
                        disabled=site_refused
                        on:click=move |_| {
                            build.dispatch(Package::StaticSite);
                        }
                    >
                        "Website (.zip)"
                    </button>
                    " For any web host: the app, the config, the model a token game needs, and \
                     README-host.txt (headers, the route fallback, the participants' link, what \
                     your submit path must do)."
                    <p data-testid="study-answers-go" class="answers-go">
                        {move || match destination.get() {
                            Some(Ok(AnswersGo::Server(url))) => {
                                format!(
                                    "Answers are POSTed to {url}: host the website with `clozelab serve`, which keeps them.",
                                )
                            }
                            Some(Ok(AnswersGo::Browser)) => {
                                "Answers stay in each participant's browser \
                                 (answers_in_browser): download them on each computer in \"Your data\"."
                                    .to_string()
                            }
                            Some(Err(reason)) => format!("No website: {reason}."),
                            None => String::new(),
                        }}
                    </p>
                </li>
                <li>
                    <button
                        type="button"
                        data-testid="study-download-config"
                        disabled=invalid
                        on:click=save_config
                    >
                        "study.json"
                    </button>
                    " The config alone, to keep or to load here again."
                </li>
            </ul>
            <p aria-live="polite" data-testid="study-package-progress">
                {move || progress.get()}
            </p>
            <ErrorNote message=problem />
        </section>
    }
}

/// Fetches the app's files the study needs and makes `package`; returns its file name and
/// bytes.
async fn make(
    package: Package,
    json: &str,
    progress: RwSignal<Option<String>>,
) -> Result<(String, Vec<u8>), String> {
    let config = StudyConfig::from_json(json).map_err(|e| e.to_string())?;
    if package == Package::StaticSite {
        answers_destination(&config).map_err(|e| e.to_string())?;
    }
    let root = app_root();
    let list = fetch_text_uncached(&format!("{root}{APP_FILES_LIST}"), FileKind::Json)
        .await
        .map_err(|e| format!("cannot list the app's files: {e}"))?;
    let names = package_file_names(&parse_file_list(&list).map_err(|e| e.to_string())?, &config);
    let mut files = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let step = format!(
            "Fetching the app's files: {} of {} ({name})",
            i + 1,
            names.len()
        );
        progress.set(Some(step.clone()));
        let url = format!("{root}{name}");
        let shown = move |loaded: u64, total: Option<u64>| {
            if let Some(total) = total.filter(|t| *t > 10_000_000) {
                progress.set(Some(format!(
                    "{step}: {} of {} MB",
                    loaded / 1_000_000,
                    total / 1_000_000
                )));
            }
        };
        // Model files may already be in the cache the model loader fills; the app's own files
        // are fetched fresh, so that the package holds this build.
        let kind = FileKind::for_name(name);
        let bytes = if name.starts_with("models/") {
            fetch_bytes_cached(&url, kind, shown).await
        } else {
            fetch_bytes_uncached(&url, kind, shown).await
        }
        .map_err(|e| e.to_string())?;
        files.push(AppFile {
            name: name.clone(),
            bytes,
        });
    }
    progress.set(Some("Packing…".into()));
    let dir = assets_dir_name(&config.title);
    match package {
        Package::Jatos => jatos_study_archive(json, &files).map(|zip| (format!("{dir}.jzip"), zip)),
        Package::StaticSite => {
            static_site_archive(json, &files).map(|zip| (format!("{dir}_site.zip"), zip))
        }
    }
    .map_err(|e| e.to_string())
}
