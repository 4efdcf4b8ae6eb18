//! `clozelab figures`: every figure of the Analysis page as SVG plus the CSV behind it, and
//! Table 1 as CSV — the same code the page draws with.

use std::path::{Path, PathBuf};

use super::error::CliError;
use super::{Args, table1_options};
use crate::analysis::dataset::Dataset;
use crate::analysis::figures::{Figure, Plot, all, context_bars, table1_csv};
use crate::analysis::table1::compute_on;

fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf, CliError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(CliError::io("write", &path))?;
    Ok(path)
}

fn size(figure: &Figure) -> (u32, u32) {
    match figure.plot {
        Plot::Scatter { .. } => (1200, 380),
        _ => (900, 520),
    }
}

pub fn figures(args: &Args) -> Result<(), CliError> {
    args.only(&[
        "--provo",
        "--file",
        "--out",
        "--seed",
        "--resamples",
        "--oracle-size",
        "--ece-convention",
        "--context",
        "--system",
    ])?;
    let files = args.values("--file");
    let data = match (args.value("--provo"), files.is_empty()) {
        (Some(dir), true) => Dataset::from_shared_dir(Path::new(dir))?,
        (None, false) => {
            let texts = files
                .iter()
                .map(|f| {
                    let text = std::fs::read_to_string(f).map_err(CliError::io("read", *f))?;
                    Ok((f.to_string(), text))
                })
                .collect::<Result<Vec<_>, CliError>>()?;
            Dataset::from_files(&texts)?
        }
        _ => {
            return Err(CliError::usage(
                "give --provo DIR (../shared/provo) or the files (--file NORMS --file SAMPLES …)",
            ));
        }
    };
    let out = PathBuf::from(args.required("--out")?);
    std::fs::create_dir_all(&out).map_err(CliError::io("create", &out))?;
    let options = table1_options(args)?;
    let (rows, per_context) = compute_on(&data, &options)?;
    let mut written = vec![write(&out, "table1.csv", &table1_csv(&rows))?];
    let mut figures = all(&rows, &per_context, options.ece);
    let system = match args.value("--system") {
        Some(name) => name.to_string(),
        None => data
            .systems
            .first()
            .map(|s| s.0.clone())
            .unwrap_or_default(),
    };
    let key = match args.value("--context") {
        Some(text) => {
            let parsed = text
                .split_once(':')
                .and_then(|(t, w)| Some((t.parse().ok()?, w.parse().ok()?)));
            Some(parsed.ok_or_else(|| CliError::usage("--context is TEXT_ID:WORD_NUM"))?)
        }
        None => data
            .systems
            .iter()
            .find(|s| s.0 == system)
            .and_then(|s| s.1.keys().next().copied()),
    };
    if let Some(key) = key {
        let bars = context_bars(&data, key, &system).ok_or_else(|| {
            CliError::usage(format!(
                "no context {}:{} with samples of {system:?}",
                key.0, key.1
            ))
        })?;
        figures.push(bars);
    }
    for figure in &figures {
        let (w, h) = size(figure);
        written.push(write(
            &out,
            &format!("{}.svg", figure.id),
            &figure.to_svg(w, h)?,
        )?);
        written.push(write(&out, &format!("{}.csv", figure.id), &figure.csv)?);
    }
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}
