//! Loading GPT-2 inside the worker: a model folder from a URL (through Cache Storage), or the
//! files the page uploaded chunk by chunk. The weights are held once, here, never on the page.

use super::{Responder, Shared, WorkerError, device};
use crate::app::web::fetch;
use crate::data::served_file::FileKind;
use crate::runtime::backend::ComputeDevice;
use crate::runtime::engine::{Engine, TokenizerFiles, model_parts_from_files};
use crate::runtime::model_folder::read_model_folder;
use crate::runtime::protocol::{InitRequest, ModelSummary, Reply, UploadError};

/// Loads the model folder at `base` on the worker's device, reporting each file's download.
pub(super) async fn load_url(
    state: &Shared,
    responder: &Responder,
    base: String,
) -> Result<Reply, WorkerError> {
    let (compute, _) = device(state, &InitRequest::default()).await;
    let (engine, summary) = from_url(&base, &compute, |step, loaded, total| {
        responder.send(Reply::Loading {
            step: step.to_string(),
            loaded,
            total,
        })
    })
    .await?;
    let mut state = state.borrow_mut();
    state.set_engine(engine);
    state.model_url = Some(base);
    Ok(Reply::ModelReady(summary))
}

/// Builds the model from the upload that has just ended.
pub(super) async fn upload_end(
    state: &Shared,
    responder: &Responder,
) -> Result<Reply, WorkerError> {
    let (compute, _) = device(state, &InitRequest::default()).await;
    let upload = state
        .borrow_mut()
        .upload
        .take()
        .ok_or(UploadError::NotStarted)?;
    let files = upload.finish()?;
    responder.send(Reply::Loading {
        step: "building the model on the device".into(),
        loaded: 0,
        total: None,
    });
    let (engine, summary) = from_files(files, &compute).await?;
    let mut state = state.borrow_mut();
    state.set_engine(engine);
    state.model_url = None;
    Ok(Reply::ModelReady(summary))
}

fn with_slash(base: &str) -> String {
    if base.ends_with('/') {
        base.to_string()
    } else {
        format!("{base}/")
    }
}

/// Downloads `config.json`, the tokenizer (`tokenizer.json`, else `vocab.json` + `merges.txt`,
/// else `encoder.json` + `vocab.bpe`) and `model.safetensors` from `base`, reporting
/// `(file, loaded, total)`. A host's page in place of a file counts as the file not there.
pub(super) async fn from_url(
    base: &str,
    device: &ComputeDevice,
    progress: impl Fn(&str, u64, Option<u64>),
) -> Result<(Engine, ModelSummary), WorkerError> {
    let base = with_slash(base.trim());
    let progress = &progress;
    let parts = read_model_folder(&base, |file: &'static str| {
        let url = format!("{base}{file}");
        async move {
            fetch::fetch_bytes_cached(&url, FileKind::for_name(file), |loaded, total| {
                progress(file, loaded, total)
            })
            .await
            .map_err(|e| e.what_came_back())
        }
    })
    .await?;
    progress("building the model on the device", 0, None);
    build(
        base,
        &parts.config_json,
        parts.weights,
        parts.tokenizer,
        device,
    )
    .await
}

/// Builds the model from uploaded files (any order; see [`model_parts_from_files`]).
async fn from_files(
    files: Vec<(String, Vec<u8>)>,
    device: &ComputeDevice,
) -> Result<(Engine, ModelSummary), WorkerError> {
    let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    let parts = model_parts_from_files(files)?;
    build(
        format!("local files: {}", names.join(", ")),
        &parts.config_json,
        parts.weights,
        parts.tokenizer,
        device,
    )
    .await
}

async fn build(
    name: String,
    config: &str,
    weights: Vec<u8>,
    tokenizer: TokenizerFiles,
    device: &ComputeDevice,
) -> Result<(Engine, ModelSummary), WorkerError> {
    let weight_sha256 = crate::app::web::digest::sha256_hex(&weights).await;
    let tokenizer_files = tokenizer.file_names();
    let mut engine = Engine::load(config, &weights, tokenizer, &device.device)?
        .with_precision(device.precision)?;
    if device.kind == crate::runtime::backend::BackendKind::Cpu {
        super::cpu_threads::share_with_helpers(&mut engine).await;
    }
    // `weights` is dropped here: only the model's tensors stay.
    let summary = ModelSummary {
        name,
        random_test_model: engine.random_test_model,
        parameters: engine.config.num_params(),
        architecture: engine.config.family.name().to_string(),
        tokenizer: format!(
            "{tokenizer_files}, {} tokens",
            engine.tokenizer.vocab_size()
        ),
        weight_sha256,
    };
    Ok((engine, summary))
}
