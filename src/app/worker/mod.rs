//! The inference worker: a dedicated Web Worker (gloo-worker) that owns the device, GPT-2, the
//! tokenizer and every estimator. The page talks to it only through
//! [`crate::runtime::protocol`]; nothing here touches the DOM.

mod analyse;
mod beyond_words;
mod cpu_threads;
mod device;
pub mod direct;
mod error;
mod games;
mod handle;
mod helper_messages;
mod helper_pool;
mod load;
mod lost;
mod monitor;
pub mod product_helper;
mod shared_job;
mod speed;
mod started_job;
mod token_requests;
mod word_requests;

pub use error::WorkerError;

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use gloo_worker::{HandlerId, Registrable, Worker, WorkerScope};

use crate::estimators::wordprob::WordScorer;
use crate::model::Precision;
use crate::runtime::backend::ComputeDevice;
use crate::runtime::engine::Engine;
use crate::runtime::protocol::{
    CancelRequest, FromWorker, InitRequest, Reply, Request, ToWorker, UploadBeginRequest,
    UploadBuffer, UploadChunkRequest,
};
use handle::handle;

/// Starts the worker's message loop (called by the worker binary).
pub fn register() {
    InferenceWorker::registrar().register();
}

/// Everything the worker holds between messages.
#[derive(Default)]
struct State {
    device: Option<(ComputeDevice, Option<String>)>,
    engine: Option<Rc<Engine>>,
    /// Where the model came from, to load it again after a lost GPU (`None`: local files).
    model_url: Option<String>,
    /// A second model that plays the two-token game beside GPT-2 (same vocabulary).
    opponent: Option<Rc<Engine>>,
    opponent_url: Option<String>,
    /// The Analysis page's last dataset (norms and samples), for per-context figures.
    dataset: Option<crate::analysis::dataset::Dataset>,
    /// Its Table 1 per context (the word level the token level is drawn beside).
    word_level: Vec<crate::analysis::table1::PerContext>,
    upload: Option<UploadBuffer>,
    /// The part-of-speech tagger (its lexicon is fetched once).
    tagger: Option<Rc<crate::text::pos::Tagger>>,
    /// The exact word scorer of the loaded model (its tables are costly to build).
    scorer: Option<WordScorer>,
    /// Requests asked to stop; checked at every tree level.
    cancelled: HashSet<u64>,
}

impl State {
    /// A new model; what was built for the old one goes.
    fn set_engine(&mut self, engine: Engine) {
        self.engine = Some(Rc::new(engine));
        self.scorer = None;
    }
}

type Shared = Rc<RefCell<State>>;

pub struct InferenceWorker {
    state: Shared,
}

/// Where a request's replies go: the page that sent it through gloo-worker, or a direct
/// caller (see [`direct`]).
type ReplySink = Rc<dyn Fn(FromWorker)>;

/// Sends replies for one request.
#[derive(Clone)]
struct Responder {
    sink: ReplySink,
    id: u64,
}

impl Responder {
    fn send(&self, reply: Reply) {
        (self.sink)(FromWorker { id: self.id, reply });
    }
}

/// Handles one message: a cancel or an upload piece at once, anything else as a task that
/// sends its replies through `sink`.
fn dispatch(state: &Shared, message: ToWorker, sink: ReplySink) {
    let responder = Responder {
        sink,
        id: message.id,
    };
    let state = state.clone();
    match message.request {
        // Handled at once, so that they reach a running computation between two levels.
        Request::Cancel(CancelRequest { id }) => {
            state.borrow_mut().cancelled.insert(id);
        }
        Request::UploadBegin(UploadBeginRequest { files }) => {
            state.borrow_mut().upload = Some(UploadBuffer::begin(files));
            responder.send(Reply::ChunkReceived { loaded: 0 });
        }
        Request::UploadChunk(UploadChunkRequest { file, bytes }) => {
            let pushed = state
                .borrow_mut()
                .upload
                .as_mut()
                .map(|u| u.push(file, &bytes));
            responder.send(match pushed {
                Some(Ok(loaded)) => Reply::ChunkReceived { loaded },
                Some(Err(e)) => Reply::Failed(e.to_string()),
                None => Reply::Failed("no upload was started".into()),
            });
        }
        request => wasm_bindgen_futures::spawn_local(async move {
            let id = responder.id;
            let reply = handle(&state, request, &responder).await;
            state.borrow_mut().cancelled.remove(&id);
            responder.send(reply);
        }),
    }
}

impl Worker for InferenceWorker {
    type Message = ();
    type Input = ToWorker;
    type Output = FromWorker;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        Self {
            state: Rc::new(RefCell::new(State::default())),
        }
    }

    fn update(&mut self, _scope: &WorkerScope<Self>, _msg: Self::Message) {}

    fn received(&mut self, scope: &WorkerScope<Self>, message: ToWorker, who: HandlerId) {
        let scope = scope.clone();
        dispatch(
            &self.state,
            message,
            Rc::new(move |reply| scope.respond(who, reply)),
        );
    }
}

thread_local! {
    /// One device initialisation at a time: requests arriving together (the page's `Init` and
    /// a model load) would otherwise both initialise, and the second (burn-wgpu cannot be
    /// initialised twice) would fall back to the CPU behind the first's back.
    static DEVICE_INIT: Rc<futures::lock::Mutex<()>> = Rc::new(futures::lock::Mutex::new(()));
}

/// The device, initialised on first use (by the page's `Init`, or by whichever request
/// comes first, with the defaults): models load on it in `init.precision` where it offers that.
async fn device(state: &Shared, init: &InitRequest) -> (ComputeDevice, Option<String>) {
    let lock = DEVICE_INIT.with(Rc::clone);
    let _only_one = lock.lock().await;
    if let Some(d) = state.borrow().device.clone() {
        return d;
    }
    let (mut compute, fallback) = device::init_compute_device(init.force_cpu).await;
    if init.precision.check(&compute.device).is_ok() {
        compute.precision = init.precision;
    }
    // Kept as the message the page shows beside the backend.
    let chosen = (compute, fallback.map(|reason| reason.to_string()));
    state.borrow_mut().device = Some(chosen.clone());
    chosen
}

fn backend_reply(device: &(ComputeDevice, Option<String>)) -> Reply {
    Reply::Backend {
        kind: device.0.kind,
        adapter: device.0.adapter.clone(),
        fallback_reason: device.1.clone(),
        precision: device.0.precision,
        f16_offered: Precision::f16_offered(&device.0.device),
    }
}

/// Whether the worker computes on WebGPU now (not yet initialised or on the CPU: false).
fn on_gpu(state: &Shared) -> bool {
    state
        .borrow()
        .device
        .as_ref()
        .is_some_and(|(d, _)| d.kind == crate::runtime::backend::BackendKind::Wgpu)
}

fn engine(state: &Shared) -> Result<Rc<Engine>, WorkerError> {
    state.borrow().engine.clone().ok_or(WorkerError::NoModel)
}
