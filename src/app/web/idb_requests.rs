//! IndexedDB's callback requests as futures: a request's result, opening the database (never
//! waiting forever behind another tab), a transaction's commit.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::game::run::store::StoreError;

pub(super) fn unavailable(e: JsValue) -> StoreError {
    StoreError::Unavailable(super::js_error_text(&e))
}

/// Resolves when `request` succeeds (with its result) or fails.
pub(super) async fn wait(request: &web_sys::IdbRequest) -> Result<JsValue, StoreError> {
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        let ok_target = request.clone();
        let ok = Closure::once_into_js(move || {
            let _ = resolve.call1(
                &JsValue::NULL,
                &ok_target.result().unwrap_or(JsValue::UNDEFINED),
            );
        });
        let err_target = request.clone();
        let err = Closure::once_into_js(move || {
            let message = err_target
                .error()
                .ok()
                .flatten()
                .map(|e| e.message())
                .unwrap_or_else(|| "IndexedDB request failed".into());
            let _ = reject.call1(&JsValue::NULL, &JsValue::from_str(&message));
        });
        request.set_onsuccess(Some(ok.unchecked_ref()));
        request.set_onerror(Some(err.unchecked_ref()));
    });
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map_err(unavailable)
}

/// Like [`wait`] for opening the database, and refused when an older tab holds the database
/// open and does not let go (`blocked`, or no answer within [`OPEN_LIMIT_MS`]): waiting would
/// hang the page until that tab is closed.
pub(super) async fn wait_open(request: &web_sys::IdbOpenDbRequest) -> Result<JsValue, StoreError> {
    let opened = wait(request);
    let blocked = async {
        let promise = js_sys::Promise::new(&mut |_, reject| {
            let on_blocked = Closure::once_into_js(move || {
                let _ = reject.call1(
                    &JsValue::NULL,
                    &JsValue::from_str(
                        "another tab with an older version of this site holds the storage \
                         open; close that tab and reload",
                    ),
                );
            });
            request.set_onblocked(Some(on_blocked.unchecked_ref()));
        });
        wasm_bindgen_futures::JsFuture::from(promise)
            .await
            .map_err(unavailable)
    };
    // An open queued behind another that is blocked hears no `blocked` of its own: a time
    // limit covers that case.
    let late = async {
        gloo_timers::future::TimeoutFuture::new(OPEN_LIMIT_MS).await;
        Err(StoreError::Unavailable(format!(
            "the storage did not open within {} s; another tab of this site may hold it",
            OPEN_LIMIT_MS / 1000
        )))
    };
    futures::pin_mut!(opened, blocked, late);
    let settled = futures::future::select(opened, blocked);
    let (result, gave_up) = match futures::future::select(settled, late).await {
        futures::future::Either::Left((futures::future::Either::Left((opened, _)), _)) => {
            (opened, false)
        }
        futures::future::Either::Left((futures::future::Either::Right((blocked, _)), _)) => {
            (blocked, true)
        }
        futures::future::Either::Right((timed_out, _)) => (timed_out, true),
    };
    if gave_up {
        // The request may still succeed once the other tab lets go: that connection, which no
        // one here holds, is closed at once so that it blocks nobody in turn.
        let target = request.clone();
        let close = Closure::once_into_js(move || {
            if let Ok(db) = target
                .result()
                .and_then(|r| r.dyn_into::<web_sys::IdbDatabase>())
            {
                db.close();
            }
        });
        request.set_onsuccess(Some(close.unchecked_ref()));
    }
    result
}

/// How long opening the database may take before the page goes on without it.
const OPEN_LIMIT_MS: u32 = 8_000;

/// Resolves when a transaction has committed.
pub(super) async fn committed(tx: &web_sys::IdbTransaction) -> Result<(), StoreError> {
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        let done = Closure::once_into_js(move || {
            let _ = resolve.call0(&JsValue::NULL);
        });
        let reject2 = reject.clone();
        let failed = Closure::once_into_js(move || {
            let _ = reject.call1(
                &JsValue::NULL,
                &JsValue::from_str("the transaction failed (storage full?)"),
            );
        });
        let aborted = Closure::once_into_js(move || {
            let _ = reject2.call1(
                &JsValue::NULL,
                &JsValue::from_str("the transaction was aborted (storage full?)"),
            );
        });
        tx.set_oncomplete(Some(done.unchecked_ref()));
        tx.set_onerror(Some(failed.unchecked_ref()));
        tx.set_onabort(Some(aborted.unchecked_ref()));
    });
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map(|_| ())
        .map_err(unavailable)
}
