//! The one typed protocol between the page and the inference worker.
//!
//! The page never runs a forward pass: it sends [`Request`]s (each with an id it chose) and the
//! worker answers with [`Reply`]s carrying the same id — any number of progress replies, then
//! exactly one final reply (see [`Reply::is_final`]). Plain serde types, so the protocol
//! compiles and is tested natively; the browser encodes them with gloo-worker's codec.

use serde::{Deserialize, Serialize};

use crate::analysis::figures::Figure;
use crate::analysis::perplexity::{BiasPoint, BiasSetup};
use crate::analysis::report::Analysis;
use crate::analysis::table1::Table1Options;
use crate::estimators::decoding::DecodingStrategy;
use crate::estimators::progress::Progress;
use crate::estimators::sampler::WordSamples;
use crate::estimators::wordprob::WordProb;
use crate::model::Precision;
use crate::runtime::backend::BackendKind;
use crate::runtime::distributions::{TokenLogProb, TokenStats};

/// Bytes per upload chunk: small enough that the page never holds a second copy of a large
/// weights file, large enough that a 500 MB file is a few dozen messages.
pub const UPLOAD_CHUNK_BYTES: usize = 8 << 20;

/// What the page asks of the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Pick the device (WebGPU, else the CPU; `force_cpu` from `?backend=cpu`) and answer
    /// [`Reply::Backend`]. Sent once, first.
    Init(InitRequest),
    /// "Which backend/adapter?": answers [`Reply::Backend`] again.
    Backend,
    /// Download a model folder (`config.json`, tokenizer, `model.safetensors`) from a URL,
    /// through the browser's Cache Storage; [`Reply::Loading`] while it runs.
    LoadUrl(ModelFolder),
    /// Starts an upload of local model files: their names and sizes, in the order their
    /// [`Request::UploadChunk`]s will come.
    UploadBegin(UploadBeginRequest),
    /// The next piece of file `file` (an index into `UploadBegin::files`).
    UploadChunk(UploadChunkRequest),
    /// Every chunk is sent: build the model from the uploaded files.
    UploadEnd,
    /// The `k` most likely next tokens after `context`.
    NextTokens(NextTokensRequest),
    /// Log-probability of each token of `tokens` after `context` and the tokens before it.
    SequenceLogProbs(SequenceLogProbsRequest),
    /// Monte Carlo word distribution (the tree sampler), with progress and cancellation.
    SampleWords(SampleWordsRequest),
    /// Exact probabilities of `words` as the next word after `context`.
    WordProbs(WordProbsRequest),
    /// GPT-2's tokens of `text` (the next-token games show a passage token by token, and check
    /// whether typed text is one token).
    Tokenize(TokenizeRequest),
    /// The next-token games at one position: see [`TokenStats`].
    TokenStats(TokenStatsRequest),
    /// The estimator-bias simulation (two-token game) over `texts`: progress per position, then
    /// [`Reply::Bias`].
    SimulateBias(SimulateBiasRequest),
    /// Loads a second model (same vocabulary) from a folder URL to play the two-token game
    /// beside the first: progress, then [`Reply::ModelReady`].
    LoadOpponentUrl(ModelFolder),
    /// The second model's log-probabilities of `tokens` after `context_ids`: [`Reply::LogProbs`].
    OpponentLogProbs(OpponentLogProbsRequest),
    /// Table 1 and the figures of the Analysis page over the files given (name, text): norms
    /// and sample files. The worker keeps the dataset for [`Request::ContextFigure`].
    Analyse(AnalyseRequest),
    /// Appendix D over the last analysed dataset with the loaded model: progress per context,
    /// then [`Reply::TokenLevel`].
    TokenLevel(TokenLevelRequest),
    /// The loaded model's surprisal of every target word of the last analysed dataset
    /// (`model`: its name in the trial table): progress per context, then
    /// [`Reply::Predictors`].
    TargetSurprisal(TargetSurprisalRequest),
    /// One participant of the last analysed dataset beside every system and the oracle:
    /// [`Reply::Participant`].
    Participant(ParticipantRequest),
    /// Figure 1 for one context of the last analysed dataset, people beside `system`.
    ContextFigure(ContextFigureRequest),
    /// Syntactic or semantic TVD (Figure 4) over the last analysed dataset: [`Reply::ClassTvd`].
    ClassTvd(ClassTvdRequest),
    /// Production probes of the loaded model: progress per (strategy, context), then
    /// [`Reply::Probes`].
    Probes(crate::runtime::productions::ProbeRequest),
    /// How fast the loaded model runs on the worker's device: progress per operation, then
    /// [`Reply::Speed`].
    MeasureSpeed(crate::runtime::speed::SpeedSetup),
    /// Decode steps of the loaded model timed one by one (the host-cost benchmark's workload):
    /// [`Reply::DecodeSteps`].
    DecodeSteps(crate::runtime::decode_steps::DecodeStepsSetup),
    /// Stop request `id` at its next tree level (or before it starts).
    Cancel(CancelRequest),
}

