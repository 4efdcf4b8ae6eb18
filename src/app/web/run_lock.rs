//! One tab per run: the page holds a Web Lock named after its run for as long as it lives, so
//! a second tab of the same run (which would write the same keys, the last writer winning)
//! waits, says the study is open elsewhere, and writes nothing until the first tab is gone.
//! Browsers without Web Locks (before Chrome 69, Firefox 96, Safari 15.4) ask on a
//! BroadcastChannel instead: the tab that holds the run answers, and one that hears no answer
//! takes it. (Two tabs asking in the same instant can both take it there; Web Locks cannot.)

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::game::design::run_scope::RunScope;

/// How long a new page waits for the lock before saying the run is open elsewhere: a reload's
/// old page lets go as it unloads, which can come a moment after the new page asks.
pub const OPEN_ELSEWHERE_AFTER_MS: u32 = 2_000;

/// `navigator.locks`, where the browser has it.
fn lock_manager() -> Option<JsValue> {
    let navigator = web_sys::window()?.navigator();
    let locks = Reflect::get(&navigator, &JsValue::from_str("locks")).ok()?;
    (!locks.is_undefined() && !locks.is_null()).then_some(locks)
}

/// How long a tab waits for a holder to answer on the BroadcastChannel before taking the run.
const BROADCAST_ANSWER_MS: u32 = 300;

/// Asks for the run's lock and resolves once this page holds it (at once where the browser has
/// neither Web Locks nor BroadcastChannel). The lock is held until the page is closed or
/// navigated away.
fn hold(scope: &RunScope) -> std::pin::Pin<Box<dyn Future<Output = ()>>> {
    let name = format!("clozelab-run\u{1f}{}", scope.storage_prefix());
    let Some(locks) = lock_manager() else {
        return Box::pin(hold_by_broadcast(name));
    };
    let request = Reflect::get(&locks, &JsValue::from_str("request"))
        .ok()
        .and_then(|r| r.dyn_into::<Function>().ok());
    let granted = request.map(|request| {
        Promise::new(&mut |resolve, _| {
            // Granted: tell the page, and hand back a promise that never settles, which keeps
            // the lock until the page goes.
            let on_granted = Closure::once_into_js(move |_lock: JsValue| -> JsValue {
                let _ = resolve.call0(&JsValue::NULL);
                Promise::new(&mut |_, _| {}).into()
            });
            let _ = request.call2(&locks, &JsValue::from_str(&name), &on_granted);
        })
    });
    Box::pin(async move {
        if let Some(promise) = granted {
            let _ = JsFuture::from(promise).await;
        }
    })
}

/// The fallback of [`hold`] where the browser has no Web Locks: asks on the channel
/// `clozelab-runs` whether another tab holds `name`, again each second while one answers;
/// once none does, holds it and answers the tabs that ask after (for the page's lifetime).
async fn hold_by_broadcast(name: String) {
    let global = js_sys::global();
    let Ok(constructor) = Reflect::get(&global, &JsValue::from_str("BroadcastChannel"))
        .and_then(|c| c.dyn_into::<Function>())
    else {
        return;
    };
    let args = js_sys::Array::of1(&JsValue::from_str("clozelab-runs"));
    let Ok(channel) = Reflect::construct(&constructor, &args) else {
        return;
    };
    let Ok(post) = Reflect::get(&channel, &JsValue::from_str("postMessage"))
        .and_then(|p| p.dyn_into::<Function>())
    else {
        return;
    };
    let (ask, answer) = (format!("ask\u{1f}{name}"), format!("held\u{1f}{name}"));
    let held = Rc::new(Cell::new(false));
    let answered = Rc::new(Cell::new(false));
    let on_message = {
        let (held, answered, channel, post) = (
            held.clone(),
            answered.clone(),
            channel.clone(),
            post.clone(),
        );
        let (ask, answer) = (ask.clone(), answer.clone());
        Closure::<dyn Fn(JsValue)>::new(move |event: JsValue| {
            let data = Reflect::get(&event, &JsValue::from_str("data"))
                .ok()
                .and_then(|d| d.as_string())
                .unwrap_or_default();
            if data == ask && held.get() {
                let _ = post.call1(&channel, &JsValue::from_str(&answer));
            } else if data == answer {
                answered.set(true);
            }
        })
    };
    let _ = Reflect::set(
        &channel,
        &JsValue::from_str("onmessage"),
        on_message.as_ref(),
    );
    // The channel and its listener live as long as the page: they answer for the run.
    on_message.forget();
    loop {
        answered.set(false);
        let _ = post.call1(&channel, &JsValue::from_str(&ask));
        gloo_timers::future::TimeoutFuture::new(BROADCAST_ANSWER_MS).await;
        if !answered.get() {
            held.set(true);
            return;
        }
        gloo_timers::future::TimeoutFuture::new(1_000).await;
    }
}

/// Holds the run's lock before `start` runs; when another tab holds it,
/// `open_elsewhere` runs first (the page says so) and `start` only once that tab is gone.
pub async fn one_tab_per_run(scope: &RunScope, open_elsewhere: impl FnOnce()) {
    let mut held = hold(scope);
    let wait = gloo_timers::future::TimeoutFuture::new(OPEN_ELSEWHERE_AFTER_MS);
    if let futures::future::Either::Left(((), held)) =
        futures::future::select(wait, held.as_mut()).await
    {
        open_elsewhere();
        held.await;
    }
}
