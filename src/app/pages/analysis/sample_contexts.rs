//! Sampling every context of a dataset in the worker, a few contexts per request (the worker
//! runs them together), each result cached in IndexedDB under the model's weight hash and the
//! settings (a reload goes on where it stopped); what the Model samples panel runs.

use std::collections::BTreeMap;

use leptos::prelude::*;

use crate::app::state::RuntimeContext;
use crate::app::web::idb::IdbStore;
use crate::app::worker_client::CallError;
use crate::data::provo::{ContextKey, Samples, SystemSamples};
use crate::estimators::decoding::DecodingStrategy;
use crate::estimators::sampler::{DEFAULT_TOKEN_BUDGET, contexts_to_join};
use crate::rng::stable_hash;
use crate::runtime::protocol::{Reply, Request, SampleWordsRequest, SeededContext};

/// Where a run stands.
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub(super) status: RwSignal<String>,
    pub(super) stop: StoredValue<bool>,
    pub(super) call: StoredValue<Option<u64>>,
}

fn stopped(done: usize, total: usize) -> String {
    format!(
        "Stopped after {done} of {total} contexts; what was computed is kept: run again to go on."
    )
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
    let total = contexts.len();
    let mut out = BTreeMap::new();
    let mut pending = Vec::new();
    for (key, context) in contexts {
        let cache_key = format!(
            "{prefix}{}:{}\u{1f}{:016x}",
            key.text_id,
            key.word_num,
            stable_hash(&context)
        );
        match cached.remove(&cache_key) {
            Some(samples) => {
                out.insert(key, samples);
            }
            None => pending.push((key, context, cache_key)),
        }
    }
    let from_cache = out.len();
    let started = js_sys::Date::now();
    let mut computed = 0usize;
    for group in pending.chunks(contexts_to_join(per_context)) {
        if run.stop.get_value() {
            run.status.set(stopped(from_cache + computed, total));
            return None;
        }
        let request = Request::SampleWords(SampleWordsRequest {
            contexts: group
                .iter()
                .map(|(_, context, cache_key)| SeededContext {
                    context: context.clone(),
                    seed: stable_hash(cache_key),
                })
                .collect(),
            samples: per_context,
            decoding: decoding.clone(),
            token_budget: DEFAULT_TOKEN_BUDGET,
        });
        let call = runtime.client().start(request, None);
        run.call.set_value(Some(call.id));
        let reply = call.reply().await;
        run.call.set_value(None);
        let all = match reply {
            Reply::Words(all) if all.len() == group.len() => all,
            Reply::Cancelled => {
                run.status.set(stopped(from_cache + computed, total));
                return None;
            }
            other => {
                let (key, _, _) = &group[0];
                run.status.set(format!(
                    "The model could not sample contexts from {}:{} on: {}",
                    key.text_id,
                    key.word_num,
                    CallError::from_reply(other)
                ));
                return None;
            }
        };
        for ((key, _, cache_key), words) in group.iter().zip(all) {
            let samples = crate::runtime::context_samples::samples_of(words);
            if let (Some(store), Ok(json)) = (&store, serde_json::to_string(&samples)) {
                // A failed write only costs a recomputation after a reload.
                let _ = store.cache_put(cache_key, &json).await;
            }
            out.insert(*key, samples);
        }
        computed += group.len();
        let per = (js_sys::Date::now() - started) / 1000.0 / computed as f64;
        run.status.set(format!(
            "{} of {total} contexts sampled; about {} left",
            from_cache + computed,
            minutes(per * (pending.len() - computed) as f64)
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
