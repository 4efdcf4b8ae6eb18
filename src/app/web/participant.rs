//! The participant id this browser plays as, shared by every game.

/// A participant id kept in localStorage, so a reload continues the same participant.
pub fn local_participant_id() -> String {
    use gloo_storage::Storage;
    const KEY: &str = "clozelab-participant";
    if let Ok(id) = gloo_storage::LocalStorage::get::<String>(KEY) {
        return id;
    }
    let id = format!(
        "anon-{:08x}{:08x}",
        (js_sys::Math::random() * 4294967296.0) as u32,
        (js_sys::Math::random() * 4294967296.0) as u32
    );
    // Without localStorage the id lives as long as the page: stated by the storage warning.
    let _ = gloo_storage::LocalStorage::set(KEY, &id);
    id
}
