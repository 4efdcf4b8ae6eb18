//! Why a worker request failed. The page receives the message (`Reply::Failed`); the variants keep
//! the worker's own code honest about where each failure comes from.

use crate::app::web::WebError;
use crate::data::provo::ContextKey;
use crate::estimators::decoding::SamplingError;
use crate::estimators::sampler::SamplerError;
use crate::estimators::wordprob::WordProbError;
use crate::runtime::backend::BackendError;
use crate::runtime::distributions::InferenceError;
use crate::runtime::engine::{ChosenFilesError, EngineError};
use crate::runtime::protocol::UploadError;
use crate::text::tokenizer::TokenizerError;

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("no model is loaded")]
    NoModel,
    #[error(
        "the GPU stopped ({0}); clozelab now runs on the CPU, but the model came from local files: choose them again on the Model page"
    )]
    LostWithLocalModel(String),
    #[error("no second model is loaded")]
    NoOpponent,
    #[error("no dataset has been analysed yet")]
    NoDataset,
    #[error("context {key} has no samples of {system:?}")]
    NoContext { key: ContextKey, system: String },
    #[error(transparent)]
    Dataset(#[from] crate::analysis::dataset::DatasetError),
    #[error(transparent)]
    AnalysisFiles(#[from] crate::game::readback::results_dataset::AnalysisFilesError),
    #[error(transparent)]
    Table1(#[from] crate::analysis::table1::Table1Error),
    #[error(transparent)]
    Participant(#[from] crate::analysis::participant::ParticipantError),
    #[error(
        "the second model's vocabulary ({0} tokens) is not GPT-2's ({1}): it cannot score the same tokens"
    )]
    OpponentVocabulary(usize, usize),
    #[error("{0} is not UTF-8 text")]
    NotUtf8(&'static str),
    /// Cancel and upload chunks are answered as they arrive, never through the request queue.
    #[error("{0} is handled when received")]
    NotQueued(&'static str),
    #[error(transparent)]
    Web(#[from] WebError),
    #[error("the part-of-speech lexicon: {0}")]
    Lexicon(#[from] crate::text::pos::PosError),
    #[error(transparent)]
    Probes(#[from] crate::runtime::productions::ProbeRunError),
    #[error(transparent)]
    Metrics(#[from] crate::analysis::metrics::MetricsError),
    #[error(transparent)]
    Surprisal(#[from] crate::estimators::surprisal::SurprisalError),
    #[error(transparent)]
    Upload(#[from] UploadError),
    #[error(transparent)]
    ChosenFiles(#[from] ChosenFilesError),
    #[error(transparent)]
    ModelFolder(#[from] crate::runtime::model_folder::ModelFolderError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error(transparent)]
    Inference(#[from] InferenceError),
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    #[error(transparent)]
    Sampling(#[from] SamplingError),
    #[error(transparent)]
    Sampler(#[from] SamplerError),
    #[error(transparent)]
    WordProb(#[from] WordProbError),
    #[error(transparent)]
    Speed(#[from] crate::runtime::speed::SpeedError),
}
