//! `clozelab jatos-package --study study.json --dist dist/ --out study.jzip`: a JATOS study
//! archive of the built app and a study config (see [`crate::game::jatos_archive`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::commands::JatosPackageArgs;
use super::error::CliError;
use crate::game::jatos_archive::{assets_dir_name, relative_index_html, study_description};
use crate::game::study::{GameKind, StudyConfig};

pub fn jatos_package(args: &JatosPackageArgs) -> Result<(), CliError> {
    let JatosPackageArgs {
        study: study_path,
        dist,
        out,
    } = args;
    let study_json =
        std::fs::read_to_string(study_path).map_err(CliError::io("read", study_path))?;
    let config = StudyConfig::from_json(&study_json)
        .map_err(|e| CliError::usage(format!("{}: {e}", study_path.display())))?;
    if config.submit_url.is_some() {
        eprintln!("note: submit_url is not used inside JATOS: results go to JATOS's result data");
    }
    let index = dist.join("index.html");
    let html = std::fs::read_to_string(&index).map_err(CliError::io("read", &index))?;
    let files = app_files(dist, needed_model(&config).as_deref())?;
    let top_level: Vec<String> = files.iter().filter(|f| !f.contains('/')).cloned().collect();
    if !top_level.iter().any(|f| f == "worker_loader.js") {
        return Err(CliError::usage(format!(
            "{} is not a built clozelab app (no worker_loader.js): run `trunk build` first",
            dist.display()
        )));
    }
    let html = relative_index_html(&html, &top_level)
        .map_err(|e| CliError::usage(format!("{}: {e}", index.display())))?;
    let dir = assets_dir_name(&config.title);
    let description = study_description(&config, &study_json, &dir);

    let file = std::fs::File::create(out).map_err(CliError::io("write", out))?;
    let mut zip = zip::ZipWriter::new(file);
    let options =
        zip::write::FileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let write_err = |e: zip::result::ZipError| CliError::usage(format!("{}: {e}", out.display()));
    let io_err = CliError::io("write", out);
    zip.start_file(format!("{dir}.jas"), options)
        .map_err(write_err)?;
    zip.write_all(serde_json::to_string_pretty(&description)?.as_bytes())
        .map_err(io_err)?;
    let mut bytes_total = 0u64;
    for name in &files {
        let contents = if name == "index.html" {
            html.clone().into_bytes()
        } else {
            let path = dist.join(name);
            std::fs::read(&path).map_err(CliError::io("read", &path))?
        };
        bytes_total += contents.len() as u64;
        zip.start_file(format!("{dir}/{name}"), options)
            .map_err(write_err)?;
        zip.write_all(&contents)
            .map_err(CliError::io("write", out))?;
    }
    // The config beside the page too: the app reads it when the component's input is empty.
    zip.start_file(format!("{dir}/study.json"), options)
        .map_err(write_err)?;
    zip.write_all(study_json.as_bytes())
        .map_err(CliError::io("write", out))?;
    zip.finish().map_err(write_err)?;
    eprintln!(
        "wrote {} ({} files, {:.1} MB before compression; assets folder {dir}): import it in JATOS \
         (Studies › Import), then make a study link (Prolific: add ?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}…)",
        out.display(),
        files.len() + 1,
        bytes_total as f64 / 1e6
    );
    Ok(())
}

/// The model folder a study's participants load (next-token games), relative to the app.
fn needed_model(config: &StudyConfig) -> Option<String> {
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

/// The built app's files, relative to `dist` with `/` separators: everything but the models,
/// of which only `model` (the study's own, if any) goes along.
fn app_files(dist: &Path, model: Option<&str>) -> Result<Vec<String>, CliError> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = dist.join(&rel);
        let entries = std::fs::read_dir(&dir).map_err(CliError::io("read", &dir))?;
        for entry in entries {
            let entry = entry.map_err(CliError::io("read", &dir))?;
            let rel_path = rel.join(entry.file_name());
            let name = rel_path.to_string_lossy().replace('\\', "/");
            let in_models = name == "models" || name.starts_with("models/");
            let wanted = !in_models
                || model.is_some_and(|m| {
                    name == "models"
                        || m.starts_with(&format!("{name}/"))
                        || name == m
                        || name.starts_with(&format!("{m}/"))
                });
            if !wanted {
                continue;
            }
            if entry.path().is_dir() {
                stack.push(rel_path);
            } else {
                out.push(name);
            }
        }
    }
    out.sort();
    Ok(out)
}