/// The payload of [`Request::Init`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InitRequest {
    pub force_cpu: bool,
    /// The weights' precision wanted (the page's `?precision=f16`); f32 where the device does
    /// not offer it.
    #[serde(default)]
    pub precision: Precision,
}

/// A model folder (`config.json`, the tokenizer, `model.safetensors`) by its URL.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelFolder {
    pub base: String,
}

/// The payload of [`Request::UploadBegin`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UploadBeginRequest {
    pub files: Vec<(String, u64)>,
}

/// The payload of [`Request::UploadChunk`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UploadChunkRequest {
    pub file: usize,
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
}

/// The payload of [`Request::NextTokens`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NextTokensRequest {
    pub context: String,
    pub k: usize,
}

/// The payload of [`Request::SequenceLogProbs`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SequenceLogProbsRequest {
    pub context: String,
    pub tokens: Vec<u32>,
}

/// The payload of [`Request::SampleWords`]: one or more contexts, which the worker runs
/// together (one forward pass per tree level for all of them); [`Reply::Words`] answers in
/// the same order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleWordsRequest {
    pub contexts: Vec<SeededContext>,
    pub samples: usize,
    pub decoding: DecodingStrategy,
    pub token_budget: usize,
}

/// A context to sample and the seed of its draws (its result does not depend on the contexts
/// sampled beside it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeededContext {
    pub context: String,
    pub seed: u64,
}

/// The payload of [`Request::WordProbs`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WordProbsRequest {
    pub context: String,
    pub words: Vec<String>,
    pub temperature: f64,
}

/// The payload of [`Request::Tokenize`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenizeRequest {
    pub text: String,
}

/// The payload of [`Request::TokenStats`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenStatsRequest {
    pub context_ids: Vec<u32>,
    pub tokens: Vec<u32>,
    pub top: usize,
    pub sample_seed: Option<u64>,
}

/// The payload of [`Request::SimulateBias`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimulateBiasRequest {
    pub texts: Vec<String>,
    pub setup: BiasSetup,
}

/// The payload of [`Request::OpponentLogProbs`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpponentLogProbsRequest {
    pub context_ids: Vec<u32>,
    pub tokens: Vec<u32>,
}

/// The payload of [`Request::Analyse`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalyseRequest {
    pub files: Vec<(String, String)>,
    /// Systems computed in the page (GPT-2 sampled here), beside the files' ones.
    pub extra: Vec<crate::data::provo::SystemSamples>,
    pub options: Table1Options,
    /// Whose answers to leave out (see [`crate::game::readback::results_dataset::dataset_from_files`]).
    #[serde(default)]
    pub exclude: crate::game::readback::exclusions::ExclusionRules,
    /// Models' surprisal of the target words computed in the page, for the trial table.
    #[serde(default)]
    pub predictors: Vec<crate::analysis::predictors::ModelPredictors>,
}

