//! Which build of the app a package carries: the build writes [`BUILD_RECORD`] beside
//! `index.html` (its profile, the commit, each wasm file's size), the Study page shows it beside
//! the package buttons, packages carry it, and `clozelab jatos-package`/`site-package` refuse a
//! development build unless told otherwise. A development build is several times larger and
//! runs GPT-2 several times slower on participants' CPUs, and nothing else would say so.

use std::collections::BTreeMap;

/// The file the build writes beside `index.html`.
pub const BUILD_RECORD: &str = "build.json";

/// How a researcher gets the optimised build, said wherever a development build is found.
pub const HOW_TO_OPTIMISE: &str = "start the app with `bash scripts/app.sh --release` (it builds \
     the optimised app first: about 45 minutes on a 2-core machine the first time) and package from \
     that page; or run \
     `bash scripts/release.sh` and give its dist-release/ folder to `--dist`";

/// What the build recorded of itself.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BuildRecord {
    /// Cargo's profile: `release` (optimised, with wasm-opt) or `debug` (development).
    pub profile: String,
    /// The commit built, with `-dirty` when the checkout had changes; `unknown` outside git.
    pub commit: String,
    /// Each wasm file's name and size in bytes.
    pub wasm: BTreeMap<String, u64>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BuildRecordError {
    #[error(
        "the built app has no {BUILD_RECORD}, so which build it is cannot be told (it was built \
         before clozelab recorded its builds): build it again"
    )]
    Missing,
    #[error("{BUILD_RECORD} is not a build record: {0}")]
    Malformed(String),
    #[error(
        "this is {0}: participants would download a larger app and run GPT-2 several times \
         slower. For the optimised build, {HOW_TO_OPTIMISE}"
    )]
    Development(String),
}

impl BuildRecord {
    /// Reads a build record; `Err` names what is wrong with it.
    ///
    /// ```
    /// use clozelab::game::packages::build_record::BuildRecord;
    /// let record = BuildRecord::parse(
    ///     r#"{"profile": "release", "commit": "1a2b3c4", "wasm": {"clozelab-9f_bg.wasm": 8600000, "worker-3e_bg.wasm": 22300000}}"#,
    /// ).unwrap();
    /// assert!(record.is_optimised());
    /// assert_eq!(record.describe(), "the optimised build (commit 1a2b3c4): app 8.6 MB, worker 22.3 MB");
    /// assert!(BuildRecord::parse(r#"{"profile": "fast"}"#).is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, BuildRecordError> {
        let record: Self =
            serde_json::from_str(text).map_err(|e| BuildRecordError::Malformed(e.to_string()))?;
        if !matches!(record.profile.as_str(), "release" | "debug") {
            return Err(BuildRecordError::Malformed(format!(
                "profile {:?} is neither release nor debug",
                record.profile
            )));
        }
        Ok(record)
    }

    pub fn is_optimised(&self) -> bool {
        self.profile == "release"
    }

    /// The app's and the worker's wasm sizes, in bytes, where the record has them.
    pub fn app_and_worker_bytes(&self) -> (Option<u64>, Option<u64>) {
        let find = |prefix: &str| {
            self.wasm
                .iter()
                .find(|(name, _)| name.starts_with(prefix))
                .map(|(_, &bytes)| bytes)
        };
        (find("clozelab"), find("worker"))
    }

    /// One phrase: which build, its commit and its two wasm files' sizes.
    pub fn describe(&self) -> String {
        let kind = if self.is_optimised() {
            "the optimised build"
        } else {
            "a development build"
        };
        let mb = |bytes: Option<u64>| {
            bytes.map_or("size unknown".to_string(), |b| {
                format!("{:.1} MB", b as f64 / 1e6)
            })
        };
        let (app, worker) = self.app_and_worker_bytes();
        format!(
            "{kind} (commit {}): app {}, worker {}",
            self.commit,
            mb(app),
            mb(worker)
        )
    }
}

/// Whether a built app may go to participants: its record (the text of [`BUILD_RECORD`], `None`
/// when the folder has none) must say it is the optimised build.
///
/// ```
/// use clozelab::game::packages::build_record::{BuildRecordError, optimised_build};
/// let debug = r#"{"profile": "debug", "commit": "1a2b3c4", "wasm": {}}"#;
/// assert!(matches!(optimised_build(Some(debug)), Err(BuildRecordError::Development(_))));
/// assert_eq!(optimised_build(None), Err(BuildRecordError::Missing));
/// ```
pub fn optimised_build(record: Option<&str>) -> Result<BuildRecord, BuildRecordError> {
    let record = BuildRecord::parse(record.ok_or(BuildRecordError::Missing)?)?;
    if record.is_optimised() {
        Ok(record)
    } else {
        Err(BuildRecordError::Development(record.describe()))
    }
}
