//! Sending a study's results until the server acknowledges them: each submission is kept in
//! IndexedDB first, POSTed with its idempotency key (for JATOS: PUT, replacing the last),
//! retried with backoff ([`RetryPolicy`]), and forgotten on a 2xx answer or a refusal for good
//! (a 4xx such as JATOS's 403 after the run ended or 413 over its size limit). What a closed
//! tab left unsent is sent again on the next visit ([`resend_pending`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use gloo_timers::future::TimeoutFuture;
use wasm_bindgen::JsValue;

use super::WebError;
use super::idb::{IdbStore, OUTBOX_STORE};
use super::idb_requests::{committed, unavailable};
use crate::game::outbox::{Pending, RetryPolicy, refused_for_good};
use crate::game::store::StoreError;

/// The outbox store: submissions the server has not acknowledged, as JSON of [`Pending`].
impl IdbStore {
    /// Keeps a submission until the server acknowledges it; resolves once it is on disk.
    pub async fn outbox_put(&self, pending: &Pending) -> Result<(), StoreError> {
        let json =
            serde_json::to_string(pending).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        self.put_text(OUTBOX_STORE, &pending.key, &json).await
    }

    /// Every submission still waiting for its acknowledgement.
    pub async fn outbox(&self) -> Result<Vec<Pending>, StoreError> {
        Ok(self
            .texts_with_prefix(OUTBOX_STORE, "")
            .await?
            .into_iter()
            .filter_map(|(_, json)| serde_json::from_str(&json).ok())
            .collect())
    }

    /// Forgets an acknowledged submission.
    pub async fn outbox_delete(&self, key: &str) -> Result<(), StoreError> {
        let tx = self
            .db
            .transaction_with_str_and_mode(OUTBOX_STORE, web_sys::IdbTransactionMode::Readwrite)
            .map_err(unavailable)?;
        let store = tx.object_store(OUTBOX_STORE).map_err(unavailable)?;
        store.delete(&JsValue::from_str(key)).map_err(unavailable)?;
        committed(&tx).await
    }
}

/// How long a participant waits on the completion screen before being offered the download and
/// a retry (the submission stays queued either way).
pub const WAIT_ON_COMPLETION_MS: f64 = 10_000.0;

/// Why a submission is not acknowledged yet, and whether this browser keeps it for later.
#[derive(Clone, Debug, PartialEq)]
pub struct Undelivered {
    /// The last try's failure.
    pub reason: String,
    /// `Err`: IndexedDB could not keep it (private mode, quota…), so only this page has it.
    pub kept: Result<(), String>,
    /// The server refused it for good (see [`refused_for_good`]): it is not sent again, and
    /// the responses stay in this browser's response store to download.
    pub refused: bool,
}

thread_local! {
    /// For replacing submissions (JATOS): how many each key has been given in this page, so that
    /// an older copy still waiting gives way to the newer one, which holds all of it.
    static GENERATIONS: RefCell<HashMap<String, u64>> = RefCell::new(HashMap::new());
    /// One replacing send at a time: two in flight could land out of order, the older last.
    static REPLACING: Rc<futures::lock::Mutex<()>> = Rc::new(futures::lock::Mutex::new(()));
}

/// A new generation of `key` (the newest submission under it).
fn next_generation(key: &str) -> u64 {
    GENERATIONS.with(|g| {
        let mut g = g.borrow_mut();
        let n = g.entry(key.to_string()).or_insert(0);
        *n += 1;
        *n
    })
}

fn superseded(pending: &Pending, generation: u64) -> bool {
    pending.replace
        && GENERATIONS.with(|g| {
            g.borrow()
                .get(&pending.key)
                .is_some_and(|&n| n != generation)
        })
}

async fn send_once(pending: &Pending, generation: u64) -> Result<bool, WebError> {
    if !pending.replace {
        return super::fetch::post_json(&pending.url, &pending.body, &pending.key)
            .await
            .map(|()| true);
    }
    let lock = REPLACING.with(Rc::clone);
    let _turn = lock.lock().await;
    if superseded(pending, generation) {
        return Ok(false);
    }
    super::fetch::put_text(&pending.url, &pending.body)
        .await
        .map(|()| true)
}

