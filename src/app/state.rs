//! Shared app state: which backend runs, which model the worker holds, and the handle on the
//! inference worker (provided through context, as in Leptos' examples).

use leptos::prelude::*;

use crate::app::worker_client::InferenceClient;
use crate::model::Precision;
use crate::runtime::backend::BackendKind;
use crate::runtime::protocol::{InitRequest, ModelSummary, Reply, Request};

/// What the compute backend is doing.
#[derive(Clone, Debug, PartialEq)]
pub enum BackendState {
    /// The worker has not been started (a study that needs no model never starts it).
    Idle,
    Detecting,
    Ready {
        kind: BackendKind,
        adapter: String,
        /// Why WebGPU is not in use, when it is not.
        fallback_reason: Option<String>,
        /// The precision models load in, and whether the adapter offers f16.
        precision: Precision,
        f16_offered: bool,
    },
    Failed(String),
}

/// What the model loader is doing.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelState {
    Empty,
    Loading {
        step: String,
        loaded: u64,
        total: Option<u64>,
    },
    Ready(ModelSummary),
    Failed(String),
}

impl ModelState {
    pub fn summary(&self) -> Option<&ModelSummary> {
        match self {
            ModelState::Ready(s) => Some(s),
            _ => None,
        }
    }
}

/// Handles shared by every component (`Copy`: signals and stored values).
#[derive(Clone, Copy)]
pub struct RuntimeContext {
    pub backend: RwSignal<BackendState>,
    pub model: RwSignal<ModelState>,
    client: StoredValue<Option<InferenceClient>, LocalStorage>,
}

impl RuntimeContext {
    /// The model and device, as an export manifest records them.
    pub fn model_info(&self) -> crate::game::run::export::ModelInfo {
        let (backend, adapter) = match self.backend.get_untracked() {
            BackendState::Ready {
                kind,
                adapter,
                precision,
                ..
            } => (kind.name().to_string(), precision.label(&adapter)),
            _ => (String::new(), String::new()),
        };
        let summary = self
            .model
            .with_untracked(|m| m.summary().cloned())
            .unwrap_or_default();
        crate::game::run::export::ModelInfo {
            model_name: summary.name,
            architecture: summary.architecture,
            weight_sha256: summary.weight_sha256,
            tokenizer: summary.tokenizer,
            backend,
            adapter,
        }
    }

    /// The worker, started (and asked for its device) on first use.
    pub fn client(&self) -> InferenceClient {
        if let Some(client) = self.client.get_value() {
            return client;
        }
        let client = InferenceClient::spawn();
        self.client.set_value(Some(client.clone()));
        self.backend.set(BackendState::Detecting);
        let force_cpu = super::web::query_param("backend").as_deref() == Some("cpu");
        // `?precision=f16` asks for f16 weights; anything else (or nothing) is f32.
        let precision = super::web::query_param("precision")
            .and_then(|p| p.parse().ok())
            .unwrap_or_default();
        let backend = self.backend;
        client.on_switch_to_cpu(move |reason| {
            backend.set(BackendState::Ready {
                kind: crate::runtime::backend::BackendKind::Cpu,
                adapter: "CPU (burn-flex)".into(),
                fallback_reason: Some(format!("{reason}; the model was loaded again on the CPU")),
                precision: Precision::F32,
                f16_offered: false,
            });
        });
        let asking = client.clone();
        leptos::task::spawn_local(async move {
            backend.set(
                match asking
                    .call(Request::Init(InitRequest {
                        force_cpu,
                        precision,
                    }))
                    .await
                {
                    Reply::Backend {
                        kind,
                        adapter,
                        fallback_reason,
                        precision,
                        f16_offered,
                    } => BackendState::Ready {
                        kind,
                        adapter,
                        fallback_reason,
                        precision,
                        f16_offered,
                    },
                    Reply::Failed(e) => BackendState::Failed(e),
                    other => BackendState::Failed(format!("unexpected reply {other:?}")),
                },
            );
        });
        client
    }

    /// Cancels a worker request (nothing to do if the worker was never started).
    pub fn cancel(&self, id: u64) {
        if let Some(client) = self.client.get_value() {
            client.cancel(id);
        }
    }

    /// The loaded model, if any (tracked).
    pub fn model_summary(&self) -> Option<ModelSummary> {
        self.model.with(|m| m.summary().cloned())
    }
}

/// Provides the runtime context; outside a study the worker starts at once (the app then loads
/// the model the page was opened with).
pub fn provide_runtime_context(in_study: bool) -> RuntimeContext {
    let ctx = RuntimeContext {
        backend: RwSignal::new(BackendState::Idle),
        model: RwSignal::new(ModelState::Empty),
        client: StoredValue::new_local(None),
    };
    provide_context(ctx);
    if !in_study {
        ctx.client();
    }
    ctx
}

pub fn use_runtime() -> RuntimeContext {
    expect_context::<RuntimeContext>()
}
