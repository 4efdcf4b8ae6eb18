//! A study's packages, made from the built app's own files: the JATOS study archive (`.jzip`)
//! and a static-site ZIP for any web host. `clozelab jatos-package`/`site-package` read the
//! files from `dist/`; the Study page fetches them from the running app (the list is
//! [`APP_FILES_LIST`], written by the build). Both call the functions here, so the two give the
//! same archive.

use std::io::Write;

use super::build_record::{BUILD_RECORD, BuildRecord};
use super::destination::{AnswersGo, DestinationError, answers_destination};
use super::jatos_archive::study_description;
use super::jatos_archive::{JatosArchiveError, assets_dir_name, relative_index_html};
use crate::game::design::adaptive_norming::STATE_FILE;
use crate::game::design::study::{GameKind, StudyConfig, StudyError};
use crate::game::design::study_urls::submit_origin;

/// The file the build writes beside `index.html`: a JSON array of every built file's path
/// (relative, `/`-separated), so that the page can fetch its own files.
pub const APP_FILES_LIST: &str = "app-files.json";

/// The page's script that makes it cross-origin isolated through a service worker (one reload on
/// a first visit) and the service worker itself: only a study that runs a model gains from them
/// (the CPU backend's threads), so a package without a model leaves both out, the tag too.
pub const ISOLATION_FILES: [&str; 2] = ["isolation.js", "isolation-sw.js"];
const ISOLATION_TAG: &str = "<script src=\"/isolation.js\"></script>";

