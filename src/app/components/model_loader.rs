//! The Model page's loader: what is loaded, a model switched by URL or hub id ([`ModelSwitch`],
//! through [`crate::app::load_model`]), or local files sent to the worker chunk by chunk, so the
//! page never holds a whole weights file.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::app::components::model_switch::ModelSwitch;
use crate::app::load_model::{HUB_GPT2_ID, finish};
use crate::app::state::{ModelState, RuntimeContext, use_runtime};
use crate::app::web::{WebError, query_param};
use crate::app::worker_client::CallError;
use crate::runtime::protocol::{
    Reply, Request, UploadBeginRequest, UploadChunkRequest, chunk_ranges,
};

/// Why the chosen files did not reach the worker.
#[derive(Debug, thiserror::Error)]
enum SendFilesError {
    #[error(transparent)]
    Read(#[from] WebError),
    #[error(transparent)]
    Worker(#[from] CallError),
}

/// Sends the chosen files to the worker, one chunk at a time (the next chunk is read only when
/// the worker has the last one), then has it build the model.
async fn load_from_files(ctx: RuntimeContext, list: web_sys::FileList) {
    let files: Vec<gloo_file::File> = (0..list.length())
        .filter_map(|i| list.get(i))
        .map(gloo_file::File::from)
        .collect();
    let total: u64 = files.iter().map(|f| f.size()).sum();
    let client = ctx.client();
    let result: Result<(), SendFilesError> = async {
        let announce = files.iter().map(|f| (f.name(), f.size())).collect();
        if let Reply::Failed(e) = client
            .call(Request::UploadBegin(UploadBeginRequest { files: announce }))
            .await
        {
            return Err(CallError::Failed(e).into());
        }
        for (index, file) in files.iter().enumerate() {
            for range in chunk_ranges(file.size()) {
                let piece = file.slice(range.start, range.end);
                let bytes = gloo_file::futures::read_as_bytes(&piece)
                    .await
                    .map_err(|e| WebError::ReadFile {
                        name: file.name(),
                        message: e.to_string(),
                    })?;
                match client
                    .call(Request::UploadChunk(UploadChunkRequest {
                        file: index,
                        bytes,
                    }))
                    .await
                {
                    Reply::ChunkReceived { loaded } => ctx.model.set(ModelState::Loading {
                        step: format!("sending {} to the worker", file.name()),
                        loaded,
                        total: Some(total),
                    }),
                    other => return Err(CallError::from_reply(other).into()),
                }
            }
        }
        Ok(())
    }
    .await;
    match result {
        Ok(()) => {
            ctx.model.set(ModelState::Loading {
                step: "building the model on the device".into(),
                loaded: 0,
                total: None,
            });
            finish(ctx, client.call(Request::UploadEnd).await);
        }
        Err(e) => ctx.model.set(ModelState::Failed(e.to_string())),
    }
}

#[component]
pub fn ModelLoader() -> impl IntoView {
    let ctx = use_runtime();
    let on_files = move |list: Option<web_sys::FileList>| {
        if let Some(list) = list.filter(|l| l.length() > 0) {
            leptos::task::spawn_local(load_from_files(ctx, list));
        }
    };
    view! {
        <section class="model-loader" aria-labelledby="model-heading">
            <h2 id="model-heading">"Model"</h2>
            <div class="model-state" data-testid="model-state" aria-live="polite">
                {move || match ctx.model.get() {
                    ModelState::Empty => {
                        view! {
                            <p>
                                "No model loaded. Load one (GPT-2, a Pythia or a SmolLM2) from the hub, a URL or files on your computer."
                            </p>
                        }
                            .into_any()
                    }
                    ModelState::Loading { step, loaded, total } => {
                        view! {
                            <p>
                                {format!(
                                    "Loading {step}… {}",
                                    match total {
                                        Some(t) if t > 0 => {
                                            format!(
                                                "{:.1} / {:.1} MB",
                                                loaded as f64 / 1e6,
                                                t as f64 / 1e6,
                                            )
                                        }
                                        _ if loaded > 0 => format!("{:.1} MB", loaded as f64 / 1e6),
                                        _ => String::new(),
                                    },
                                )}
                            </p>
                            <progress
                                max=move || total.unwrap_or(0).max(1) as f64
                                value=move || loaded as f64
                                aria-label="download progress"
                            ></progress>
                        }
                            .into_any()
                    }
                    ModelState::Ready(summary) => {
                        view! { <p data-testid="model-loaded">{summary.loaded_line()}</p> }
                            .into_any()
                    }
                    ModelState::Failed(e) => {
                        view! {
                            <p class="error" role="alert">
                                {format!("Could not load the model: {e}")}
                            </p>
                        }
                            .into_any()
                    }
                }}
            </div>
            <ModelSwitch initial=query_param("model").unwrap_or_else(|| HUB_GPT2_ID.to_string()) />
            <div
                class="drop-zone"
                on:dragover=move |ev| ev.prevent_default()
                on:drop=move |ev: web_sys::DragEvent| {
                    ev.prevent_default();
                    on_files(ev.data_transfer().and_then(|d| d.files()));
                }
            >
                <label for="model-files">
                    "Or choose (or drop here) config.json, model.safetensors and tokenizer.json / vocab.json + merges.txt: "
                </label>
                <input
                    id="model-files"
                    type="file"
                    multiple
                    on:change=move |ev| {
                        let input = ev
                            .target()
                            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
                        on_files(input.and_then(|i| i.files()));
                    }
                />
            </div>
        </section>
    }
}
