//! Beyond exact words, off the main thread: syntactic and semantic TVD (Figure 4) over the last
//! analysed dataset, and the production probes of the loaded model.

use std::rc::Rc;

use super::{Responder, Shared, WorkerError};
use crate::analysis::classes::{Level, MeaningClusters, PartOfSpeech, class_tvd_rows, histograms};
use crate::estimators::progress::Progress;
use crate::runtime::productions::{ProbeRequest, provo_items, reference_items, run_probes};
use crate::runtime::protocol::{ClassTvdRequest, Reply};
use crate::text::pos::{Lexicon, Tagger};

/// Words embedded per read back (small enough for any GPU's buffers).
const EMBEDDING_BATCH: usize = 512;

async fn tagger(state: &Shared, lexicon_url: &str) -> Result<Rc<Tagger>, WorkerError> {
    if let Some(t) = state.borrow().tagger.clone() {
        return Ok(t);
    }
    let bytes = crate::app::web::fetch::fetch_bytes_cached(
        lexicon_url,
        crate::data::served_file::FileKind::Other,
        |_, _| {},
    )
    .await?;
    let text = String::from_utf8(bytes).map_err(|_| WorkerError::NotUtf8("the lexicon"))?;
    let tagger = Rc::new(Tagger::new(Lexicon::from_js(&text)?));
    state.borrow_mut().tagger = Some(tagger.clone());
    Ok(tagger)
}

fn progress(responder: &Responder, done: usize, total: usize, started: f64) {
    responder.send(Reply::Progress(Progress {
        contexts_done: done,
        contexts_total: total,
        samples_done: 0,
        elapsed_s: (js_sys::Date::now() - started) / 1000.0,
    }));
}

pub(super) async fn class_tvd(
    state: &Shared,
    responder: &Responder,
    request: &ClassTvdRequest,
) -> Result<Reply, WorkerError> {
    let (level, options) = (request.level, &request.options);
    let data = state
        .borrow()
        .dataset
        .clone()
        .ok_or(WorkerError::NoDataset)?;
    let rows = match level {
        Level::Syntactic => {
            let tagger = tagger(state, &request.lexicon_url).await?;
            class_tvd_rows(&data, &PartOfSpeech(&tagger), level, options)?
        }
        Level::Semantic => {
            let engine = super::engine(state)?;
            let words: Vec<&str> = data.words().into_iter().collect();
            let started = js_sys::Date::now();
            let table = engine
                .embedding_table(&words, EMBEDDING_BATCH, |done, total| {
                    progress(responder, done, total, started);
                    !state.borrow().cancelled.contains(&responder.id)
                })
                .await?;
            let Some(table) = table else {
                return Ok(Reply::Cancelled);
            };
            let clusters = MeaningClusters {
                embed: |w: &str| table.get(w).cloned(),
                seed: options.seed,
            };
            class_tvd_rows(&data, &clusters, level, options)?
        }
    };
    let figures = histograms(&rows, level);
    Ok(Reply::ClassTvd { rows, figures })
}

pub(super) async fn probes(
    state: &Shared,
    responder: &Responder,
    setup: &ProbeRequest,
) -> Result<Reply, WorkerError> {
    let engine = super::engine(state)?;
    let tagger = tagger(state, &setup.lexicon_url).await?;
    let items = match &setup.references {
        Some(text) => reference_items(text, setup.contexts)?,
        None => {
            let state = state.borrow();
            let data = state.dataset.as_ref().ok_or(WorkerError::NoDataset)?;
            provo_items(&data.norms, setup.contexts)
        }
    };
    let started = js_sys::Date::now();
    let report = run_probes(
        &engine,
        &tagger,
        &items,
        &setup.strategies,
        setup.samples,
        setup.seed,
        |done, total| {
            progress(responder, done, total, started);
            !state.borrow().cancelled.contains(&responder.id)
        },
    )
    .await?;
    Ok(match report {
        Some(report) => Reply::Probes(Box::new(report)),
        None => Reply::Cancelled,
    })
}
