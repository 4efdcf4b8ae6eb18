//! What can go wrong running GPT-2 (shapes, inputs, reading back from the device).

/// How a failed readback's message begins ([`ModelError::Readback`]): the inference worker
/// looks for it in a failed request's text to tell a lost GPU from other failures.
pub const READBACK_FAILED: &str = "reading a tensor back from the device failed";

/// How the messages of the errors that show a device's results wrong begin
/// ([`ModelError::NotANumber`], [`ModelError::DrawOutOfRange`]): the inference worker looks for
/// it in a failed request's text to leave such a GPU for the CPU.
pub const UNTRUSTED_RESULTS: &str = "the device's results cannot be trusted";

/// Errors of running the model on token ids (not of loading it: see `loader`).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ModelError {
    #[error("this step cannot be recorded and replayed: {0}")]
    NotReplayable(&'static str),
    #[error("recording or replaying the decode step failed: {0}")]
    Recording(String),
    #[error("no tokens to run")]
    EmptyInput,
    #[error("token id {id} is outside the vocabulary of {vocab_size}")]
    TokenOutOfRange { id: u32, vocab_size: usize },
    #[error("sequence of {needed} tokens exceeds the model's {max} positions")]
    ContextTooLong { needed: usize, max: usize },
    #[error("the KV cache holds {capacity} new tokens per sequence; {needed} requested")]
    CacheFull { needed: usize, capacity: usize },
    #[error("batch of {got} rows does not match the cache's {expected}")]
    BatchMismatch { got: usize, expected: usize },
    #[error("row continues prefix segment {segment}, but the prefix has {segments}")]
    NoSuchSegment { segment: usize, segments: usize },
    #[error("rows of a token batch must have equal length")]
    RaggedBatch,
    #[error("reading a tensor back from the device failed: {0}")]
    Readback(String),
    /// A result read back held NaN. The weights are checked finite at load and every kernel
    /// keeps its sums in range, so this is the device's arithmetic (a driver's `tanh` past
    /// `exp`'s range once gave it): nothing it computes can be trusted.
    #[error(
        "the device's results cannot be trusted: it computed values that are not numbers (NaN) in {0}"
    )]
    NotANumber(&'static str),
    /// A token drawn outside the vocabulary (beyond the one past its end that rounding may give).
    #[error(
        "the device's results cannot be trusted: it drew token {id} from a vocabulary of {vocab}"
    )]
    DrawOutOfRange { id: i64, vocab: usize },
    #[error(transparent)]
    PanelProduct(#[from] PanelError),
    #[error(transparent)]
    Rotary(#[from] RotaryError),
    /// A layer's weights stored for another backend (each backend's layout is chosen at load).
    #[error("the {body} body needs {needed} weights, and this layer's are not")]
    WeightLayout {
        body: &'static str,
        needed: &'static str,
    },
}

/// Why a weight cannot be packed into panels or a product against them computed
/// (`ops::panel_product`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PanelError {
    #[error("a weight of {values} values cannot be [{n_in}, {n_out}]")]
    WeightShape {
        values: usize,
        n_in: usize,
        n_out: usize,
    },
    #[error("a bias of {values} values for a weight of {n_out} outputs")]
    BiasShape { values: usize, n_out: usize },
    /// The layer's bias could not be read to the host to be packed beside its weight.
    #[error("the bias could not be read: {0}")]
    Bias(String),
    #[error("an input of {values} values is not {rows} rows of {n_in}")]
    InputShape {
        values: usize,
        rows: usize,
        n_in: usize,
    },
}

/// Why a rotary table cannot be made (`ops::rotary`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RotaryError {
    #[error("rotary dimensions must be a positive even number, found {0}")]
    Dims(usize),
    #[error("the rotary base must be a positive finite number, found {0}")]
    Base(f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_results_say_so_in_their_first_words() {
        for error in [
            ModelError::NotANumber("logits"),
            ModelError::DrawOutOfRange { id: -7, vocab: 10 },
        ] {
            let text = error.to_string();
            assert!(text.starts_with(UNTRUSTED_RESULTS), "{text}");
        }
    }

    #[test]
    fn a_readback_failure_says_so_in_its_first_words() {
        let text = ModelError::Readback("mapping failed".into()).to_string();
        assert!(text.starts_with(READBACK_FAILED), "{text}");
    }
}
