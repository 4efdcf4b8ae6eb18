//! Loading a model into the inference worker from a URL: the worker downloads it and keeps it
//! in Cache Storage. Where the app starts with one, and the hub's GPT-2.

use leptos::prelude::*;

use crate::app::state::{ModelState, RuntimeContext};
use crate::app::web::query_param;
use crate::runtime::protocol::{ModelFolder, Reply, Request};

/// The Hugging Face hub's GPT-2 small (its `resolve` URLs serve CORS).
pub const HUB_GPT2_URL: &str = "https://huggingface.co/openai-community/gpt2/resolve/main/";
/// Its id on the hub, as the model field takes it.
pub const HUB_GPT2_ID: &str = "openai-community/gpt2";
/// Where the download step of docs/researchers.md (Models) puts real GPT-2 (served by Trunk from public/).
pub const LOCAL_GPT2_URL: &str = "/models/gpt2/";

/// Shows the worker's final reply to a load.
pub(crate) fn finish(ctx: RuntimeContext, reply: Reply) {
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

/// Loads the folder at `base` in place of the model loaded now. Where that fails after another
/// model was ready, the worker still holds that one: it is shown as loaded again and the error
/// is returned, so that a mistyped name loses nothing.
pub async fn switch_model(ctx: RuntimeContext, base: String) -> Option<String> {
    let before = ctx.model.get_untracked();
    load_from_url(ctx, base).await;
    match (ctx.model.get_untracked(), before) {
        (ModelState::Failed(error), ModelState::Ready(summary)) => {
            ctx.model.set(ModelState::Ready(summary));
            Some(error)
        }
        _ => None,
    }
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
