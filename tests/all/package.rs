//! A study's packages from the built app's files: the JATOS archive and the static site, as the
//! Study page and `clozelab jatos-package`/`site-package` make them.

use std::io::Read;

use clozelab::game::design::study::StudyConfig;
use clozelab::game::packages::package::{
    AppFile, PackageError, jatos_study_archive, parse_file_list, static_site_archive,
};

/// A built app as Trunk writes it: a page whose inline loader is allowed by its hash, the
/// hashed wasm and scripts, the worker's loader, and two model folders.
fn built_app() -> Vec<AppFile> {
    use base64::Engine;
    use sha2::Digest;
    let loader = "\nimport init from '/clozelab-1a.js';\nawait init({ module_or_path: '/clozelab-1a_bg.wasm' });\n";
    let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(loader));
    let html = format!(
        "<html><head><meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'self' \
         'sha256-{hash}'; connect-src 'self' https://huggingface.co\" /><link rel=\"modulepreload\" href=\"/clozelab-1a.js\">\
         <script type=\"module\">{loader}</script></head></html>"
    );
    let file = |name: &str, bytes: &[u8]| AppFile {
        name: name.into(),
        bytes: bytes.to_vec(),
    };
    vec![
        file("index.html", html.as_bytes()),
        file("clozelab-1a.js", b"export default function init() {}"),
        file("clozelab-1a_bg.wasm", &[0, 97, 115, 109, 1, 0, 0, 0]),
        file("worker_loader.js", b"import('./worker-2b.js')"),
        file("app-files.json", b"[]"),
        file(
            "build.json",
            br#"{"profile": "release", "commit": "0123abcd", "wasm": {"clozelab-1a_bg.wasm": 8}}"#,
        ),
        file("models/gpt2/config.json", b"{\"n_layer\": 12}"),
        file("models/gpt2/model.safetensors", &[7u8; 4096]),
        file("models/gpt2/vocab.json", b"{}"),
        file("models/test/config.json", b"{}"),
    ]
}

fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut entry = archive.by_index(i).unwrap();
            let mut out = Vec::new();
            entry.read_to_end(&mut out).unwrap();
            (entry.name().to_string(), out)
        })
        .collect()
}

fn names(entries: &[(String, Vec<u8>)]) -> Vec<&str> {
    entries.iter().map(|(n, _)| n.as_str()).collect()
}

fn text<'a>(entries: &'a [(String, Vec<u8>)], name: &str) -> &'a str {
    let (_, bytes) = entries.iter().find(|(n, _)| n == name).unwrap();
    std::str::from_utf8(bytes).unwrap()
}

#[test]
fn the_jatos_archive_holds_the_description_the_app_and_the_config() {
    let study = r#"{"title": "Storm study", "passages": ["storm"], "completion_code": "C1"}"#;
    let entries = unzip(&jatos_study_archive(study, &built_app()).unwrap());
    assert_eq!(
        names(&entries),
        [
            "clozelab_storm_study.jas",
            "clozelab_storm_study/build.json",
            "clozelab_storm_study/clozelab-1a.js",
            "clozelab_storm_study/clozelab-1a_bg.wasm",
            "clozelab_storm_study/index.html",
            "clozelab_storm_study/worker_loader.js",
            "clozelab_storm_study/study.json",
        ]
    );
    let jas: serde_json::Value =
        serde_json::from_str(text(&entries, "clozelab_storm_study.jas")).unwrap();
    assert_eq!(jas["data"]["dirName"], "clozelab_storm_study");
    let input = jas["data"]["componentList"][0]["componentInput"]
        .as_str()
        .unwrap();
    assert_eq!(StudyConfig::from_json(input).unwrap().completion_code, "C1");
    let html = text(&entries, "clozelab_storm_study/index.html");
    assert!(html.contains("href=\"./clozelab-1a.js\"") && !html.contains("'/clozelab-1a"));
    assert_eq!(text(&entries, "clozelab_storm_study/study.json"), study);
}