/// The payload of [`Request::TargetSurprisal`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetSurprisalRequest {
    pub model: String,
}

/// The payload of [`Request::TokenLevel`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenLevelRequest {
    pub ece: crate::analysis::metrics::EceConvention,
    /// The model's name, for the figure.
    pub model: String,
}

/// The payload of [`Request::Participant`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticipantRequest {
    pub participant: String,
}

/// The payload of [`Request::ContextFigure`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextFigureRequest {
    pub key: crate::data::provo::ContextKey,
    pub system: String,
}

/// The payload of [`Request::Cancel`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CancelRequest {
    pub id: u64,
}

/// Syntactic or semantic TVD: the tagger's lexicon from `lexicon_url` (syntactic), the loaded
/// model's word embeddings (semantic, progress per batch of words).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassTvdRequest {
    pub level: crate::analysis::classes::Level,
    pub lexicon_url: String,
    pub options: Table1Options,
}

/// The model the worker holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelSummary {
    /// Where it came from (URL or file names).
    pub name: String,
    pub random_test_model: bool,
    pub parameters: usize,
    /// The architecture's name ("GPT-2", "GPT-NeoX", "Llama").
    #[serde(default)]
    pub architecture: String,
    /// The tokenizer: its files and number of tokens ("tokenizer.json, 49152 tokens").
    #[serde(default)]
    pub tokenizer: String,
    /// SHA-256 of the weights file, for export manifests.
    pub weight_sha256: String,
}

impl ModelSummary {
    /// "Loaded NAME (ARCHITECTURE, N.NM parameters)."
    pub fn loaded_line(&self) -> String {
        format!(
            "Loaded {} ({}, {:.1}M parameters).",
            self.name,
            self.architecture,
            self.parameters as f64 / 1e6
        )
    }
}

/// What the worker answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    /// The device in use; `fallback_reason` says why WebGPU is not. Models load with their
    /// blocks' weights in `precision`; `f16_offered` says whether the adapter offers f16.
    Backend {
        kind: BackendKind,
        adapter: String,
        fallback_reason: Option<String>,
        precision: Precision,
        f16_offered: bool,
    },
    /// Model loading progress: downloading or receiving `step`, `loaded` of `total` bytes.
    Loading {
        step: String,
        loaded: u64,
        total: Option<u64>,
    },
    /// An upload chunk arrived (the page sends the next one on this, so at most one chunk is
    /// in flight).
    ChunkReceived {
        loaded: u64,
    },
    ModelReady(ModelSummary),
    NextTokens(Vec<TokenLogProb>),
    LogProbs(Vec<f64>),
    /// Estimator progress (after every tree level).
    Progress(Progress),
    /// Each context's samples, in the request's order.
    Words(Vec<WordSamples>),
    WordProbs(Vec<WordProb>),
    /// Token ids and each token's raw bytes.
    Tokens(Vec<(u32, Vec<u8>)>),
    TokenStats(TokenStats),
    /// The simulation's result: how many contexts it used, and one point per rounds-per-pair.
    Bias {
        contexts: usize,
        points: Vec<BiasPoint>,
    },
    Analysis(Box<Analysis>),
    Figure(Box<Figure>),
    /// The token-level row and figure (`None`: no context had a response with a token).
    TokenLevel(Option<Box<crate::analysis::token_level::TokenLevelReport>>),
    Participant(Box<crate::analysis::participant::ParticipantReport>),
    /// A model's surprisal of each context's target word, and notes on passages left out.
    Predictors {
        predictors: crate::analysis::predictors::ModelPredictors,
        notes: Vec<String>,
    },
    /// Syntactic or semantic TVD rows (the oracle first) and their Figure 4 histograms.
    ClassTvd {
        rows: Vec<crate::analysis::classes::ClassRow>,
        figures: Vec<Figure>,
    },
    Probes(Box<crate::runtime::productions::ProbeReport>),
    Speed(crate::runtime::speed::SpeedReport),
    DecodeSteps(crate::runtime::decode_steps::DecodeStepsReport),
    /// The WebGPU device was lost (driver reset, GPU memory pressure…) or gave results that
    /// cannot be right (NaN, a draw outside the vocabulary): the worker now runs on the CPU, with
    /// the model loaded again there, and the request goes on. Not final.
    SwitchedToCpu {
        /// What happened to the GPU, in words for the backend line.
        reason: String,
    },
    /// The request stopped because it was cancelled.
    Cancelled,
    /// The request failed; the text says why.
    Failed(String),
}