/// One file of the built app, by its path relative to the app's folder.
#[derive(Clone, Debug, PartialEq)]
pub struct AppFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PackageError {
    #[error(transparent)]
    Study(#[from] StudyError),
    #[error("these files are not a built clozelab app (no {0}): build it first")]
    NotBuilt(&'static str),
    #[error("index.html: {0}")]
    Page(#[from] JatosArchiveError),
    #[error(
        "the study's game needs the model folder {0:?}, which the app does not have: put the \
         model there (config.json, model.safetensors and the tokenizer) and build again"
    )]
    MissingModel(String),
    #[error("the file list is not a JSON array of relative paths: {0}")]
    FileList(String),
    #[error("cannot write the ZIP: {0}")]
    Zip(String),
    #[error(transparent)]
    Destination(#[from] DestinationError),
}

/// The model folder a study's participants load (next-token games), relative to the app, as
/// `models/gpt2` (no leading `./` or `/`, no trailing `/`).
///
/// ```
/// use clozelab::game::{packages::package::needed_model, design::study::StudyConfig};
/// let words = StudyConfig::from_json(r#"{"title": "W"}"#).unwrap();
/// assert_eq!(needed_model(&words), None);
/// let tokens = StudyConfig::from_json(r#"{"game": "top1", "model": "./models/small/"}"#).unwrap();
/// assert_eq!(needed_model(&tokens).as_deref(), Some("models/small"));
/// ```
pub fn needed_model(config: &StudyConfig) -> Option<String> {
    (config.game != GameKind::NextWord).then(|| {
        config
            .model
            .clone()
            .unwrap_or_else(|| "models/gpt2/".into())
            .trim_start_matches("./")
            .trim_start_matches('/')
            .trim_end_matches('/')
            .to_string()
    })
}

/// Reads [`APP_FILES_LIST`]: the paths must be relative and stay inside the app's folder.
pub fn parse_file_list(text: &str) -> Result<Vec<String>, PackageError> {
    let names: Vec<String> =
        serde_json::from_str(text).map_err(|e| PackageError::FileList(e.to_string()))?;
    match names.iter().find(|n| !is_safe_relative_path(n)) {
        Some(bad) => Err(PackageError::FileList(format!(
            "{bad:?} is not a relative path"
        ))),
        None => Ok(names),
    }
}

fn is_safe_relative_path(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\\')
        && !name.chars().any(char::is_control)
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// Which of the app's files go into a package for `config`: everything but the models, of
/// which only the study's own folder goes along (next-token games), and [`ISOLATION_FILES`] only
/// with a model; sorted.
///
/// ```
/// use clozelab::game::{packages::package::package_file_names, design::study::StudyConfig};
/// let all = [
///     "index.html",
///     "app.wasm",
///     "isolation.js",
///     "models/gpt2/config.json",
///     "models/test/config.json",
/// ]
/// .map(String::from);
/// let words = StudyConfig::from_json("{}").unwrap();
/// assert_eq!(package_file_names(&all, &words), ["app.wasm", "index.html"]);
/// let tokens = StudyConfig::from_json(r#"{"game": "two_token"}"#).unwrap();
/// assert_eq!(
///     package_file_names(&all, &tokens),
///     ["app.wasm", "index.html", "isolation.js", "models/gpt2/config.json"]
/// );
/// ```
pub fn package_file_names(all: &[String], config: &StudyConfig) -> Vec<String> {
    let model = needed_model(config).map(|m| format!("{m}/"));
    let mut names: Vec<String> = all
        .iter()
        .filter(|name| name.as_str() != APP_FILES_LIST)
        .filter(|name| model.is_some() || !ISOLATION_FILES.contains(&name.as_str()))
        .filter(|name| {
            !name.starts_with("models/") || model.as_ref().is_some_and(|m| name.starts_with(m))
        })
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The config, checked, and the names of the app's files its package takes.
fn checked(
    study_json: &str,
    files: &[AppFile],
) -> Result<(StudyConfig, Vec<String>), PackageError> {
    let config = StudyConfig::from_json(study_json)?;
    check_app(files, &config)?;
    let all: Vec<String> = files.iter().map(|f| f.name.clone()).collect();
    let names = package_file_names(&all, &config);
    Ok((config, names))
}

/// Checks that `files` are a built app holding what `config` needs.
fn check_app(files: &[AppFile], config: &StudyConfig) -> Result<(), PackageError> {
    for needed in ["index.html", "worker_loader.js"] {
        if !files.iter().any(|f| f.name == needed) {
            return Err(PackageError::NotBuilt(needed));
        }
    }
    if let Some(model) = needed_model(config) {
        let has = |file: &str| files.iter().any(|f| f.name == format!("{model}/{file}"));
        if !(has("config.json") && has("model.safetensors")) {
            return Err(PackageError::MissingModel(format!("{model}/")));
        }
    }
    Ok(())
}

/// The files named in `names`, in that order (so that a package does not depend on the order
/// files were read or fetched in).
fn in_order<'a>(files: &'a [AppFile], names: &[String]) -> Vec<&'a AppFile> {
    let by_name: std::collections::HashMap<&str, &AppFile> =
        files.iter().map(|f| (f.name.as_str(), f)).collect();
    names
        .iter()
        .filter_map(|n| by_name.get(n.as_str()).copied())
        .collect()
}

/// A ZIP being written to memory: text and code deflated, the weights stored (they do not
/// compress, and deflating hundreds of megabytes would stall the page).
struct ZipOut(zip::ZipWriter<std::io::Cursor<Vec<u8>>>);

impl ZipOut {
    fn new() -> Self {
        Self(zip::ZipWriter::new(std::io::Cursor::new(Vec::new())))
    }

    fn add(&mut self, name: &str, bytes: &[u8]) -> Result<(), PackageError> {
        let method = if name.ends_with(".safetensors") {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        let options = zip::write::FileOptions::default()
            .compression_method(method)
            .large_file(bytes.len() as u64 >= u32::MAX as u64);
        self.0
            .start_file(name, options)
            .map_err(|e| PackageError::Zip(e.to_string()))?;
        self.0
            .write_all(bytes)
            .map_err(|e| PackageError::Zip(e.to_string()))
    }

    fn finish(mut self) -> Result<Vec<u8>, PackageError> {
        let cursor = self
            .0
            .finish()
            .map_err(|e| PackageError::Zip(e.to_string()))?;
        Ok(cursor.into_inner())
    }
}

/// The JATOS study archive (`.jzip`) of `study_json` with the app's `files` (the whole built
/// app; [`package_file_names`] picks what goes in): `<assets>.jas`, the study description
/// (see [`study_description`]), and the folder `<assets>/` with the app, its `index.html`
/// linking its assets from its own folder, and `study.json`.
pub fn jatos_study_archive(study_json: &str, files: &[AppFile]) -> Result<Vec<u8>, PackageError> {
    let (config, names) = checked(study_json, files)?;
    let top_level: Vec<String> = names.iter().filter(|n| !n.contains('/')).cloned().collect();
    let dir = assets_dir_name(&config.title);
    let description = study_description(&config, study_json, &dir);
    let mut zip = ZipOut::new();
    let jas =
        serde_json::to_string_pretty(&description).map_err(|e| PackageError::Zip(e.to_string()))?;
    zip.add(&format!("{dir}.jas"), jas.as_bytes())?;
    for file in in_order(files, &names) {
        if file.name == "index.html" {
            let html = page_for(&config, &String::from_utf8_lossy(&file.bytes));
            zip.add(
                &format!("{dir}/index.html"),
                relative_index_html(&html, &top_level)?.as_bytes(),
            )?;
        } else if file.name != "study.json" {
            zip.add(&format!("{dir}/{}", file.name), &file.bytes)?;
        }
    }
    // The config beside the page too: the app reads it when the component's input is empty.
    zip.add(&format!("{dir}/study.json"), study_json.as_bytes())?;
    zip.finish()
}

/// A static site of the study: the app, `study.json`, the model folder a token game needs and
/// `README-host.txt` (see [`host_readme`]), all at the ZIP's root, to be served at the root of
/// a web host.
///
/// A study whose answers would go nowhere is refused (see [`answers_destination`]): outside
/// JATOS only its `submit_url` collects them.
pub fn static_site_archive(study_json: &str, files: &[AppFile]) -> Result<Vec<u8>, PackageError> {
    let (config, names) = checked(study_json, files)?;
    answers_destination(&config)?;
    let mut zip = ZipOut::new();
    for file in in_order(files, &names) {
        if file.name == "index.html" {
            zip.add(
                "index.html",
                page_for(&config, &String::from_utf8_lossy(&file.bytes)).as_bytes(),
            )?;
        } else if file.name != "study.json" && file.name != "README-host.txt" {
            zip.add(&file.name, &file.bytes)?;
        }
    }
    zip.add("study.json", study_json.as_bytes())?;
    let build = files
        .iter()
        .find(|f| f.name == BUILD_RECORD)
        .and_then(|f| BuildRecord::parse(&String::from_utf8_lossy(&f.bytes)).ok());
    zip.add(
        "README-host.txt",
        host_readme(&config, build.as_ref()).as_bytes(),
    )?;
    zip.finish()
}

/// The app's page as `config`'s package serves it: without the isolation script where the
/// study runs no model (its files are left out too, see [`package_file_names`]), and with a
/// `submit_url` on another server's origin allowed by its Content-Security-Policy.
///
/// ```
/// use clozelab::game::{packages::package::page_for, design::study::StudyConfig};
/// let page = "<head><script src=\"/isolation.js\"></script><title>t</title></head>";
/// let words = StudyConfig::from_json("{}").unwrap();
/// assert_eq!(page_for(&words, page), "<head><title>t</title></head>");
/// let tokens = StudyConfig::from_json(r#"{"game": "two_token"}"#).unwrap();
/// assert_eq!(page_for(&tokens, page), page);
/// let elsewhere = StudyConfig::from_json(r#"{"submit_url": "https://lab.example.org/submit"}"#).unwrap();
/// assert_eq!(
///     page_for(&elsewhere, "connect-src 'self' https://huggingface.co;"),
///     "connect-src 'self' https://lab.example.org https://huggingface.co;"
/// );
/// ```
pub fn page_for(config: &StudyConfig, html: &str) -> String {
    let html = if needed_model(config).is_some() {
        html.to_string()
    } else {
        html.replace(ISOLATION_TAG, "")
    };
    match config.submit_url.as_deref().and_then(submit_origin) {
        Some(origin) => html.replacen(
            "connect-src 'self'",
            &format!("connect-src 'self' {origin}"),
            1,
        ),
        None => html,
    }
}

/// What the person who hosts a static-site package must know: where the files go, the headers,
/// the route fallback, the participants' link, and what `submit_url` must do; and which build of
/// the app the files are (`build`, from the build's record).
pub fn host_readme(config: &StudyConfig, build: Option<&BuildRecord>) -> String {
    let title = if config.title.trim().is_empty() {
        "clozelab study"
    } else {
        config.title.trim()
    };
    let id_param = config
        .participant_param
        .as_deref()
        .unwrap_or("PROLIFIC_PID");
    let mut text = format!(
        "{title}: a clozelab study as a static site\n\
         \n\
         1. Put every file of this ZIP, folders included, at the ROOT of a web host over HTTPS\n   \
            (https://your.host/, not a subfolder: the app links its files from /).\n\
         2. Headers:\n   \
            - .wasm files as Content-Type application/wasm, .js as text/javascript,\n     \
              .json as application/json (most hosts do this already);\n   \
            - index.html and study.json with Cache-Control: no-cache, so that a change reaches\n     \
              participants; the other files have content hashes in their names and may be cached.\n   \
            The Content-Security-Policy is in index.html itself; a stricter one sent by the\n   \
            host must still allow 'self', 'wasm-unsafe-eval' and the loader's hash found there.\n\
         3. Route fallback: answer unknown paths (such as /play/storm) with index.html and\n   \
            status 200, as single-page apps need (Netlify: a _redirects line \"/* /index.html 200\";\n   \
            nginx: try_files $uri /index.html).\n\
         4. Participants' link:\n   \
            https://your.host/?study=study.json&{id_param}={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}\n   \
            (Prolific fills in the parts in braces; without an id the app makes one.)\n"
    );
    let build_line = match build {
        Some(record) => format!("The app in this ZIP is {}.\n\n", record.describe()),
        None => {
            format!("The app in this ZIP has no {BUILD_RECORD}: which build it is is unknown.\n\n")
        }
    };
    text.insert_str(text.find('\n').map_or(0, |i| i + 2), &build_line);
    match answers_destination(config) {
        Ok(AnswersGo::Server(url)) => text.push_str(&format!(
            "5. Results: the app POSTs each participant's JSON bundle to {url}\n   \
                {}.\n   \
                The simplest host does all of the above and keeps them: clozelab's own server,\n     \
                  clozelab serve --site THIS.zip --data answers.sqlite --addr 0.0.0.0:8080\n   \
                (behind your HTTPS proxy, or with --tls-cert/--tls-key), and later\n     \
                  clozelab export --data answers.sqlite --out results.zip\n   \
                A server of your own must:\n   \
                - accept a POST with a JSON body (application/json) and store it;\n   \
                - accept repeats: each POST has an Idempotency-Key header, each response in the\n     \
                  bundle an idempotency_key; store a key once and answer a repeat with 2xx;\n   \
                - answer 2xx once stored. A 4xx answer (except 408 and 429) is final: the app\n     \
                  stops sending and asks the participant to download their data and send it to\n     \
                  you. 5xx answers and lost connections are retried.\n   \
                Give the stored bundles (the files, or a ZIP of them) to clozelab's Analysis page.\n",
            if config.send_each_response { "when they finish, and each answer as it is saved" } else { "when they finish" }
        )),
        _ => text.push_str(
            "5. Results: this study keeps its answers in the participant's browser\n   \
                (answers_in_browser): nothing is sent anywhere; download them on each computer\n   \
                in \"Your data\".\n",
        ),
    }
    if let Some(model) = needed_model(config) {
        text.push_str(&format!(
            "6. The model folder {model}/ is large (GPT-2 small: about 500 MB); participants'\n   \
                browsers load it once. Serve it as it is.\n   \
                Participants whose browser has no WebGPU run the model on their CPU, on every core\n   \
                where the page is cross-origin isolated: best, send each file with\n   \
                Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp.\n   \
                Where the host cannot, isolation-sw.js (a service worker in this package) adds them:\n   \
                the page reloads once on a participant's first visit, before the study starts.\n   \
                Without either (no HTTPS, service workers off) it runs on one thread; nothing else changes.\n"
        ));
    }
    if config.adaptive_norming.is_some() {
        text.push_str(&format!(
            "Adaptive norming: each participant's list is drawn by the {STATE_FILE} served beside\n\
             study.json (with Cache-Control: no-cache). Make it from the results so far on the\n\
             Analysis page (or with `clozelab norming-state`) and replace it as results come in;\n\
             until there is one, every list counts as equally needed.\n"
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tag [`page_for`] takes out is the one the app's page has (Trunk passes it through as
    /// written), so a package without a model never links a script it left out.
    #[test]
    fn the_apps_page_links_the_isolation_script_as_packages_expect() {
        let page = include_str!("../../../index.html");
        assert_eq!(page.matches(ISOLATION_TAG).count(), 1);
        let words = StudyConfig::from_json("{}").unwrap();
        assert!(!page_for(&words, page).contains(ISOLATION_TAG));
    }
}
