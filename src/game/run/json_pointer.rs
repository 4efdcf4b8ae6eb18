//! JSON Pointer tokens (RFC 6901) for the JSON Patch writes runs make to JATOS's batch session
//! (the lists' ledger and adaptive norming's counts), whose member names are participant ids
//! and context keys that may hold `/` or `~`.

/// `name` as one reference token of a JSON Pointer (RFC 6901: `~` → `~0`, `/` → `~1`).
///
/// ```
/// use clozelab::game::run::json_pointer::json_pointer_token;
/// assert_eq!(json_pointer_token("a/b~c"), "a~1b~0c");
/// ```
pub fn json_pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