impl Reply {
    /// Whether this reply ends its request (no more replies with its id follow).
    pub fn is_final(&self) -> bool {
        !matches!(
            self,
            Reply::Loading { .. } | Reply::Progress(_) | Reply::SwitchedToCpu { .. }
        )
    }
}

/// A request with the id its replies will carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToWorker {
    pub id: u64,
    pub request: Request,
}

/// A reply to request `id`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FromWorker {
    pub id: u64,
    pub reply: Reply,
}

/// Splits `len` bytes into upload chunk ranges of at most [`UPLOAD_CHUNK_BYTES`].
pub fn chunk_ranges(len: u64) -> impl Iterator<Item = std::ops::Range<u64>> {
    let step = UPLOAD_CHUNK_BYTES as u64;
    (0..len.div_ceil(step)).map(move |i| i * step..((i + 1) * step).min(len))
}

/// Collects uploaded files in the worker, checking that chunks come in order and sizes match.
#[derive(Debug, Default)]
pub struct UploadBuffer {
    files: Vec<(String, u64, Vec<u8>)>,
}

/// An upload that does not add up.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum UploadError {
    #[error("no upload was started")]
    NotStarted,
    #[error("chunk for file {0}, but only {1} files were announced")]
    UnknownFile(usize, usize),
    #[error("{name} is {size} bytes, more than this browser can hold in one piece")]
    TooLarge { name: String, size: u64 },
    #[error("{name}: {got} bytes arrived, {expected} were announced")]
    SizeMismatch {
        name: String,
        expected: u64,
        got: u64,
    },
}

impl UploadBuffer {
    /// Starts an upload of `files` (name, size).
    pub fn begin(files: Vec<(String, u64)>) -> Self {
        Self {
            files: files
                .into_iter()
                .map(|(name, size)| (name, size, Vec::new()))
                .collect(),
        }
    }

    /// Appends a chunk; returns the bytes received so far over all files.
    pub fn push(&mut self, file: usize, bytes: &[u8]) -> Result<u64, UploadError> {
        let count = self.files.len();
        let (name, expected, buffer) = self
            .files
            .get_mut(file)
            .ok_or(UploadError::UnknownFile(file, count))?;
        if buffer.is_empty() {
            // Reserve once: the announced size (a 500 MB file must not be grown by doubling).
            let size = usize::try_from(*expected).map_err(|_| UploadError::TooLarge {
                name: name.clone(),
                size: *expected,
            })?;
            buffer
                .try_reserve_exact(size)
                .map_err(|_| UploadError::TooLarge {
                    name: name.clone(),
                    size: *expected,
                })?;
        }
        if buffer.len() as u64 + bytes.len() as u64 > *expected {
            return Err(UploadError::SizeMismatch {
                name: name.clone(),
                expected: *expected,
                got: buffer.len() as u64 + bytes.len() as u64,
            });
        }
        buffer.extend_from_slice(bytes);
        Ok(self.files.iter().map(|(_, _, b)| b.len() as u64).sum())
    }

