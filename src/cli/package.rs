//! `clozelab jatos-package` and `clozelab site-package` (`--study study.json --dist dist/ --out
//! FILE`): a study's packages from the built app on disk, written by the same functions the
//! Study page calls ([`crate::game::packages::package`]).

use std::path::{Path, PathBuf};

use clap::Args;

use super::error::CliError;
use crate::game::design::study::StudyConfig;
use crate::game::packages::build_record::{BUILD_RECORD, optimised_build};
use crate::game::packages::package::{
    APP_FILES_LIST, AppFile, PackageError, jatos_study_archive, package_file_names,
    parse_file_list, static_site_archive,
};

#[derive(Debug, Args)]
pub struct PackageArgs {
    /// The study config.
    #[arg(long, value_name = "FILE")]
    pub study: PathBuf,
    /// The built app: the optimised build (`bash scripts/release.sh` writes it to dist-release/;
    /// `bash scripts/app.sh --release` to dist/).
    #[arg(long, value_name = "DIR", default_value = "dist")]
    pub dist: PathBuf,
    /// The archive to write (.jzip for JATOS, .zip for a static site).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Package a development build (or one without a build record) all the same: for trying
    /// the package out, never for participants.
    #[arg(long)]
    pub allow_development_build: bool,
}

pub fn jatos_package(args: &PackageArgs) -> Result<(), CliError> {
    let (config, archive, files) = build(args, jatos_study_archive)?;
    if config.submit_url.is_some() {
        eprintln!("note: submit_url is not used inside JATOS: results go to JATOS's result data");
    }
    eprintln!(
        "wrote {} ({files} files, {:.1} MB): import it in JATOS (Studies › Import), then make a \
         study link (Prolific: add ?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}…)",
        args.out.display(),
        archive as f64 / 1e6
    );
    Ok(())
}

pub fn site_package(args: &PackageArgs) -> Result<(), CliError> {
    let (_, archive, files) = build(args, static_site_archive)?;
    eprintln!(
        "wrote {} ({files} files, {:.1} MB): unpack it at the root of a web host; its \
         README-host.txt says which headers, the route fallback and the participants' link",
        args.out.display(),
        archive as f64 / 1e6
    );
    Ok(())
}

/// Reads the config and the built app, makes the package with `make`, writes it; returns the
/// config, the archive's size and how many app files went in.
fn build(
    args: &PackageArgs,
    make: fn(&str, &[AppFile]) -> Result<Vec<u8>, PackageError>,
) -> Result<(StudyConfig, usize, usize), CliError> {
    let PackageArgs {
        study,
        dist,
        out,
        allow_development_build,
    } = args;
    let study_json = std::fs::read_to_string(study).map_err(CliError::io("read", study))?;
    let config = StudyConfig::from_json(&study_json)
        .map_err(|e| CliError::usage(format!("{}: {e}", study.display())))?;
    let record_path = dist.join(BUILD_RECORD);
    let record = match std::fs::read_to_string(&record_path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(CliError::io("read", &record_path)(e)),
    };
    match optimised_build(record.as_deref()) {
        Ok(record) => eprintln!("packaging {}", record.describe()),
        Err(e) if *allow_development_build => {
            eprintln!(
                "note: {} (packaged all the same: --allow-development-build)",
                e
            )
        }
        Err(e) => {
            return Err(CliError::usage(format!(
                "{}: {e}; --allow-development-build packages it all the same, for trying the \
                 package out",
                dist.display()
            )));
        }
    }
    let names = package_file_names(&app_files(dist)?, &config);
    let files = names
        .iter()
        .map(|name| {
            let path = dist.join(name);
            let bytes = std::fs::read(&path).map_err(CliError::io("read", &path))?;
            Ok(AppFile {
                name: name.clone(),
                bytes,
            })
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    let archive = make(&study_json, &files)
        .map_err(|e| CliError::usage(format!("{}: {e}", dist.display())))?;
    std::fs::write(out, &archive).map_err(CliError::io("write", out))?;
    Ok((config, archive.len(), files.len()))
}

/// The app's files: the build's own list ([`APP_FILES_LIST`], which the Study page reads too)
/// where the folder has one, so that files put beside the app later (a study's config, a
/// test's pages) are not packaged; otherwise every file under `dist`.
fn app_files(dist: &Path) -> Result<Vec<String>, CliError> {
    let list = dist.join(APP_FILES_LIST);
    match std::fs::read_to_string(&list) {
        Ok(text) => {
            parse_file_list(&text).map_err(|e| CliError::usage(format!("{}: {e}", list.display())))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => list_files(dist),
        Err(e) => Err(CliError::io("read", &list)(e)),
    }
}

/// Every file under `dist`, relative with `/` separators.
fn list_files(dist: &Path) -> Result<Vec<String>, CliError> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = dist.join(&rel);
        let entries = std::fs::read_dir(&dir).map_err(CliError::io("read", &dir))?;
        for entry in entries {
            let entry = entry.map_err(CliError::io("read", &dir))?;
            let rel_path = rel.join(entry.file_name());
            if entry.path().is_dir() {
                stack.push(rel_path);
            } else {
                out.push(rel_path.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    Ok(out)
}
