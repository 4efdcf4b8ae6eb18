//! The page's handle on the inference worker: requests become futures resolved by their final
//! reply, progress replies go to a callback, and a request can be cancelled. The worker is
//! spawned on first use, so a study participant who never needs GPT-2 never downloads it.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::channel::oneshot;
use gloo_worker::{Spawnable, WorkerBridge};

use crate::app::worker::InferenceWorker;
use crate::runtime::protocol::{CancelRequest, FromWorker, Reply, Request, ToWorker};

/// Where Trunk puts the worker's loader (a fixed name: workers are not content-hashed), from
/// the app's root, so that it resolves the same from every route (and inside JATOS).
const WORKER_LOADER: &str = "worker_loader.js";

type OnProgress = Box<dyn Fn(&Reply)>;

struct Waiting {
    on_progress: Option<OnProgress>,
    done: oneshot::Sender<Reply>,
}

/// One request in flight.
pub struct Call {
    pub id: u64,
    done: oneshot::Receiver<Reply>,
}

impl Call {
    /// The final reply (`Failed` if the worker went away).
    pub async fn reply(self) -> Reply {
        self.done
            .await
            .unwrap_or_else(|_| Reply::Failed("the inference worker stopped".into()))
    }
}

/// A request that did not get the reply it asked for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The worker answered `Failed` (its message).
    #[error("{0}")]
    Failed(String),
    #[error("cancelled")]
    Cancelled,
    /// A reply of another kind: a protocol bug, named so that it can be reported.
    #[error("unexpected reply from the inference worker: {0}")]
    Unexpected(String),
}

impl CallError {
    /// Sorts a final reply that is not the one wanted.
    pub fn from_reply(reply: Reply) -> Self {
        match reply {
            Reply::Failed(message) => CallError::Failed(message),
            Reply::Cancelled => CallError::Cancelled,
            other => CallError::Unexpected(format!("{other:?}")),
        }
    }
}

type OnSwitch = Rc<RefCell<Option<Box<dyn Fn(String)>>>>;

#[derive(Clone)]
pub struct InferenceClient {
    bridge: Rc<WorkerBridge<InferenceWorker>>,
    next_id: Rc<Cell<u64>>,
    waiting: Rc<RefCell<HashMap<u64, Waiting>>>,
    /// Hears the worker moving to the CPU after the GPU was lost (whichever request met it).
    on_switch_to_cpu: OnSwitch,
}

impl InferenceClient {
    /// Starts the worker.
    pub fn spawn() -> Self {
        let waiting: Rc<RefCell<HashMap<u64, Waiting>>> = Rc::default();
        let on_switch_to_cpu: OnSwitch = Rc::default();
        let route = waiting.clone();
        let switched = on_switch_to_cpu.clone();
        let bridge = InferenceWorker::spawner()
            .callback(move |message: FromWorker| {
                if let (Reply::SwitchedToCpu { reason }, Some(f)) =
                    (&message.reply, switched.borrow().as_ref())
                {
                    f(reason.clone());
                }
                if message.reply.is_final() {
                    if let Some(w) = route.borrow_mut().remove(&message.id) {
                        let _ = w.done.send(message.reply);
                    }
                } else if let Some(Waiting {
                    on_progress: Some(f),
                    ..
                }) = route.borrow().get(&message.id)
                {
                    f(&message.reply);
                }
            })
            .with_loader(true)
            .spawn(&format!(
                "{}{WORKER_LOADER}",
                crate::app::web::jatos_client::app_root()
            ));
        Self {
            bridge: Rc::new(bridge),
            next_id: Rc::new(Cell::new(1)),
            waiting,
            on_switch_to_cpu,
        }
    }

    /// `f` hears the reason when the worker falls back to the CPU after losing the GPU.
    pub fn on_switch_to_cpu(&self, f: impl Fn(String) + 'static) {
        *self.on_switch_to_cpu.borrow_mut() = Some(Box::new(f));
    }

    /// Sends `request`; `on_progress` receives its non-final replies.
    pub fn start(&self, request: Request, on_progress: Option<OnProgress>) -> Call {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let (done, receiver) = oneshot::channel();
        self.waiting
            .borrow_mut()
            .insert(id, Waiting { on_progress, done });
        self.bridge.send(ToWorker { id, request });
        Call { id, done: receiver }
    }

    /// Sends `request` and waits for its final reply.
    pub async fn call(&self, request: Request) -> Reply {
        self.start(request, None).reply().await
    }

    /// Asks the worker to stop request `id` at its next tree level.
    pub fn cancel(&self, id: u64) {
        if self.waiting.borrow().contains_key(&id) {
            self.bridge.send(ToWorker {
                id: 0,
                request: Request::Cancel(CancelRequest { id }),
            });
        }
    }
}
