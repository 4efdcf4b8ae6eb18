//! Loading GPT-2 into the inference worker: from a URL (the worker downloads it and keeps it in
//! Cache Storage), or from local files sent to the worker chunk by chunk, so the page never
//! holds a whole weights file.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::app::state::{ModelState, RuntimeContext, use_runtime};
use crate::app::web::{WebError, query_param};
use crate::app::worker_client::CallError;
use crate::runtime::protocol::{
    ModelFolder, Reply, Request, UploadBeginRequest, UploadChunkRequest, chunk_ranges,
};

/// The Hugging Face hub's GPT-2 small (its `resolve` URLs serve CORS).
pub const HUB_GPT2_URL: &str = "https://huggingface.co/openai-community/gpt2/resolve/main/";
/// Where the download step of docs/researchers.md (Models) puts real GPT-2 (served by Trunk from public/).
pub const LOCAL_GPT2_URL: &str = "/models/gpt2/";

/// Shows the worker's final reply to a load.
fn finish(ctx: RuntimeContext, reply: Reply) {
    ctx.model.set(match reply {
        Reply::ModelReady(summary) => ModelState::Ready(summary),
        Reply::Failed(e) => ModelState::Failed(e),
        other => ModelState::Failed(format!("unexpected reply {other:?}")),
    });
}

/// Has the worker download the model folder at `base` (relative URLs resolve against the app's
/// root, where the worker script lives).
pub async fn load_from_url(ctx: RuntimeContext, base: String) {
    ctx.model.set(ModelState::Loading {
        step: "config.json".into(),
        loaded: 0,
        total: None,
    });
    let on_progress = Box::new(move |reply: &Reply| {
        if let Reply::Loading {
            step,
            loaded,
            total,
        } = reply
        {
            ctx.model.set(ModelState::Loading {
                step: step.clone(),
                loaded: *loaded,
                total: *total,
            });
        }
    });
    let reply = ctx
        .client()
        .start(Request::LoadUrl(ModelFolder { base }), Some(on_progress))
        .reply()
        .await;
    finish(ctx, reply);
}

/// At start: the model named by `?model=URL`, else real GPT-2 from public/models/ if the
/// download step of docs/researchers.md put it there. Nothing is downloaded from the hub unasked.
pub async fn load_initial_model(ctx: RuntimeContext) {
    if let Some(url) = query_param("model") {
        load_from_url(ctx, url).await;
    } else if crate::app::web::local_model::is_served(LOCAL_GPT2_URL).await {
        load_from_url(ctx, LOCAL_GPT2_URL.to_string()).await;
    }
}

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
    let url = RwSignal::new(query_param("model").unwrap_or_else(|| HUB_GPT2_URL.to_string()));
    let busy = move || matches!(ctx.model.get(), ModelState::Loading { .. });
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
                                "No model loaded. Load GPT-2 from a URL or from files on your computer."
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
            <form
                class="load-url"
                on:submit=move |ev| {
                    ev.prevent_default();
                    leptos::task::spawn_local(load_from_url(ctx, url.get_untracked()));
                }
            >
                <label for="model-url">"Model folder URL"</label>
                <input
                    id="model-url"
                    type="url"
                    prop:value=move || url.get()
                    on:input=move |ev| url.set(event_target_value(&ev))
                />
                <button type="submit" disabled=busy>
                    "Load from URL"
                </button>
            </form>
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
