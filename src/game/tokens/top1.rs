//! The top-1 game: at each position the player types the one token they think most likely
//! next; accuracy is compared with GPT-2's arg-max on the same positions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One answered position (a row of the long-format export).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Top1Record {
    pub participant: String,
    pub passage: String,
    /// 0-based token position.
    pub position: u32,
    pub context: String,
    pub true_token: u32,
    pub true_token_text: String,
    /// What the player typed.
    pub guess: String,
    /// The guess as one GPT-2 token, when it is one.
    pub guess_token: Option<u32>,
    pub correct: bool,
    /// GPT-2's arg-max at this position, and the probabilities it gives the true token and the
    /// guess (absent when no model was loaded).
    pub gpt2_top1: Option<u32>,
    pub g_true: Option<f64>,
    pub g_guess: Option<f64>,
    /// 1-based rank of the guess under GPT-2.
    pub guess_rank: Option<u32>,
    pub ms_to_answer: Option<f64>,
    pub timestamp: String,
    pub practice: bool,
    /// The run the answer was given in (see `crate::game::design::run_scope`); empty in exports made
    /// before runs were kept.
    #[serde(default)]
    pub run: String,
}

/// Whether a typed guess is right: the same token id when the guess is one token, else the
/// same text (so a guess that is not a GPT-2 token can still match nothing wrongly).
pub fn is_correct(guess: &str, guess_token: Option<u32>, true_token: u32, true_text: &str) -> bool {
    match guess_token {
        Some(id) => id == true_token,
        None => !guess.is_empty() && guess == true_text,
    }
}

/// Accuracy of one participant, beside GPT-2's on the same positions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParticipantAccuracy {
    pub participant: String,
    pub positions: usize,
    pub accuracy: f64,
    /// GPT-2's accuracy on this participant's positions (where it was recorded).
    pub model_accuracy: Option<f64>,
}

/// Top-1 accuracy per participant (practice rounds left out), in participant order; `None`
/// when no scored round remains.
pub fn accuracies(records: &[Top1Record]) -> Option<Vec<ParticipantAccuracy>> {
    let mut by: BTreeMap<&str, Vec<&Top1Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| !r.practice) {
        by.entry(&r.participant).or_default().push(r);
    }
    if by.is_empty() {
        return None;
    }
    Some(
        by.into_iter()
            .map(|(participant, rows)| {
                let n = rows.len() as f64;
                let with_model: Vec<bool> = rows
                    .iter()
                    .filter_map(|r| r.gpt2_top1.map(|m| m == r.true_token))
                    .collect();
                ParticipantAccuracy {
                    participant: participant.to_string(),
                    positions: rows.len(),
                    accuracy: rows.iter().filter(|r| r.correct).count() as f64 / n,
                    model_accuracy: (!with_model.is_empty()).then(|| {
                        with_model.iter().filter(|&&c| c).count() as f64 / with_model.len() as f64
                    }),
                }
            })
            .collect(),
    )
}

/// Running score shown in play mode: (player correct, GPT-2 correct, answered).
pub fn running_score(records: &[Top1Record]) -> (usize, usize, usize) {
    let scored: Vec<&Top1Record> = records.iter().filter(|r| !r.practice).collect();
    (
        scored.iter().filter(|r| r.correct).count(),
        scored
            .iter()
            .filter(|r| r.gpt2_top1 == Some(r.true_token))
            .count(),
        scored.len(),
    )
}