#[test]
fn a_token_study_takes_only_its_own_model_folder_along() {
    let study = r#"{"title": "T", "game": "two_token", "model": "models/gpt2/"}"#;
    let jatos = unzip(&jatos_study_archive(study, &built_app()).unwrap());
    let models: Vec<&str> = names(&jatos)
        .into_iter()
        .filter(|n| n.contains("/models/"))
        .collect();
    assert_eq!(
        models,
        [
            "clozelab_t/models/gpt2/config.json",
            "clozelab_t/models/gpt2/model.safetensors",
            "clozelab_t/models/gpt2/vocab.json",
        ]
    );
    let lab = study.replace(r#""T","#, r#""T", "answers_in_browser": true,"#);
    let site = unzip(&static_site_archive(&lab, &built_app()).unwrap());
    assert!(names(&site).contains(&"models/gpt2/model.safetensors"));
    assert!(!names(&site).iter().any(|n| n.starts_with("models/test")));
    assert!(text(&site, "README-host.txt").contains("models/gpt2/"));
    let elsewhere = r#"{"game": "top1", "model": "models/large/"}"#;
    assert_eq!(
        jatos_study_archive(elsewhere, &built_app()),
        Err(PackageError::MissingModel("models/large/".into()))
    );
}

#[test]
fn the_static_site_keeps_the_app_at_the_root_and_tells_the_host_what_to_do() {
    let study = r#"{"title": "Site", "submit_url": "/collect", "send_each_response": true,
                    "participant_param": "PID"}"#;
    let entries = unzip(&static_site_archive(study, &built_app()).unwrap());
    assert_eq!(
        names(&entries),
        [
            "build.json",
            "clozelab-1a.js",
            "clozelab-1a_bg.wasm",
            "index.html",
            "worker_loader.js",
            "study.json",
            "README-host.txt",
        ]
    );
    let (_, page) = entries
        .iter()
        .find(|(name, _)| name == "index.html")
        .unwrap();
    assert_eq!(
        page,
        &built_app()[0].bytes,
        "served from /, the page is kept as built"
    );
    let readme = text(&entries, "README-host.txt");
    for needed in [
        "/collect",
        "Idempotency-Key",
        "index.html",
        "application/wasm",
        "?study=study.json&PID=",
        "each answer as it is saved",
    ] {
        assert!(readme.contains(needed), "README-host.txt lacks {needed:?}");
    }
}