    /// The complete files; `Err` if any is short.
    pub fn finish(self) -> Result<Vec<(String, Vec<u8>)>, UploadError> {
        if self.files.is_empty() {
            return Err(UploadError::NotStarted);
        }
        self.files
            .into_iter()
            .map(|(name, expected, bytes)| {
                if bytes.len() as u64 == expected {
                    Ok((name, bytes))
                } else {
                    Err(UploadError::SizeMismatch {
                        name,
                        expected,
                        got: bytes.len() as u64,
                    })
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sample_values::{every_variant, every_variant_without_options};

    #[test]
    fn chunks_cover_the_file_exactly() {
        let step = UPLOAD_CHUNK_BYTES as u64;
        for len in [0, 1, step - 1, step, step + 1, 3 * step + 7] {
            let ranges: Vec<_> = chunk_ranges(len).collect();
            assert_eq!(ranges.iter().map(|r| r.end - r.start).sum::<u64>(), len);
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
            assert!(
                ranges
                    .iter()
                    .all(|r| r.end - r.start <= step && r.end > r.start)
            );
        }
    }

    #[test]
    fn upload_checks_order_and_sizes() {
        let mut upload = UploadBuffer::begin(vec![
            ("config.json".into(), 3),
            ("model.safetensors".into(), 5),
        ]);
        assert_eq!(upload.push(0, b"abc"), Ok(3));
        assert_eq!(upload.push(1, b"12"), Ok(5));
        assert_eq!(upload.push(2, b"x"), Err(UploadError::UnknownFile(2, 2)));
        assert!(matches!(
            upload.push(0, b"d"),
            Err(UploadError::SizeMismatch { .. })
        ));
        assert!(matches!(
            UploadBuffer::begin(vec![("a".into(), 2)]).finish(),
            Err(UploadError::SizeMismatch { .. })
        ));
        assert_eq!(upload.push(1, b"345"), Ok(8));
        let files = upload.finish().unwrap();
        assert_eq!(
            files,
            vec![
                ("config.json".to_string(), b"abc".to_vec()),
                ("model.safetensors".to_string(), b"12345".to_vec())
            ]
        );
        assert_eq!(
            UploadBuffer::default().finish(),
            Err(UploadError::NotStarted)
        );
    }

    /// The variant's name, as its `Debug` form starts (serde_json cannot write every reply:
    /// maps keyed by a context are not JSON objects).
    fn variant_name<T: std::fmt::Debug>(message: &T) -> String {
        format!("{message:?}")
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .next()
            .unwrap()
            .to_string()
    }

    #[test]
    fn only_loading_progress_and_the_switch_to_the_cpu_are_not_final() {
        let replies = every_variant::<Reply>().unwrap();
        assert!(replies.len() >= 20, "{} replies", replies.len());
        for reply in replies {
            let name = variant_name(&reply);
            let progress = ["Loading", "Progress", "SwitchedToCpu"].contains(&name.as_str());
            assert_eq!(reply.is_final(), !progress, "{name}");
        }
    }

    #[test]
    fn every_message_round_trips_through_a_compact_binary_codec() {
        // The browser uses bincode (gloo-worker's default); skipped or defaulted fields would
        // break it, so every variant, with every field filled, must round-trip exactly.
        let mut requests = every_variant::<Request>().unwrap();
        let mut replies = every_variant::<Reply>().unwrap();
        assert!(requests.len() >= 20 && replies.len() >= 20);
        // And with every optional field empty (a field skipped when empty breaks bincode).
        requests.extend(every_variant_without_options::<Request>().unwrap());
        replies.extend(every_variant_without_options::<Reply>().unwrap());
        fn round_trips<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
            message: T,
        ) {
            let bytes = bincode::serialize(&message).unwrap();
            let back = bincode::deserialize::<T>(&bytes);
            assert_eq!(back.as_ref().ok(), Some(&message), "{message:?}: {back:?}");
        }
        for (id, request) in requests.into_iter().enumerate() {
            round_trips(ToWorker {
                id: id as u64,
                request,
            });
        }
        for (id, reply) in replies.into_iter().enumerate() {
            round_trips(FromWorker {
                id: id as u64,
                reply,
            });
        }
    }
}
