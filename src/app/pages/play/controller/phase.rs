//! Where a game stands, and where GPT-2's feedback for the last guess stands.

#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    Loading,
    Consent,
    /// A block of the study's questions.
    Questions(crate::game::design::questions::Block),
    Playing,
    Feedback,
    Complete,
    Failed(String),
    /// The participant declined or withdrew; what they were told.
    Left(String),
}

/// GPT-2's side of the feedback for one context.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelFeedback {
    NoModel,
    Computing,
    Ready(std::collections::BTreeMap<String, f64>),
    Failed(String),
}

impl ModelFeedback {
    /// A short name for the state (a data attribute for tests and styling).
    pub fn state_name(&self) -> &'static str {
        match self {
            ModelFeedback::NoModel => "none",
            ModelFeedback::Computing => "computing",
            ModelFeedback::Ready(_) => "ready",
            ModelFeedback::Failed(_) => "failed",
        }
    }
}
