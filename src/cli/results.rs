//! `clozelab results`: a study's results (JATOS's export, study-server bundles, the app's
//! downloads) as the trial table, the runs, the study's norms, the participant flow (CSV and
//! `flow.svg`), the codebook and the exclusions, the files the Analysis page offers, from the
//! same code.

use super::commands::ResultsArgs;
use super::error::CliError;
use super::figures::{known_passages, read_texts};
use crate::game::readback::trial_table::spreadsheet_variant;

pub fn results(args: &ResultsArgs) -> Result<(), CliError> {
    if args.data.source.provo.is_some() {
        return Err(CliError::usage(
            "give the study's results with --file (the Provo folder holds no study results)",
        ));
    }
    let texts = read_texts(&args.data.source.files)?;
    if !texts
        .iter()
        .any(|(_, text)| crate::game::readback::results::is_study_answers(text))
    {
        return Err(CliError::usage(
            "none of the files holds a study's results (JATOS's results archive or text \
             export, a study server's bundles, the app's downloads of answers)",
        ));
    }
    let mut study = crate::game::readback::results_dataset::dataset_from_files(
        &texts,
        &known_passages(),
        args.data.rules(),
    )?;
    for dir in &args.model {
        add_surprisal(&mut study.data, dir)?;
    }
    let Some(tables) = study.tables() else {
        return Err(CliError::usage("the study's results could not be read"));
    };
    std::fs::create_dir_all(&args.out).map_err(CliError::io("create", &args.out))?;
    for note in &study.data.notes {
        eprintln!("note: {note}");
    }
    let flow = tables.flow.figure();
    let (w, h) = flow.size();
    let figure = ("flow.svg".to_string(), flow.to_svg(w, h)?);
    let files = tables.files();
    let safe: Vec<(String, String)> = files
        .iter()
        .map(|(name, text)| spreadsheet_variant(name, text))
        .collect();
    for (name, text) in files.into_iter().chain(safe).chain([figure]) {
        let path = args.out.join(&name);
        std::fs::write(&path, text).map_err(CliError::io("write", &path))?;
        println!("{}", path.display());
    }
    eprintln!("participant flow: {}", tables.flow.sentence());
    Ok(())
}

/// The model in `dir`'s surprisal of every context's target word, named by its folder (its path
/// where another model has the same folder name).
fn add_surprisal(
    data: &mut crate::analysis::dataset::Dataset,
    dir: &std::path::Path,
) -> Result<(), CliError> {
    use crate::analysis::predictors::passages_of;
    use crate::runtime::target_predictors::target_predictors;
    let (engine, _) = super::load_engine_from(
        dir,
        crate::runtime::backend::BackendKind::Cpu,
        crate::model::Precision::F32,
    )?;
    let passages = passages_of(&data.norms);
    let (by_context, notes) = pollster::block_on(target_predictors(
        &engine.model,
        &engine.tokenizer,
        &passages,
        &mut crate::estimators::progress::Unmonitored,
    ))?;
    let folder = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let name = match data.predictors.iter().any(|(name, _)| *name == folder) {
        true => dir.display().to_string(),
        false => folder,
    };
    data.notes.extend(notes);
    data.predictors.push((name, by_context));
    Ok(())
}
