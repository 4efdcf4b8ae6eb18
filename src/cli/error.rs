//! The command line's one error type: what went wrong, in words a researcher can act on.

use std::path::PathBuf;

use crate::analysis::metrics::MetricsError;
use crate::analysis::perplexity::PerplexityError;
use crate::analysis::table1::Table1Error;
use crate::data::DataError;
use crate::data::provo::ProvoError;
use crate::estimators::decoding::SamplingError;
use crate::estimators::sampler::SamplerError;
use crate::estimators::wordprob::WordProbError;
use crate::model::ModelError;
use crate::model::loader::LoadError;
use crate::model::testmodel::SafetensorsWriteError;
use crate::runtime::backend::BackendError;
use crate::runtime::distributions::InferenceError;
use crate::runtime::engine::EngineError;
use crate::runtime::modeldir::ModelDirError;
use crate::text::tokenizer::TokenizerError;

/// Every way a `clozelab` command can fail; printed as `clozelab: {error}` with exit status 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Unknown command or option, missing or unparsable value.
    #[error("{0}")]
    Usage(String),
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The Hugging Face baseline script of `bench` could not run or gave no usable answer.
    #[error("transformers baseline: {0}")]
    Baseline(String),
    /// A benchmark that cannot measure here (no GPU backend, no kernel count).
    #[error("{0}")]
    Bench(String),
    #[error(transparent)]
    ModelDir(#[from] ModelDirError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Precision(#[from] crate::model::PrecisionError),
    #[error(transparent)]
    WriteWeights(#[from] SafetensorsWriteError),
    /// A file the command needs from the setup is not there.
    #[error("{0}")]
    Missing(String),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Inference(#[from] InferenceError),
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error(transparent)]
    GgufExport(#[from] crate::runtime::gguf_export::GgufExportError),
    #[error(transparent)]
    Sampler(#[from] SamplerError),
    #[error(transparent)]
    Speed(#[from] crate::runtime::speed::SpeedError),
    #[error(transparent)]
    Sampling(#[from] SamplingError),
    #[error(transparent)]
    WordProb(#[from] WordProbError),
    #[error(transparent)]
    Surprisal(#[from] crate::estimators::surprisal::SurprisalError),
    #[error(transparent)]
    Provo(#[from] ProvoError),
    #[error(transparent)]
    Data(#[from] DataError),
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    #[error(transparent)]
    Table1(#[from] Table1Error),
    #[error(transparent)]
    Perplexity(#[from] PerplexityError),
    #[error(transparent)]
    Dataset(#[from] crate::analysis::dataset::DatasetError),
    #[error(transparent)]
    AnalysisFiles(#[from] crate::game::readback::results_dataset::AnalysisFilesError),
    #[error(transparent)]
    Results(#[from] crate::game::readback::results::ResultsError),
    #[error(transparent)]
    Figure(#[from] crate::analysis::figures::FigureError),
    #[error(transparent)]
    Probes(#[from] crate::runtime::productions::ProbeRunError),
    #[error("JSON output: {0}")]
    Json(#[from] serde_json::Error),
}

impl CliError {
    /// An I/O failure on `path`, e.g. `CliError::io("write", path)(err)`.
    pub fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| CliError::Io {
            action,
            path,
            source,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        CliError::Usage(message.into())
    }
}
