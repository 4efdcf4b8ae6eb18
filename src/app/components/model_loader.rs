//! Loading GPT-2: from a URL (cached in the browser), or from local files.

use std::rc::Rc;

use crate::engine::{Engine, TokenizerFiles, model_parts_from_files};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::app::state::{ModelState, RuntimeContext, use_runtime};
use crate::app::web::{fetch, files, query_param, yield_to_browser};

/// The Hugging Face hub's GPT-2 small (its `resolve` URLs serve CORS).
pub const HUB_GPT2_URL: &str = "https://huggingface.co/openai-community/gpt2/resolve/main/";
/// Where the README's download step puts real GPT-2 (served by Trunk from public/).
pub const LOCAL_GPT2_URL: &str = "models/gpt2/";

fn with_slash(base: &str) -> String {
    if base.ends_with('/') { base.to_string() } else { format!("{base}/") }
}

async fn fetch_step(ctx: RuntimeContext, url: &str, step: &str) -> Result<Vec<u8>, String> {
    let step_name = step.to_string();
    fetch::fetch_bytes_cached(url, move |loaded, total| {
        ctx.model.set(ModelState::Loading { step: step_name.clone(), loaded, total });
    })
    .await
}

/// Downloads a model folder from `base` and loads it.
pub async fn load_from_url(ctx: RuntimeContext, base: String) {
    let base = with_slash(base.trim());
    let result: Result<(), String> = async {
        let config = fetch_step(ctx, &format!("{base}config.json"), "config.json").await?;
        let config = String::from_utf8(config).map_err(|_| "config.json is not UTF-8 text".to_string())?;
        // tokenizer.json when the folder has one (the hub does), else vocab.json + merges.txt.
        // Fetching it directly avoids a separate existence check and a second read.
        let tokenizer = if let Ok(json) = fetch_step(ctx, &format!("{base}tokenizer.json"), "tokenizer.json").await {
            TokenizerFiles::TokenizerJson(json)
        } else {
            let vocab = fetch_step(ctx, &format!("{base}vocab.json"), "vocab.json").await?;
            let merges = fetch_step(ctx, &format!("{base}merges.txt"), "merges.txt").await?;
            TokenizerFiles::VocabAndMerges {
                vocab_json: String::from_utf8(vocab).map_err(|_| "vocab.json is not UTF-8".to_string())?,
                merges_txt: String::from_utf8(merges).map_err(|_| "merges.txt is not UTF-8".to_string())?,
            }
        };
        let weights = fetch_step(ctx, &format!("{base}model.safetensors"), "model.safetensors").await?;
        install(ctx, base.clone(), &config, &weights, tokenizer).await
    }
    .await;
    if let Err(e) = result {
        ctx.model.set(ModelState::Failed(e));
    }
}

async fn install(ctx: RuntimeContext, name: String, config: &str, weights: &[u8], tokenizer: TokenizerFiles) -> Result<(), String> {
    ctx.model.set(ModelState::Loading { step: "building the model on the device".into(), loaded: 0, total: None });
    yield_to_browser().await;
    let Some(device) = ctx.device.get_value() else {
        return Err("the compute device is not ready yet".into());
    };
    let engine = Engine::load(config, weights, tokenizer, &device.device).map_err(|e| e.to_string())?;
    let parameters = engine.config.num_params();
    let random_test_model = engine.random_test_model;
    ctx.model_info.set_value((name.clone(), crate::game::export::sha256_hex(weights)));
    ctx.engine.set_value(Some(Rc::new(engine)));
    ctx.engine_version.update(|v| *v += 1);
    ctx.model.set(ModelState::Ready { name, random_test_model, parameters });
    Ok(())
}

/// At start: the model named by `?model=URL`, else real GPT-2 from public/models/ if the
/// README's download step put it there. Nothing is downloaded from the hub unasked.
pub async fn load_initial_model(ctx: RuntimeContext) {
    if let Some(url) = query_param("model") {
        load_from_url(ctx, url).await;
    } else if fetch::exists(&format!("{LOCAL_GPT2_URL}config.json")).await {
        load_from_url(ctx, LOCAL_GPT2_URL.to_string()).await;
    }
}

async fn load_from_files(ctx: RuntimeContext, list: web_sys::FileList) {
    ctx.model.set(ModelState::Loading { step: "reading files".into(), loaded: 0, total: None });
    let result = async {
        let named = files::read_file_list(&list).await?;
        let names: Vec<String> = named.iter().map(|(n, _)| n.clone()).collect();
        let parts = model_parts_from_files(named)?;
        install(ctx, format!("local files: {}", names.join(", ")), &parts.config_json, &parts.weights, parts.tokenizer).await
    }
    .await;
    if let Err(e) = result {
        ctx.model.set(ModelState::Failed(e));
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
                    ModelState::Empty => view! { <p>"No model loaded. Load GPT-2 from a URL or from files on your computer."</p> }.into_any(),
                    ModelState::Loading { step, loaded, total } => view! {
                        <p>{format!("Loading {step}… {}", match total {
                            Some(t) if t > 0 => format!("{:.1} / {:.1} MB", loaded as f64 / 1e6, t as f64 / 1e6),
                            _ if loaded > 0 => format!("{:.1} MB", loaded as f64 / 1e6),
                            _ => String::new(),
                        })}</p>
                        <progress max=move || total.unwrap_or(0).max(1) as f64 value=move || loaded as f64 aria-label="download progress"></progress>
                    }.into_any(),
                    ModelState::Ready { name, random_test_model, parameters } => view! {
                        <p data-ready="true">{format!("Loaded {name} ({:.1}M parameters).", parameters as f64 / 1e6)}</p>
                        {random_test_model.then(|| view! {
                            <p class="warning" data-testid="random-model-warning" role="alert">
                                "This is clozelab's random TEST model, not GPT-2: its predictions are noise. Load real GPT-2 to compare with people."
                            </p>
                        })}
                    }.into_any(),
                    ModelState::Failed(e) => view! { <p class="error" role="alert">{format!("Could not load the model: {e}")}</p> }.into_any(),
                }}
            </div>
            <form class="load-url" on:submit=move |ev| {
                ev.prevent_default();
                leptos::task::spawn_local(load_from_url(ctx, url.get_untracked()));
            }>
                <label for="model-url">"Model folder URL"</label>
                <input id="model-url" type="url" prop:value=move || url.get() on:input=move |ev| url.set(event_target_value(&ev)) />
                <button type="submit" disabled=busy>"Load from URL"</button>
            </form>
            <div class="drop-zone"
                on:dragover=move |ev| ev.prevent_default()
                on:drop=move |ev: web_sys::DragEvent| {
                    ev.prevent_default();
                    on_files(ev.data_transfer().and_then(|d| d.files()));
                }>
                <label for="model-files">"Or choose (or drop here) config.json, model.safetensors and tokenizer.json / vocab.json + merges.txt: "</label>
                <input id="model-files" type="file" multiple
                    on:change=move |ev| {
                        let input = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
                        on_files(input.and_then(|i| i.files()));
                    } />
            </div>
        </section>
    }
}