/// Keeps `pending` in IndexedDB, then sends it until acknowledged or `budget_ms` has passed;
/// `on_attempt` hears each try (0-based). A replacing submission (JATOS) that a newer one under
/// the same key supersedes stops and counts as delivered: the newer one carries it.
pub async fn deliver(
    pending: Pending,
    budget_ms: f64,
    on_attempt: impl Fn(u32),
) -> Result<(), Undelivered> {
    keep(pending).await.send(budget_ms, on_attempt).await
}

/// A response sent as it is saved: in the outbox when this returns, so that a reload right
/// after the answer does not drop it (the next visit sends it, [`resend_pending`]); sent in the
/// background for up to `budget_ms`. The game moves on only after this.
pub async fn keep_then_send_in_background(pending: Pending, budget_ms: f64) {
    let kept = keep(pending).await;
    leptos::task::spawn_local(async move {
        let _ = kept.send(budget_ms, |_| {}).await;
    });
}

/// A submission in the outbox (or, where IndexedDB could not keep it, why not), not sent yet.
struct Kept {
    pending: Pending,
    generation: u64,
    store: Result<IdbStore, StoreError>,
    kept: Result<(), String>,
}

/// Puts `pending` in the outbox, from which the next visit sends what this one did not.
async fn keep(pending: Pending) -> Kept {
    let generation = next_generation(&pending.key);
    let store = IdbStore::open().await;
    let kept = match &store {
        Ok(_) if superseded(&pending, generation) => Ok(()),
        Ok(store) => store.outbox_put(&pending).await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    Kept {
        pending,
        generation,
        store,
        kept,
    }
}

impl Kept {
    /// Sends until acknowledged or `budget_ms` has passed (see [`deliver`]).
    async fn send(self, budget_ms: f64, on_attempt: impl Fn(u32)) -> Result<(), Undelivered> {
        let Kept {
            mut pending,
            generation,
            store,
            mut kept,
        } = self;
        let policy = RetryPolicy::default();
        let started = js_sys::Date::now();
        loop {
            if superseded(&pending, generation) {
                return Ok(());
            }
            on_attempt(pending.attempts);
            let e = match send_once(&pending, generation).await {
                Ok(sent) => {
                    if let Ok(store) = &store
                        && sent
                        && !superseded(&pending, generation)
                    {
                        // Acknowledged: a leftover copy would only be re-sent and deduplicated.
                        let _ = store.outbox_delete(&pending.key).await;
                    }
                    return Ok(());
                }
                Err(e) => e,
            };
            if let WebError::Http { status, .. } = &e
                && refused_for_good(*status)
            {
                // Retrying would be refused the same way, on every visit: the outbox lets it go.
                if let Ok(store) = &store {
                    let _ = store.outbox_delete(&pending.key).await;
                }
                return Err(Undelivered {
                    reason: e.to_string(),
                    kept: Ok(()),
                    refused: true,
                });
            }
            pending.attempts += 1;
            if let Ok(store) = &store
                && !superseded(&pending, generation)
            {
                kept = store.outbox_put(&pending).await.map_err(|e| e.to_string());
            }
            let wait = policy.delay_ms(pending.attempts - 1, js_sys::Math::random());
            if js_sys::Date::now() - started + wait > budget_ms {
                return Err(Undelivered {
                    reason: e.to_string(),
                    kept,
                    refused: false,
                });
            }
            TimeoutFuture::new(wait as u32).await;
        }
    }
}

/// Sends whatever an earlier visit left unacknowledged (run once when the app starts).
pub async fn resend_pending() {
    let Ok(store) = IdbStore::open().await else {
        return;
    };
    for pending in store.outbox().await.unwrap_or_default() {
        let _ = deliver(pending, 60_000.0, |_| {}).await;
    }
}
