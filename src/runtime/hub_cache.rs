//! A batch command's `--model`: a folder or GGUF file on disk, or a Hugging Face id with a
//! revision (`EleutherAI/pythia-160m@step1000`) found in the Hugging Face cache that
//! `transformers` and `huggingface-cli download` fill (`$HF_HUB_CACHE`, else `$HF_HOME/hub`,
//! else `~/.cache/huggingface/hub`: `models--ORG--NAME/refs/REV` names the commit whose files
//! are in `snapshots/COMMIT/`). Nothing is downloaded: cluster nodes often have no internet,
//! and a cached revision is the one every part of a job reads.

use std::path::{Path, PathBuf};

use super::model_source::{hub_id, is_id_part};

/// A model to load and how the table names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedModel {
    pub path: PathBuf,
    /// The folder's or file's name, or the hub id.
    pub name: String,
    /// The hub revision asked for (a branch, tag or commit); empty for a local model.
    pub revision: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HubCacheError {
    #[error("{spec:?} is neither a folder or file here nor a Hugging Face id (ORG/NAME@REVISION)")]
    NotFound { spec: String },
    #[error(
        "{id} at revision {revision} is not in the Hugging Face cache ({cache}): download it once where there is internet, with `huggingface-cli download {id} --revision {revision}`, and point HF_HOME or HF_HUB_CACHE at that cache"
    )]
    NotCached {
        id: String,
        revision: String,
        cache: String,
    },
    #[error("a model's name {0:?} holds a control character")]
    BadName(String),
}

/// The cache folder from the environment (`var` looks a variable up).
pub fn hub_cache_dir(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(dir) = var("HF_HUB_CACHE").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(home) = var("HF_HOME").filter(|d| !d.is_empty()) {
        return Some(Path::new(&home).join("hub"));
    }
    var("HOME").map(|home| Path::new(&home).join(".cache/huggingface/hub"))
}

/// `spec` as a model on disk, looked up in `cache` when it is no path here.
pub fn resolve_in(spec: &str, cache: Option<&Path>) -> Result<ResolvedModel, HubCacheError> {
    let local = Path::new(spec);
    if local.exists() {
        let name = local
            .file_name()
            .map_or_else(|| spec.to_string(), |n| n.to_string_lossy().into_owned());
        if name.chars().any(char::is_control) {
            return Err(HubCacheError::BadName(name));
        }
        return Ok(ResolvedModel {
            path: local.to_path_buf(),
            name,
            revision: String::new(),
        });
    }
    let not_found = || HubCacheError::NotFound {
        spec: spec.to_string(),
    };
    let (org, name, revision) = hub_id(spec).ok_or_else(not_found)?;
    let id = format!("{org}/{name}");
    let not_cached = || HubCacheError::NotCached {
        id: id.to_string(),
        revision: revision.to_string(),
        cache: cache.map_or("none".into(), |c| c.display().to_string()),
    };
    let repo = cache
        .ok_or_else(not_cached)?
        .join(format!("models--{org}--{name}"));
    let commit = match std::fs::read_to_string(repo.join("refs").join(revision)) {
        Ok(commit) => commit.trim().to_string(),
        // A commit hash is its own snapshot's name.
        Err(_) if revision.len() == 40 && revision.chars().all(|c| c.is_ascii_hexdigit()) => {
            revision.to_string()
        }
        Err(_) => return Err(not_cached()),
    };
    let snapshot = repo.join("snapshots").join(&commit);
    if !is_id_part(&commit) || !snapshot.is_dir() {
        return Err(not_cached());
    }
    Ok(ResolvedModel {
        path: snapshot,
        name: id,
        revision: revision.to_string(),
    })
}

/// [`resolve_in`] the cache the environment names.
pub fn resolve_model(spec: &str) -> Result<ResolvedModel, HubCacheError> {
    resolve_in(spec, hub_cache_dir(|n| std::env::var(n).ok()).as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_ids_resolve_through_the_caches_refs_and_nothing_else() {
        let cache = std::env::temp_dir().join(format!("clozelab-hub-{}", std::process::id()));
        let repo = cache.join("models--EleutherAI--pythia-160m");
        let commit = "0123456789abcdef0123456789abcdef01234567";
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::create_dir_all(repo.join("snapshots").join(commit)).unwrap();
        std::fs::write(repo.join("refs/step1000"), format!("{commit}\n")).unwrap();
        let found = resolve_in("EleutherAI/pythia-160m@step1000", Some(&cache)).unwrap();
        assert_eq!(found.path, repo.join("snapshots").join(commit));
        assert_eq!(
            (found.name.as_str(), found.revision.as_str()),
            ("EleutherAI/pythia-160m", "step1000")
        );
        let by_commit = resolve_in(&format!("EleutherAI/pythia-160m@{commit}"), Some(&cache));
        assert_eq!(by_commit.unwrap().path, found.path);
        for (spec, says) in [
            (
                "EleutherAI/pythia-160m@step2000",
                "huggingface-cli download",
            ),
            ("EleutherAI/pythia-160m", "revision main"),
            ("EleutherAI/../x@main", "neither"),
            ("no-such-folder", "neither"),
        ] {
            let err = resolve_in(spec, Some(&cache)).unwrap_err().to_string();
            assert!(err.contains(says), "{spec}: {err}");
        }
        assert!(matches!(
            resolve_in("a/b@main", None),
            Err(HubCacheError::NotCached { .. })
        ));
        let env = |n: &str| (n == "HF_HOME").then(|| "/h".to_string());
        assert_eq!(hub_cache_dir(env), Some(PathBuf::from("/h/hub")));
        std::fs::remove_dir_all(&cache).unwrap();
    }
}
