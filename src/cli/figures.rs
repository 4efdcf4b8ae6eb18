//! `clozelab figures`: every figure of the Analysis page as SVG plus the CSV behind it, and
//! Table 1 as CSV — the same code the page draws with.

use std::path::{Path, PathBuf};

use super::commands::{FiguresArgs, TokenLevelArgs};
use super::error::CliError;
use super::flags::DataFlags;
use crate::analysis::dataset::Dataset;
use crate::analysis::figures::{Figure, all, context_bars};
use crate::analysis::table1::compute_on;
use crate::analysis::table1::table1_csv;

fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf, CliError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(CliError::io("write", &path))?;
    Ok(path)
}

pub(super) fn read_texts(paths: &[PathBuf]) -> Result<Vec<(String, String)>, CliError> {
    let mut texts = Vec::new();
    for f in paths {
        let bytes = std::fs::read(f).map_err(CliError::io("read", f))?;
        // A ZIP (JATOS's results archive) gives its text files.
        let mut inside = crate::game::readback::results::texts_of(&f.display().to_string(), bytes)?;
        for path in &inside.not_text {
            eprintln!("note: {path}: not text, left out");
        }
        texts.append(&mut inside.texts);
    }
    Ok(texts)
}

/// The texts of the passages clozelab knows (built in), for responses on non-Provo passages.
pub(super) fn known_passages() -> Vec<(String, String)> {
    crate::game::design::passages::built_in_passages()
        .into_iter()
        .map(|p| (p.id, p.text))
        .collect()
}

/// The dataset from `--provo DIR` or the `--file`s, with the `responses` merged in.
fn dataset(flags: &DataFlags, responses: &[PathBuf]) -> Result<Dataset, CliError> {
    let passages = known_passages();
    let source = &flags.source;
    if source.provo.is_some() && flags.any_results_flag() {
        return Err(CliError::usage(
            "--only-complete, --exclude-* and --include-test-runs apply to a study's results \
             given with --file, not to --provo",
        ));
    }
    let mut data = match (&source.provo, source.files.is_empty()) {
        (Some(dir), true) => Dataset::from_shared_dir(dir)?,
        (None, false) => {
            crate::game::readback::results_dataset::dataset_from_files(
                &read_texts(&source.files)?,
                &passages,
                flags.rules(),
            )?
            .data
        }
        _ => {
            return Err(CliError::usage(
                "give --provo DIR (../shared/provo) or the files (--file NORMS --file SAMPLES …)",
            ));
        }
    };
    for (name, text) in read_texts(responses)? {
        let records = if text.trim_start().starts_with(['[', '{']) {
            crate::data::import_long_json(&name, &text)?
        } else {
            crate::data::import_long_csv(&name, &text)?
        };
        data.add_responses(
            &records,
            &crate::analysis::passage_texts::PassageTexts::shared(&passages),
        );
    }
    for note in &data.notes {
        eprintln!("note: {note}");
    }
    Ok(data)
}

