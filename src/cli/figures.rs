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

/// The dataset from `--provo DIR` or the `--file`s.
fn dataset(args: &Args) -> Result<Dataset, CliError> {
    let files = args.values("--file");
    Ok(match (args.value("--provo"), files.is_empty()) {
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
    })
}

/// `clozelab token-level`: Appendix D — the model's exact next-token distribution against the
/// humans' first tokens, TVD and ECE at the token level beside the word level (Table 1's rows).
pub fn token_level(args: &Args) -> Result<(), CliError> {
    args.only(&[
        "--model",
        "--provo",
        "--file",
        "--contexts",
        "--backend",
        "--ece-convention",
        "--resamples",
        "--oracle-size",
        "--seed",
        "--json",
    ])?;
    let backend = args.value("--backend").unwrap_or("cpu").parse()?;
    let (engine, _) = super::load_engine_from(Path::new(args.required("--model")?), backend)?;
    let mut data = dataset(args)?;
    let limit: usize = args.parsed("--contexts", data.norms.len())?;
    data.norms.truncate(limit);
    let options = table1_options(args)?;
    let contexts = pollster::block_on(crate::runtime::inference::token_level_contexts(
        &engine.model,
        &engine.tokenizer,
        &data.norms,
        |_| true,
    ))?;
    let token = crate::analysis::token_level::summarise(&contexts, options.ece);
    let (rows, _) = compute_on(&data, &options)?;
    if args.has("--json") {
        let json = serde_json::json!({ "token_level": token, "word_level": rows });
        println!("{json}");
    } else {
        match &token {
            Some(t) => println!(
                "token level ({} contexts): TVD {:.3}, ECE original {:.3}, ECE majority {:.3}, top-1 {:.3}",
                t.contexts, t.tvd, t.ece_original, t.ece_majority, t.top1_accuracy
            ),
            None => println!("token level: no context with a response"),
        }
        print!(
            "word level:\n{}",
            crate::analysis::table1::format_table(&rows)
        );
    }
    Ok(())
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
    let data = dataset(args)?;
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
