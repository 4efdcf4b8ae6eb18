//! Sending a study's results until the server acknowledges them: each submission is kept in
//! IndexedDB first, POSTed with its idempotency key (for JATOS: appended to the result data),
//! retried with backoff ([`RetryPolicy`]), and forgotten on a 2xx answer or a refusal for good
//! (a 4xx such as JATOS's 403 after the run ended or 413 over its size limit). What a closed
//! tab left unsent is sent again on the next visit ([`super::outbox_flush`]).

use std::cell::RefCell;
use std::collections::HashSet;

use gloo_timers::future::TimeoutFuture;
use wasm_bindgen::JsValue;

use super::WebError;
use super::idb::{IdbStore, OUTBOX_STORE};
use super::idb_requests::{committed, unavailable};
use crate::data::served_file::FileKind;
use crate::game::run::outbox::{Pending, RetryPolicy, SendMethod, refused_for_good};
use crate::game::run::store::StoreError;

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
    /// Keys this page is sending now: a flush leaves them to the send under way.
    static IN_FLIGHT: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

/// A key marked in flight for as long as this lives.
struct InFlight(String);

impl InFlight {
    /// `None` when the key is being sent already.
    fn claim(key: &str) -> Option<Self> {
        IN_FLIGHT
            .with(|keys| keys.borrow_mut().insert(key.to_string()))
            .then(|| Self(key.to_string()))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.with(|keys| keys.borrow_mut().remove(&self.0));
    }
}

async fn send_once(pending: &Pending) -> Result<(), WebError> {
    match pending.method {
        SendMethod::PostJson => {
            super::fetch::post_json(&pending.url, &pending.body, &pending.key).await
        }
        SendMethod::AppendText => super::fetch::post_text(&pending.url, &pending.body).await,
        SendMethod::Get => super::fetch::fetch_text_uncached(&pending.url, FileKind::Html)
            .await
            .map(|_| ()),
    }
}

/// Keeps `pending` in IndexedDB, then sends it until acknowledged or `budget_ms` has passed;
/// `on_attempt` hears each try (0-based).
pub async fn deliver(
    pending: Pending,
    budget_ms: f64,
    on_attempt: impl Fn(u32),
) -> Result<(), Undelivered> {
    keep(pending).await.send(budget_ms, on_attempt).await
}

/// A response sent as it is saved: in the outbox when this returns, so that a reload right
/// after the answer does not drop it (the next visit sends it, [`super::outbox_flush`]); sent in the
/// background for up to `budget_ms`. The game moves on only after this; `on_refused` hears a
/// refusal for good (the run ended on the server, the answer too large), which sending again
/// cannot mend.
pub async fn keep_then_send_in_background(
    pending: Pending,
    budget_ms: f64,
    on_refused: impl FnOnce(String) + 'static,
) {
    let kept = keep(pending).await;
    leptos::task::spawn_local(async move {
        if let Err(e) = kept.send(budget_ms, |_| {}).await
            && e.refused
        {
            on_refused(e.reason);
        }
    });
}

/// A submission in the outbox (or, where IndexedDB could not keep it, why not), not sent yet.
struct Kept {
    pending: Pending,
    store: Result<IdbStore, StoreError>,
    kept: Result<(), String>,
}

/// Puts `pending` in the outbox, from which the next visit sends what this one did not.
async fn keep(pending: Pending) -> Kept {
    let store = IdbStore::open().await;
    let kept = match &store {
        Ok(store) => store.outbox_put(&pending).await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    Kept {
        pending,
        store,
        kept,
    }
}

impl Kept {
    /// Sends until acknowledged or `budget_ms` has passed (see [`deliver`]).
    async fn send(self, budget_ms: f64, on_attempt: impl Fn(u32)) -> Result<(), Undelivered> {
        let Kept {
            mut pending,
            store,
            mut kept,
        } = self;
        // A flush that finds this key in flight leaves it alone; a second send of the same key
        // here (the participant's retry) goes ahead regardless.
        let _in_flight = InFlight::claim(&pending.key);
        let policy = RetryPolicy::default();
        let started = js_sys::Date::now();
        loop {
            on_attempt(pending.attempts);
            let e = match send_once(&pending).await {
                Ok(()) => {
                    if let Ok(store) = &store {
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
            if let Ok(store) = &store {
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

/// Whether this page is sending `key` now (a flush leaves it to that send).
pub(super) fn in_flight(key: &str) -> bool {
    IN_FLIGHT.with(|keys| keys.borrow().contains(key))
}
