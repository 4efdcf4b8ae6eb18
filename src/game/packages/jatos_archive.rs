//! JATOS study archives (`.jzip`): what `clozelab jatos-package` writes so that JATOS imports
//! a clozelab study as it is.
//!
//! An archive is a ZIP holding one study description (`<name>.jas`, JSON) and one folder, the
//! study's assets (here the built app and `study.json`). The description is JATOS's serial
//! version 3, `{"version": "3", "data": {…study, "componentList": […], "batchList": […]}}`,
//! with the fields and checks of JATOS 3.10's importer (`StudyDeserializer`,
//! `StudyProperties.validate`, `ComponentProperties.validate`): a title without HTML of at
//! most 255 characters, an assets folder name that is a valid file name and none of JATOS's
//! own, component inputs that are JSON, an HTML file path like `index.html`.

use serde_json::{Value, json};

use crate::game::design::study::{GameKind, StudyConfig};
use crate::rng::stable_hash;

/// Folder names JATOS keeps for itself.
const RESERVED_DIR_NAMES: [&str; 6] = [
    "jatos",
    "publix",
    "public",
    "assets",
    "study_assets_root",
    "study_assets",
];

/// The worker types a study link can be made for (JATOS's own "Jatos" worker always may run).
const WORKER_TYPES: [&str; 4] = [
    "PersonalSingle",
    "PersonalMultiple",
    "GeneralSingle",
    "GeneralMultiple",
];

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum JatosArchiveError {
    #[error("the built app's index.html has no inline loader script to allow by its hash")]
    NoLoader,
    #[error("the built app's index.html has no Content-Security-Policy with the loader's hash")]
    NoPolicy,
}

