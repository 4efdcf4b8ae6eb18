//! Sampling every context of a dataset in the worker, one request per context, each result
//! cached in IndexedDB under the model's weight hash and the settings (a reload goes on where
//! it stopped); what the Model samples panel runs.

use std::collections::BTreeMap;

use leptos::prelude::*;

use crate::app::state::RuntimeContext;
use crate::app::web::idb::IdbStore;
use crate::app::worker_client::CallError;
use crate::data::provo::{ContextKey, Samples, SystemSamples};
use crate::estimators::decoding::DecodingStrategy;
use crate::estimators::sampler::DEFAULT_TOKEN_BUDGET;
use crate::rng::stable_hash;
use crate::runtime::protocol::{Reply, Request, SampleWordsRequest};

/// Where a run stands.
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub(super) status: RwSignal<String>,
    pub(super) stop: StoredValue<bool>,
    pub(super) call: StoredValue<Option<u64>>,
}

pub(super) fn minutes(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    format!("{}:{:02}", s / 60, s % 60)
}

/// Samples every context (cached ones are read back); `None` when stopped or failed (the
/// status says which).
pub(super) async fn sample_all(
    runtime: RuntimeContext,
    run: Run,
    contexts: Vec<(ContextKey, String)>,
    per_context: usize,
    temperature: f64,
) -> Option<SystemSamples> {
    let decoding = match DecodingStrategy::new(temperature, None, None, None) {
        Ok(decoding) => decoding,
        Err(e) => {
            run.status.set(e.to_string());
            return None;
        }
    };
    let model = runtime.model_summary()?;
    let prefix = format!(
        "{}\u{1f}{per_context}\u{1f}{temperature}\u{1f}",
        model.weight_sha256
    );
    // Without IndexedDB the run still works; it just cannot be resumed.
    let store = IdbStore::open().await.ok();
    let mut cached: BTreeMap<String, Samples> = BTreeMap::new();
    if let Some(store) = &store {
        for (key, json) in store.cached(&prefix).await.unwrap_or_default() {
            if let Ok(samples) = serde_json::from_str(&json) {
                cached.insert(key, samples);
            }
        }
    }
    let started = js_sys::Date::now();
    let (mut computed, total) = (0usize, contexts.len());
    let mut out = BTreeMap::new();
    for (i, (key, context)) in contexts.into_iter().enumerate() {
        if run.stop.get_value() {
            run.status.set(format!("Stopped after {i} of {total} contexts; what was computed is kept: run again to go on."));
            return None;
        }
        let cache_key = format!(
            "{prefix}{}:{}\u{1f}{:016x}",
            key.text_id,
            key.word_num,
            stable_hash(&context)
        );
        if let Some(samples) = cached.remove(&cache_key) {
            out.insert(key, samples);
            continue;
        }
        let request = Request::SampleWords(SampleWordsRequest {
            context,
            samples: per_context,
            seed: stable_hash(&cache_key),
            decoding: decoding.clone(),
            token_budget: DEFAULT_TOKEN_BUDGET,
        });
        let call = runtime.client().start(request, None);
        run.call.set_value(Some(call.id));
        let reply = call.reply().await;
        run.call.set_value(None);
        let words = match reply {
            Reply::Words(w) => w,
            Reply::Cancelled => {
                run.status.set(format!("Stopped after {i} of {total} contexts; what was computed is kept: run again to go on."));
                return None;
            }
            other => {
                run.status.set(format!(
                    "GPT-2 could not sample context {}:{}: {}",
                    key.text_id,
                    key.word_num,
                    CallError::from_reply(other)
                ));
                return None;
            }
        };
        let samples = Samples {
            words: words
                .words
                .into_iter()
                .map(|(w, n)| (w, n as f64))
                .collect(),
            failed: words.failed as u64,
        };
        if let (Some(store), Ok(json)) = (&store, serde_json::to_string(&samples)) {
            // A failed write only costs a recomputation after a reload.
            let _ = store.cache_put(&cache_key, &json).await;
        }
        out.insert(key, samples);
        computed += 1;
        let per = (js_sys::Date::now() - started) / 1000.0 / computed as f64;
        run.status.set(format!(
            "{} of {total} contexts sampled; about {} left",
            i + 1,
            minutes(per * (total - i - 1) as f64)
        ));
    }
    run.status.set(format!(
        "All {total} contexts sampled ({computed} now, the rest from this browser's cache)."
    ));
    let name = if temperature == 1.0 {
        format!("{} (sampled here)", model.name)
    } else {
        format!("{} (T={temperature}, sampled here)", model.name)
    };
    Some((name, out))
}