/// `clozelab token-level`: Appendix D — the model's exact next-token distribution against the
/// humans' first tokens, TVD and ECE at the token level beside the word level (Table 1's rows).
pub fn token_level(args: &TokenLevelArgs) -> Result<(), CliError> {
    let (engine, _) = super::load_engine(&args.model)?;
    let mut data = dataset(&args.data, &[])?;
    let limit = args.contexts.unwrap_or(data.norms.len());
    data.norms.truncate(limit);
    let options = args.table1.options();
    let contexts = pollster::block_on(crate::runtime::distributions::token_level_contexts(
        &engine.model,
        &engine.tokenizer,
        &data.norms,
        |_| true,
    ))?;
    let (rows, per_context) = compute_on(&data, &options)?;
    let model = args.model.model.display().to_string();
    let report = crate::analysis::token_level::TokenLevelReport::new(
        &model,
        &contexts,
        &per_context,
        options.ece,
    );
    let token = report.as_ref().map(|r| &r.row);
    if let (Some(dir), Some(figure)) = (
        args.out.as_deref(),
        report.as_ref().and_then(|r| r.figure.as_ref()),
    ) {
        std::fs::create_dir_all(dir).map_err(CliError::io("create", dir))?;
        let (w, h) = figure.size();
        for (name, text) in [
            (format!("{}.svg", figure.id), figure.to_svg(w, h)?),
            (format!("{}.csv", figure.id), figure.csv.clone()),
        ] {
            let path = write(dir, &name, &text)?;
            // With --json, stdout holds the JSON alone.
            if args.json {
                eprintln!("{}", path.display());
            } else {
                println!("{}", path.display());
            }
        }
    }
    if args.json {
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

pub fn figures(args: &FiguresArgs) -> Result<(), CliError> {
    let mut data = dataset(&args.data, &args.responses)?;
    super::model_systems::add_model_systems(&mut data, &args.models, args.table1.seed)?;
    let out = &args.out;
    std::fs::create_dir_all(out).map_err(CliError::io("create", out))?;
    let options = args.table1.options();
    let (rows, per_context) = compute_on(&data, &options)?;
    let mut written = vec![write(out, "table1.csv", &table1_csv(&rows))?];
    let mut figures = all(&rows, &per_context, options.ece);
    figures.extend(crate::analysis::figures::norming::precision(
        &data.norms,
        &crate::analysis::figures::norming::default_target(),
    ));
    let class_rows = super::classes::class_rows(&args.classes, &data, &options)?;
    if !class_rows.is_empty() {
        use crate::analysis::classes::{Level, histograms, rows_csv};
        written.push(write(out, "class_tvd.csv", &rows_csv(&class_rows))?);
        figures.extend(histograms(&class_rows, Level::Syntactic));
        figures.extend(histograms(&class_rows, Level::Semantic));
    }
    let system = match &args.system {
        Some(name) => name.clone(),
        None => data
            .systems
            .first()
            .map(|s| s.0.clone())
            .unwrap_or_default(),
    };
    let key = match args.context {
        Some(key) => Some(key),
        None => data
            .systems
            .iter()
            .find(|s| s.0 == system)
            .and_then(|s| s.1.keys().next().copied()),
    };
    if let Some(key) = key {
        let bars = context_bars(&data, key, &system).ok_or_else(|| {
            CliError::usage(format!("no context {key} with samples of {system:?}"))
        })?;
        figures.push(bars);
    }
    if !data.participants.is_empty() {
        written.extend(participants(
            &data,
            args.participant.as_deref(),
            out,
            &mut figures,
        )?);
    }
    for figure in &figures {
        let (w, h) = figure.size();
        written.push(write(
            out,
            &format!("{}.svg", figure.id),
            &figure.to_svg(w, h)?,
        )?);
        written.push(write(out, &format!("{}.csv", figure.id), &figure.csv)?);
    }
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}

/// participants.csv (every participant against every system) and, for `--participant ID`, that
/// participant's scores and the accuracy histogram with them and the systems marked.
fn participants(
    data: &Dataset,
    chosen: Option<&str>,
    out: &Path,
    figures: &mut Vec<Figure>,
) -> Result<Vec<PathBuf>, CliError> {
    use crate::analysis::participant::{every_participant, report, scores_csv};
    let reports = every_participant(data);
    let own: Vec<_> = reports
        .iter()
        .filter_map(|r| r.scores.first().cloned())
        .collect();
    let systems: Vec<String> = data.systems.iter().map(|(name, _)| name.clone()).collect();
    let table = scores_csv(
        &systems,
        &own,
        reports.first().map_or(0, |r| r.participants),
    );
    let mut written = vec![write(out, "participants.csv", &table)?];
    if let Some(id) = chosen {
        let r = report(data, id).map_err(|e| CliError::usage(e.to_string()))?;
        let name = crate::game::run::export::file_safe(id);
        written.push(write(out, &format!("participant-{name}.csv"), &r.csv())?);
        let mut histogram = r.histogram;
        histogram.id = format!("participant-{name}-accuracy");
        figures.push(histogram);
    }
    Ok(written)
}
