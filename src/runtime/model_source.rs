//! Where a model comes from, as a person types it: a folder URL (absolute, or relative to the
//! app, ending in `/`), or a Hugging Face model id with an optional revision,
//! `owner/name@revision` (a branch, tag or commit: Pythia's training checkpoints are the
//! revisions `step1000`, …), read from the hub's `resolve` URLs, which serve CORS.

/// The Hugging Face hub, where a model id is read from unless another endpoint is given (a
/// mirror, as `HF_ENDPOINT` names one for Hugging Face's own tools).
pub const HUB_ENDPOINT: &str = "https://huggingface.co";

/// Why a typed model source cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelSourceError {
    #[error(
        "give a model: a folder URL ending in /, or a Hugging Face model as owner/name@revision"
    )]
    Empty,
    #[error(
        "{0:?} is neither a folder URL (ending in /) nor a Hugging Face model id \
         (owner/name, or owner/name@revision; letters, digits, '-', '_' and '.')"
    )]
    Unreadable(String),
}

/// A hub id's part: letters, digits, `-`, `_`, `.`, not starting with `.` (no `..`).
pub fn is_id_part(part: &str) -> bool {
    !part.is_empty()
        && !part.starts_with('.')
        && part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A hub model id as typed, `owner/name[@revision]` (revision `main` when not given), split
/// into its parts; `None` unless every part is [`is_id_part`]. A revision may be a branch with
/// `/` in it (`refs/pr/1`), each of its parts checked.
///
/// ```
/// use clozelab::runtime::model_source::hub_id;
/// assert_eq!(hub_id("EleutherAI/pythia-70m@step1000"), Some(("EleutherAI", "pythia-70m", "step1000")));
/// assert_eq!(hub_id("a/b"), Some(("a", "b", "main")));
/// assert!(hub_id("a/../b").is_none() && hub_id("gpt2").is_none() && hub_id("a/b@..").is_none());
/// ```
pub fn hub_id(input: &str) -> Option<(&str, &str, &str)> {
    let (id, revision) = input.split_once('@').unwrap_or((input, "main"));
    let (owner, name) = id.split_once('/')?;
    (is_id_part(owner) && is_id_part(name) && revision.split('/').all(is_id_part))
        .then_some((owner, name, revision))
}

/// The folder URL (ending in `/`) of `input`, a model id resolved on `hub`.
///
/// ```
/// use clozelab::runtime::model_source::{HUB_ENDPOINT, folder_url};
/// assert_eq!(
///     folder_url("EleutherAI/pythia-70m@step1000", HUB_ENDPOINT).unwrap(),
///     "https://huggingface.co/EleutherAI/pythia-70m/resolve/step1000/"
/// );
/// assert_eq!(
///     folder_url(" HuggingFaceTB/SmolLM2-135M ", HUB_ENDPOINT).unwrap(),
///     "https://huggingface.co/HuggingFaceTB/SmolLM2-135M/resolve/main/"
/// );
/// assert_eq!(folder_url("models/test/", HUB_ENDPOINT).unwrap(), "models/test/");
/// assert_eq!(folder_url("https://example.org/gpt2", HUB_ENDPOINT).unwrap(), "https://example.org/gpt2/");
/// assert!(folder_url("gpt2", HUB_ENDPOINT).is_err());
/// ```
pub fn folder_url(input: &str, hub: &str) -> Result<String, ModelSourceError> {
    let input = input.trim();
    if input.is_empty() {
        return Err(ModelSourceError::Empty);
    }
    let is_url = ["https://", "http://", "/", "./", "../"]
        .iter()
        .any(|start| input.starts_with(start));
    if is_url || input.ends_with('/') {
        return Ok(match input.ends_with('/') {
            true => input.to_string(),
            false => format!("{input}/"),
        });
    }
    let unreadable = || ModelSourceError::Unreadable(input.to_string());
    // A resolve URL takes one revision segment: a branch with `/` in it is not read from here.
    let (owner, name, revision) = hub_id(input)
        .filter(|(_, _, revision)| !revision.contains('/'))
        .ok_or_else(unreadable)?;
    let hub = hub.trim_end_matches('/');
    Ok(format!("{hub}/{owner}/{name}/resolve/{revision}/"))
}

/// A model's short name for labels, from where it came from: a hub model's `name@revision`
/// (`@main` left out), a folder's last part, or the text itself (file names).
///
/// ```
/// use clozelab::runtime::model_source::short_name;
/// assert_eq!(short_name("https://huggingface.co/EleutherAI/pythia-70m/resolve/step1000/"), "pythia-70m@step1000");
/// assert_eq!(short_name("https://huggingface.co/openai-community/gpt2/resolve/main/"), "gpt2");
/// assert_eq!(short_name("models/test-llama/"), "test-llama");
/// assert_eq!(short_name("config.json, model.safetensors"), "config.json, model.safetensors");
/// ```
pub fn short_name(source: &str) -> String {
    let parts: Vec<&str> = source.split('/').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [.., name, "resolve", "main"] => name.to_string(),
        [.., name, "resolve", revision] => format!("{name}@{revision}"),
        [.., last] if source.ends_with('/') => last.to_string(),
        _ => source.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_or_odd_input_is_refused_by_name_not_sent_anywhere() {
        for input in [
            "owner/name/extra",
            "owner/..@main",
            "owner/name@../../x",
            "owner/na me",
            "owner/name@",
            "/",
            "owner/<script>",
            "ówner/name",
        ] {
            match folder_url(input, HUB_ENDPOINT) {
                Err(ModelSourceError::Unreadable(shown)) => assert_eq!(shown, input),
                Ok(url) if input == "/" => assert_eq!(url, "/"),
                other => panic!("{input:?} gave {other:?}"),
            }
        }
        assert_eq!(folder_url("  ", HUB_ENDPOINT), Err(ModelSourceError::Empty));
        // Another endpoint (a mirror), with or without its trailing slash.
        assert_eq!(
            folder_url("a/b@v1", "http://localhost:8000/hub/").unwrap(),
            "http://localhost:8000/hub/a/b/resolve/v1/"
        );
    }
}
