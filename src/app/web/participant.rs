//! Who plays in this browser when no link names them, and in which run: ids kept in
//! localStorage (and for the page's lifetime where it is unavailable), so a reload continues
//! the same participant and run. `?new_participant` in the address (a lab computer's next
//! person) starts a fresh participant, whose runs are then their own.

use std::cell::RefCell;
use std::collections::HashMap;

use gloo_storage::Storage;

use crate::game::design::run_scope::page_run_id;

const PARTICIPANT_KEY: &str = "clozelab-participant";
/// The address parameter that starts the next participant on a shared computer.
pub const NEW_PARTICIPANT_PARAM: &str = "new_participant";

thread_local! {
    /// The ids made in this page, for browsers that keep nothing in localStorage.
    static MADE: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
}

fn random_u32() -> u32 {
    (js_sys::Math::random() * 4294967296.0) as u32
}

/// The id kept under `key`, or a new one from `make`, kept there.
fn kept_or_made(key: &str, fresh: bool, make: impl FnOnce() -> String) -> String {
    if !fresh {
        if let Ok(id) = gloo_storage::LocalStorage::get::<String>(key) {
            return id;
        }
        if let Some(id) = MADE.with(|m| m.borrow().get(key).cloned()) {
            return id;
        }
    }
    let id = make();
    // Without localStorage the id lives as long as the page: stated by the storage warning.
    let _ = gloo_storage::LocalStorage::set(key, &id);
    MADE.with(|m| m.borrow_mut().insert(key.to_string(), id.clone()));
    id
}

/// Drops `?new_participant` from the address once it has been acted on, so that a reload
/// continues the new participant instead of making yet another.
fn forget_new_participant_param() -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let Ok(href) = window.location().href() else {
        return false;
    };
    let Ok(url) = web_sys::Url::new(&href) else {
        return false;
    };
    if !url.search_params().has(NEW_PARTICIPANT_PARAM) {
        return false;
    }
    url.search_params().delete(NEW_PARTICIPANT_PARAM);
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url.href()));
    }
    true
}

/// The participant id this browser plays as when no link names one (a new one after
/// `?new_participant`).
pub fn local_participant_id() -> String {
    let fresh = forget_new_participant_param();
    kept_or_made(PARTICIPANT_KEY, fresh, || {
        format!("anon-{:08x}{:08x}", random_u32(), random_u32())
    })
}

/// The run the page made for `participant` in `study` (where neither JATOS nor the study link
/// names one): the same on every visit, so a reload resumes it.
pub fn local_run_id(study: &str, participant: &str) -> String {
    let key = format!("clozelab-run\u{1f}{study}\u{1f}{participant}");
    kept_or_made(&key, false, || page_run_id(random_u32(), random_u32()))
}

/// This page's address with `?new_participant` added: the link that starts the next person
/// on a shared computer.
pub fn next_participant_href() -> Option<String> {
    let href = web_sys::window()?.location().href().ok()?;
    let url = web_sys::Url::new(&href).ok()?;
    url.search_params().set(NEW_PARTICIPANT_PARAM, "1");
    Some(url.href())
}

/// Whether `study` plays on this browser's own participant id (no id from the link or JATOS,
/// not a preview): then the end screen offers to start the next person.
pub fn on_shared_computer(study: &crate::game::design::study::StudyConfig) -> bool {
    !study.preview && !study.link_names_participant(&super::query_params())
}
