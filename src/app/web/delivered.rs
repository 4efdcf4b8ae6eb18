//! Which final submissions the study's server has acknowledged, remembered in localStorage:
//! coming back to the page after the end (the back button after the redirect) then says the
//! answers are in, instead of sending them again to a server that has closed the run and
//! would refuse them.

/// The localStorage key that remembers a run's final submission was acknowledged.
fn delivered_key(key: &str) -> String {
    format!("clozelab-delivered\u{1f}{key}")
}

/// Remembers that the final submission under `key` was acknowledged.
pub fn mark_delivered(key: &str) {
    use gloo_storage::Storage;
    let _ = gloo_storage::LocalStorage::set(delivered_key(key), true);
}

/// Whether the final submission under `key` was acknowledged before (see [`mark_delivered`]).
pub fn was_delivered(key: &str) -> bool {
    use gloo_storage::Storage;
    gloo_storage::LocalStorage::get::<bool>(delivered_key(key)).unwrap_or(false)
}
