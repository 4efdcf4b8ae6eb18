//! The Website package `clozelab serve` hosts: a folder, or the package's ZIP unpacked into a
//! folder beside the database (entries that would land outside it refused), with its study
//! config read and its page's Content-Security-Policy found.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::game::design::study::StudyConfig;

#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("{0}: not a clozelab Website package (no index.html and study.json at its root)")]
    NotASite(PathBuf),
    #[error("{path}: the ZIP entry {entry:?} would be written outside the site's folder")]
    UnsafeEntry { path: PathBuf, entry: String },
    #[error("{path}: {message}")]
    Zip { path: PathBuf, message: String },
    #[error("{path}: study.json: {message}")]
    Study { path: PathBuf, message: String },
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> SiteError + '_ {
    move |e| SiteError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// A site ready to serve.
#[derive(Clone, Debug)]
pub struct Site {
    /// The folder its files are served from.
    pub root: PathBuf,
    pub study: StudyConfig,
    /// The page's own policy (its `<meta http-equiv="Content-Security-Policy">`), sent as a
    /// header too.
    pub policy: Option<String>,
}

impl Site {
    /// The path answers are POSTed to: the study's `submit_url`, or its path where it names
    /// another origin (this server then is that origin).
    pub fn submit_path(&self) -> Option<String> {
        let url = self.study.submit_url.as_deref()?;
        match url.split_once("://") {
            Some((_, rest)) => Some(rest.find('/').map_or("/".into(), |i| rest[i..].to_string())),
            None => Some(url.to_string()),
        }
    }
}

/// The largest package unpacked (a GPT-2 small study is about 600 MB).
const MAX_UNPACKED: u64 = 8 << 30;

/// Opens `path`: a folder is served as it is; a ZIP is unpacked into `unpack_into` (emptied
/// first).
pub fn open_site(path: &Path, unpack_into: &Path) -> Result<Site, SiteError> {
    let root = if path.is_dir() {
        path.to_path_buf()
    } else {
        unpack(path, unpack_into)?;
        unpack_into.to_path_buf()
    };
    let (page, config) = (root.join("index.html"), root.join("study.json"));
    if !page.is_file() || !config.is_file() {
        return Err(SiteError::NotASite(path.to_path_buf()));
    }
    let study_json = std::fs::read_to_string(&config).map_err(io(&config))?;
    let study = StudyConfig::from_json(&study_json).map_err(|e| SiteError::Study {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let html = std::fs::read_to_string(&page).map_err(io(&page))?;
    Ok(Site {
        root,
        study,
        policy: page_policy(&html),
    })
}

/// The content of the page's Content-Security-Policy `<meta>` tag.
///
/// ```
/// use clozelab::server::site::page_policy;
/// let html = r#"<meta http-equiv="Content-Security-Policy" content="default-src 'self'" />"#;
/// assert_eq!(page_policy(html).as_deref(), Some("default-src 'self'"));
/// assert_eq!(page_policy("<html></html>"), None);
/// ```
pub fn page_policy(html: &str) -> Option<String> {
    let at = html.find("http-equiv=\"Content-Security-Policy\"")?;
    let tag_end = at + html[at..].find('>')?;
    let tag = &html[at..tag_end];
    let start = tag.find("content=\"")? + "content=\"".len();
    let len = tag[start..].find('"')?;
    Some(tag[start..start + len].to_string())
}

fn unpack(zip_path: &Path, into: &Path) -> Result<(), SiteError> {
    let zip_error = |e: zip::result::ZipError| SiteError::Zip {
        path: zip_path.to_path_buf(),
        message: e.to_string(),
    };
    let file = std::fs::File::open(zip_path).map_err(io(zip_path))?;
    let mut archive = zip::ZipArchive::new(file).map_err(zip_error)?;
    if into.exists() {
        std::fs::remove_dir_all(into).map_err(io(into))?;
    }
    std::fs::create_dir_all(into).map_err(io(into))?;
    let mut total = 0u64;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(zip_error)?;
        let Some(relative) = entry.enclosed_name() else {
            return Err(SiteError::UnsafeEntry {
                path: zip_path.to_path_buf(),
                entry: entry.name().to_string(),
            });
        };
        let target = into.join(relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&target).map_err(io(&target))?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let mut out = std::fs::File::create(&target).map_err(io(&target))?;
        let copied = std::io::copy(&mut (&mut entry).take(MAX_UNPACKED - total + 1), &mut out)
            .map_err(io(&target))?;
        total += copied;
        if total > MAX_UNPACKED {
            return Err(SiteError::Zip {
                path: zip_path.to_path_buf(),
                message: format!("unpacks to more than {MAX_UNPACKED} bytes"),
            });
        }
    }
    Ok(())
}
