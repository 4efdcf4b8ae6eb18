//! The Analysis page's computations, off the main thread: Table 1 and the figures over the files
//! a user gave, and Figure 1 for any context of them.

use super::{Shared, WorkerError};
use crate::analysis::figures::context_bars;
use crate::analysis::report::Analysis;
use crate::analysis::table1::compute_on;
use crate::data::provo::ContextKey;
use crate::runtime::protocol::{AnalyseRequest, Reply};

pub(super) fn analyse(state: &Shared, request: AnalyseRequest) -> Result<Reply, WorkerError> {
    let AnalyseRequest {
        files,
        extra,
        options,
        exclude,
        predictors,
    } = request;
    // Exports of the built-in passages are placed by the passages' texts.
    let passages: Vec<(String, String)> = crate::game::design::passages::built_in_passages()
        .into_iter()
        .map(|p| (p.id, p.text))
        .collect();
    let mut study =
        crate::game::readback::results_dataset::dataset_from_files(&files, &passages, exclude)?;
    study.data.systems.extend(extra);
    study.data.predictors.extend(predictors);
    use crate::game::readback::norming_progress::{progress, study_target};
    let written_at = String::from(js_sys::Date::new_0().to_iso_string());
    let norming = study
        .results
        .as_ref()
        .map(|(results, _)| progress(results, &written_at))
        .unwrap_or_default();
    let target = study.results.as_ref().and_then(|(r, _)| study_target(r));
    let tables = study.tables();
    let downloads = tables.as_ref().map(|t| t.files()).unwrap_or_default();
    let flow = tables.map(|t| t.flow.figure());
    let left_out = study.left_out();
    let data = study.data;
    let (rows, per_context) = compute_on(&data, &options)?;
    let mut analysis = Analysis::from_table(&data, rows, &per_context, options.ece);
    analysis.downloads = downloads;
    analysis.flow = flow;
    analysis.norming = norming;
    // A study with adaptive norming: its precision figure against the study's own target.
    if let Some(target) = target {
        analysis.figures.retain(|f| f.id != "norming_precision");
        analysis
            .figures
            .extend(crate::analysis::figures::norming::precision(
                &data.norms,
                &target,
            ));
    }
    analysis.left_out = left_out;
    let mut state = state.borrow_mut();
    state.dataset = Some(data);
    state.word_level = per_context;
    Ok(Reply::Analysis(Box::new(analysis)))
}

pub(super) fn participant(state: &Shared, participant: &str) -> Result<Reply, WorkerError> {
    let state = state.borrow();
    let data = state.dataset.as_ref().ok_or(WorkerError::NoDataset)?;
    let report = crate::analysis::participant::report(data, participant)?;
    Ok(Reply::Participant(Box::new(report)))
}

pub(super) fn context_figure(
    state: &Shared,
    key: ContextKey,
    system: &str,
) -> Result<Reply, WorkerError> {
    let state = state.borrow();
    let data = state.dataset.as_ref().ok_or(WorkerError::NoDataset)?;
    let figure = context_bars(data, key, system).ok_or_else(|| WorkerError::NoContext {
        key,
        system: system.to_string(),
    })?;
    Ok(Reply::Figure(Box::new(figure)))
}

/// Appendix D on the last analysed dataset with the loaded model, reporting each context.
pub(super) async fn token_level(
    state: &Shared,
    responder: &super::Responder,
    ece: crate::analysis::metrics::EceConvention,
    model: &str,
) -> Result<Reply, WorkerError> {
    let engine = super::engine(state)?;
    let norms = state
        .borrow()
        .dataset
        .as_ref()
        .map(|d| d.norms.clone())
        .ok_or(WorkerError::NoDataset)?;
    let total = norms.len();
    let started = js_sys::Date::now();
    let mut cancelled = false;
    let contexts = crate::runtime::distributions::token_level_contexts(
        &engine.model,
        &engine.tokenizer,
        &norms,
        |done| {
            if state.borrow().cancelled.contains(&responder.id) {
                cancelled = true;
                return false;
            }
            responder.send(Reply::Progress(crate::estimators::progress::Progress {
                contexts_done: done,
                contexts_total: total,
                samples_done: 0,
                elapsed_s: (js_sys::Date::now() - started) / 1000.0,
            }));
            true
        },
    )
    .await?;
    if cancelled {
        return Ok(Reply::Cancelled);
    }
    let report = crate::analysis::token_level::TokenLevelReport::new(
        model,
        &contexts,
        &state.borrow().word_level,
        ece,
    );
    Ok(Reply::TokenLevel(report.map(Box::new)))
}

/// The loaded model's surprisal of every target word of the last analysed dataset, reporting
/// each context.
pub(super) async fn target_surprisal(
    state: &Shared,
    responder: &super::Responder,
    model: &str,
) -> Result<Reply, WorkerError> {
    let engine = super::engine(state)?;
    let passages = state
        .borrow()
        .dataset
        .as_ref()
        .map(|d| crate::analysis::predictors::passages_of(&d.norms))
        .ok_or(WorkerError::NoDataset)?;
    let mut monitor = super::monitor::PageMonitor::new(state, responder);
    let result = crate::runtime::target_predictors::target_predictors(
        &engine.model,
        &engine.tokenizer,
        &passages,
        &mut monitor,
    )
    .await;
    match result {
        Ok((by_context, notes)) => Ok(Reply::Predictors {
            predictors: (model.to_string(), by_context),
            notes,
        }),
        Err(crate::estimators::surprisal::SurprisalError::Cancelled) => Ok(Reply::Cancelled),
        Err(e) => Err(e.into()),
    }
}
