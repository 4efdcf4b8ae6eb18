//! Shared app state: which backend runs, which model is loaded.

use std::rc::Rc;

use crate::backend::{BackendKind, ComputeDevice};
use crate::engine::Engine;
use leptos::prelude::*;

/// What the compute backend is doing.
#[derive(Clone, Debug, PartialEq)]
pub enum BackendState {
    Detecting,
    Ready {
        kind: BackendKind,
        adapter: String,
        /// Why WebGPU is not in use, when it is not.
        fallback_reason: Option<String>,
    },
}

/// What the model loader is doing.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelState {
    Empty,
    Loading { step: String, loaded: u64, total: Option<u64> },
    Ready { name: String, random_test_model: bool, parameters: usize },
    Failed(String),
}

/// Handles shared by every component (`Copy`: signals and stored values).
#[derive(Clone, Copy)]
pub struct RuntimeContext {
    pub backend: RwSignal<BackendState>,
    pub model: RwSignal<ModelState>,
    pub device: StoredValue<Option<ComputeDevice>, LocalStorage>,
    pub engine: StoredValue<Option<Rc<Engine>>, LocalStorage>,
    /// Name (URL or file names) and SHA-256 of the loaded weights, for export manifests.
    pub model_info: StoredValue<(String, String), LocalStorage>,
    /// Bumped whenever `engine` changes, so effects can track it.
    pub engine_version: RwSignal<u64>,
}

pub fn provide_runtime_context() {
    let ctx = RuntimeContext {
        backend: RwSignal::new(BackendState::Detecting),
        model: RwSignal::new(ModelState::Empty),
        device: StoredValue::new_local(None),
        engine: StoredValue::new_local(None),
        model_info: StoredValue::new_local((String::new(), String::new())),
        engine_version: RwSignal::new(0),
    };
    provide_context(ctx);
    leptos::task::spawn_local(async move {
        let (device, fallback_reason) = super::web::gpu::init_compute_device().await;
        ctx.backend.set(BackendState::Ready {
            kind: device.kind,
            adapter: device.adapter.clone(),
            fallback_reason,
        });
        ctx.device.set_value(Some(device));
        super::components::model_loader::load_initial_model(ctx).await;
    });
}

pub fn use_runtime() -> RuntimeContext {
    expect_context::<RuntimeContext>()
}