/// A deterministic UUID-shaped id for `what` (re-importing the same study into JATOS then
/// offers to update it instead of making a second copy).
///
/// ```
/// let id = clozelab::game::packages::jatos_archive::stable_uuid("study:Cloze");
/// assert_eq!(id.len(), 36);
/// assert_eq!(id, clozelab::game::packages::jatos_archive::stable_uuid("study:Cloze"));
/// ```
pub fn stable_uuid(what: &str) -> String {
    let a = stable_hash(what);
    let b = stable_hash(&format!("{what}#2"));
    let hex = format!("{a:016x}{b:016x}");
    format!(
        "{}-{}-4{}-a{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// Text JATOS accepts where it allows no HTML: angle brackets dropped, control characters
/// turned into spaces, at most `max` characters.
fn plain(text: &str, max: usize) -> String {
    text.chars()
        .filter(|c| *c != '<' && *c != '>')
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(max)
        .collect::<String>()
        .trim()
        .to_string()
}

/// The study assets folder's name: `clozelab_` and the title's letters and digits.
///
/// ```
/// use clozelab::game::packages::jatos_archive::assets_dir_name;
/// assert_eq!(assets_dir_name("Cloze study: 2026!"), "clozelab_cloze_study_2026");
/// assert_eq!(assets_dir_name(""), "clozelab_study");
/// ```
pub fn assets_dir_name(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('_') && !slug.is_empty() {
            slug.push('_');
        }
    }
    let slug: String = slug.trim_end_matches('_').chars().take(60).collect();
    let name = format!("clozelab_{}", if slug.is_empty() { "study" } else { &slug });
    debug_assert!(!RESERVED_DIR_NAMES.contains(&name.as_str()));
    name
}

/// The `.jas` study description for `config` (whose JSON text, `study_json`, becomes the
/// component's input, editable in JATOS) with its assets in `dir_name`. The study's
/// `redirect_url` (e.g. Prolific's completion URL) becomes JATOS's end redirect URL: JATOS
/// redirects there when the app ends the run.
pub fn study_description(config: &StudyConfig, study_json: &str, dir_name: &str) -> Value {
    let title = match plain(&config.title, 255) {
        t if t.is_empty() => "clozelab study".to_string(),
        t => t,
    };
    let game = match config.game {
        GameKind::NextWord => "next-word",
        GameKind::Top1 => "top-1 next-token",
        GameKind::TwoToken => "two-token next-token",
    };
    let component_input: Value = serde_json::from_str(study_json).unwrap_or(Value::Null);
    json!({
        "version": "3",
        "data": {
            "uuid": stable_uuid(&format!("study:{title}")),
            "title": title,
            "description": format!("A clozelab {game} study. Results: one JSON bundle per participant, each response with its idempotency key; clozelab's Analysis page reads them."),
            "groupStudy": false,
            "linearStudy": false,
            "allowPreview": false,
            "dirName": dir_name,
            "comments": "Built by clozelab jatos-package. The component's input is the study config (study.json).",
            "studyInput": "{}",
            "endRedirectUrl": config.redirect_url.as_deref().map(|u| plain(u, 2000)),
            "studyEntryMsg": null,
            "componentList": [{
                "uuid": stable_uuid(&format!("component:{title}")),
                "title": "clozelab",
                "htmlFilePath": "index.html",
                // A participant who reloads continues where they were (the app resumes).
                "reloadable": true,
                "active": true,
                "comments": "",
                "componentInput": serde_json::to_string_pretty(&component_input).unwrap_or_default(),
            }],
            "batchList": [{
                "uuid": stable_uuid(&format!("batch:{title}")),
                "title": "Default",
                "active": true,
                "maxActiveMembers": null,
                "maxTotalMembers": null,
                "maxTotalWorkers": null,
                "allowedWorkerTypes": WORKER_TYPES,
                "comments": null,
                "batchInput": "{}",
            }],
        }
    })
}

/// The built app's `index.html` made to work from any folder (JATOS serves it at
/// `…/publix/<run>/<component>/index.html`): the assets Trunk links from the site's root
/// (`/name`) are linked from the page's folder (`./name`), and the loader's hash in the
/// Content-Security-Policy follows the loader's new text. `assets` are the files beside it.
pub fn relative_index_html(html: &str, assets: &[String]) -> Result<String, JatosArchiveError> {
    let old_hash = loader_hash(html)?;
    let mut out = html.to_string();
    for name in assets {
        for quote in ['"', '\''] {
            out = out.replace(&format!("{quote}/{name}"), &format!("{quote}./{name}"));
        }
    }
    let new_hash = loader_hash(&out)?;
    let old = format!("'sha256-{old_hash}'");
    if !out.contains(&old) {
        return Err(JatosArchiveError::NoPolicy);
    }
    Ok(out.replace(&old, &format!("'sha256-{new_hash}'")))
}

/// The base64 SHA-256 of the page's one inline module script (as a CSP hash source).
fn loader_hash(html: &str) -> Result<String, JatosArchiveError> {
    use base64::Engine;
    use sha2::Digest;
    let open = "<script type=\"module\">";
    let start = html.find(open).ok_or(JatosArchiveError::NoLoader)? + open.len();
    let end = start
        + html[start..]
            .find("</script>")
            .ok_or(JatosArchiveError::NoLoader)?;
    // Standard base64 with padding: what CSP hash sources use.
    Ok(base64::engine::general_purpose::STANDARD
        .encode(sha2::Sha256::digest(&html.as_bytes()[start..end])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_html_links_its_assets_from_its_folder_and_keeps_the_policy_exact() {
        let loader =
            "\nimport init from '/app-1.js';\nawait init({ module_or_path: '/app-1_bg.wasm' });\n";
        let page = |script: &str, hash: &str| {
            format!(
                "<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'self' 'sha256-{hash}'\" />\
                 <link rel=\"modulepreload\" href=\"/app-1.js\"><link href=\"/main.css\"><a href=\"/play\">\
                 <script type=\"module\">{script}</script>"
            )
        };
        let hash = loader_hash(&page(loader, "x")).unwrap();
        let html = page(loader, &hash);
        let assets = ["app-1.js", "app-1_bg.wasm", "main.css"].map(String::from);
        let out = relative_index_html(&html, &assets).unwrap();
        assert!(out.contains("href=\"./app-1.js\"") && out.contains("'./app-1_bg.wasm'"));
        assert!(out.contains("href=\"./main.css\"") && out.contains("href=\"/play\""));
        let new_hash = loader_hash(&out).unwrap();
        assert_ne!(new_hash, hash);
        assert!(out.contains(&format!("'sha256-{new_hash}'")));
        assert_eq!(
            relative_index_html("<p>", &assets),
            Err(JatosArchiveError::NoLoader)
        );
        assert_eq!(
            relative_index_html(&page(loader, "stale"), &assets),
            Err(JatosArchiveError::NoPolicy)
        );
    }

    #[test]
    fn the_description_passes_jatos_checks() {
        let text = r#"{"title": "A <b>cloze</b> study", "redirect_url": "https://app.prolific.com/submissions/complete?cc=C1"}"#;
        let config = StudyConfig::from_json(text).unwrap();
        let dir = assets_dir_name(&config.title);
        let jas = study_description(&config, text, &dir);
        assert_eq!(jas["version"], "3");
        let data = &jas["data"];
        assert_eq!(data["title"], "A bcloze/b study");
        assert_eq!(data["dirName"], "clozelab_a_b_cloze_b_study");
        assert_eq!(
            data["endRedirectUrl"],
            "https://app.prolific.com/submissions/complete?cc=C1"
        );
        let component = &data["componentList"][0];
        assert_eq!(component["htmlFilePath"], "index.html");
        let input: StudyConfig =
            serde_json::from_str(component["componentInput"].as_str().unwrap()).unwrap();
        assert_eq!(input.title, config.title);
        assert_eq!(data["uuid"].as_str().unwrap().len(), 36);
        assert_ne!(data["uuid"], component["uuid"]);
    }
}