#[test]
fn a_bad_config_or_an_unbuilt_app_is_refused_with_its_reason() {
    let bad = jatos_study_archive(r#"{"passages": ["nowhere"]}"#, &built_app());
    assert!(matches!(bad, Err(PackageError::Study(_))));
    let not_json = static_site_archive("{", &built_app()).unwrap_err();
    assert!(not_json.to_string().contains("not valid JSON"));
    let mut unbuilt = built_app();
    unbuilt.retain(|f| f.name != "worker_loader.js");
    assert_eq!(
        static_site_archive("{}", &unbuilt),
        Err(PackageError::NotBuilt("worker_loader.js"))
    );
    let mut stale = built_app();
    stale[0].bytes = b"<html>no loader</html>".to_vec();
    assert!(matches!(
        jatos_study_archive("{}", &stale),
        Err(PackageError::Page(_))
    ));
}

#[test]
fn a_website_that_would_send_its_answers_nowhere_is_refused_with_the_fix() {
    let prolific =
        r#"{"title": "P", "redirect_url": "https://app.prolific.com/submissions/complete?cc=C1"}"#;
    let refused = static_site_archive(prolific, &built_app()).unwrap_err();
    let reason = refused.to_string();
    assert!(matches!(refused, PackageError::Destination(_)), "{reason}");
    assert!(
        reason.contains("nowhere") && reason.contains("clozelab serve"),
        "{reason}"
    );
    // Saying the answers stay in the browser does not save a study that redirects.
    let said = prolific.replace('{', r#"{"answers_in_browser": true, "#);
    assert!(static_site_archive(&said, &built_app()).is_err());
    let unstated = static_site_archive(r#"{"title": "Lab"}"#, &built_app()).unwrap_err();
    assert!(
        unstated.to_string().contains("answers_in_browser"),
        "{unstated}"
    );
    // JATOS keeps every answer: its archive needs neither.
    assert!(jatos_study_archive(prolific, &built_app()).is_ok());
    let lab = unzip(
        &static_site_archive(
            r#"{"title": "Lab", "answers_in_browser": true}"#,
            &built_app(),
        )
        .unwrap(),
    );
    assert!(
        text(&lab, "README-host.txt").contains("keeps its answers in the participant's browser")
    );
    // Both at once contradict each other.
    let both = r#"{"answers_in_browser": true, "submit_url": "/submit"}"#;
    assert!(clozelab::game::design::study::StudyConfig::from_json(both).is_err());
    // A study server elsewhere: its origin, and only it, joins the page's policy.
    let elsewhere = r#"{"title": "E", "submit_url": "https://lab.example.org/cloze/submit"}"#;
    let site = unzip(&static_site_archive(elsewhere, &built_app()).unwrap());
    let page = text(&site, "index.html");
    assert!(
        page.contains("connect-src 'self' https://lab.example.org "),
        "{page}"
    );
}

#[test]
fn the_file_list_takes_only_paths_inside_the_app() {
    assert_eq!(
        parse_file_list(r#"["index.html", "models/gpt2/config.json"]"#).unwrap(),
        ["index.html", "models/gpt2/config.json"]
    );
    for bad in [
        r#"["../secret"]"#,
        r#"["/etc/passwd"]"#,
        r#"["a//b"]"#,
        r#"["a\\b"]"#,
        r#"[""]"#,
        r#"{"a": 1}"#,
        "not json",
    ] {
        assert!(
            matches!(parse_file_list(bad), Err(PackageError::FileList(_))),
            "{bad}"
        );
    }
}

/// `clozelab site-package` on a built app folder holding a file put there after the build.
fn cli_site_package(dist: &std::path::Path, out: &std::path::Path) -> std::process::Output {
    let study = dist.join("study.json");
    std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args(["site-package", "--study"])
        .arg(&study)
        .arg("--dist")
        .arg(dist)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn the_command_line_packages_the_files_the_build_listed_as_the_page_does() {
    let dist = crate::common::repo_root()
        .join("target")
        .join(format!("package-test-{}", std::process::id()));
    let built: Vec<AppFile> = built_app()
        .into_iter()
        .filter(|f| f.name != "app-files.json")
        .collect();
    for file in &built {
        let path = dist.join(&file.name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &file.bytes).unwrap();
    }
    let listed: Vec<&str> = built.iter().map(|f| f.name.as_str()).collect();
    std::fs::write(
        dist.join("app-files.json"),
        serde_json::to_string(&listed).unwrap(),
    )
    .unwrap();
    // Put beside the app after the build: the config itself and a page of the researcher's.
    std::fs::write(
        dist.join("study.json"),
        r#"{"title": "Beside", "answers_in_browser": true}"#,
    )
    .unwrap();
    std::fs::write(dist.join("thanks.html"), "<p>thanks</p>").unwrap();
    let out = dist.join("site.zip");

    let made = cli_site_package(&dist, &out);
    assert!(made.status.success(), "{made:?}");
    let from_cli = std::fs::read(&out).unwrap();
    let in_page = static_site_archive(
        r#"{"title": "Beside", "answers_in_browser": true}"#,
        &built_app(),
    )
    .unwrap();
    assert!(
        from_cli == in_page,
        "the CLI's package equals the page's: {:?}",
        names(&unzip(&from_cli))
    );

    // A folder without the build's list (copied by hand): every file in it goes.
    std::fs::remove_file(dist.join("app-files.json")).unwrap();
    assert!(cli_site_package(&dist, &out).status.success());
    assert!(names(&unzip(&std::fs::read(&out).unwrap())).contains(&"thanks.html"));

    // A list naming a path outside the folder is refused, naming the list.
    std::fs::write(dist.join("app-files.json"), r#"["../secret"]"#).unwrap();
    let refused = cli_site_package(&dist, &out);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("app-files.json"), "{stderr}");

    // A study that would send its answers nowhere is refused with the reason.
    std::fs::remove_file(dist.join("app-files.json")).unwrap();
    std::fs::write(
        dist.join("study.json"),
        r#"{"redirect_url": "https://app.prolific.com/c"}"#,
    )
    .unwrap();
    let refused = cli_site_package(&dist, &out);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("answers nowhere"), "{stderr}");
    std::fs::remove_dir_all(&dist).unwrap();
}

#[test]
fn the_command_line_refuses_a_development_build_unless_told_and_the_package_names_its_build() {
    let dist = crate::common::repo_root()
        .join("target")
        .join(format!("package-build-test-{}", std::process::id()));
    for file in built_app() {
        let path = dist.join(&file.name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &file.bytes).unwrap();
    }
    std::fs::write(
        dist.join("study.json"),
        r#"{"title": "Builds", "answers_in_browser": true}"#,
    )
    .unwrap();
    std::fs::remove_file(dist.join("app-files.json")).unwrap();
    let out = dist.join("site.zip");
    let readme = || {
        let entries = unzip(&std::fs::read(&out).unwrap());
        let (_, bytes) = entries
            .into_iter()
            .find(|(name, _)| name == "README-host.txt")
            .unwrap();
        String::from_utf8(bytes).unwrap()
    };
    let made = cli_site_package(&dist, &out);
    assert!(made.status.success(), "{made:?}");
    assert!(
        readme()
            .contains("The app in this ZIP is the optimised build (commit 0123abcd): app 0.0 MB"),
        "{}",
        readme()
    );
    for (record, says) in [
        (
            Some(r#"{"profile": "debug", "commit": "0123abcd", "wasm": {}}"#),
            "this is a development build",
        ),
        (
            Some(r#"{"profile": "fast"}"#),
            "build.json is not a build record",
        ),
        (None, "has no build.json"),
    ] {
        match record {
            Some(text) => std::fs::write(dist.join("build.json"), text).unwrap(),
            None => std::fs::remove_file(dist.join("build.json")).unwrap(),
        }
        std::fs::remove_file(&out).ok();
        let refused = cli_site_package(&dist, &out);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            !refused.status.success() && !out.exists(),
            "{says}: {refused:?}"
        );
        assert!(
            stderr.contains(says) && stderr.contains("--allow-development-build"),
            "{stderr}"
        );
        let allowed = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
            .args(["site-package", "--allow-development-build", "--study"])
            .arg(dist.join("study.json"))
            .arg("--dist")
            .arg(&dist)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(allowed.status.success(), "{allowed:?}");
    }
    assert!(readme().contains("has no build.json: which build it is is unknown"));
    std::fs::remove_dir_all(&dist).ok();
}
