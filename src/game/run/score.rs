//! Play mode's running score: top-1 accuracy of the participant, of GPT-2 (its most likely
//! word) and of the average human (the human distribution's probability of the true word), on
//! the same contexts.

use crate::analysis::metrics::WordDistribution;
use crate::text::words::normalize;

/// Running sums; each accuracy is over the contexts where it is known.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Score {
    pub trials: usize,
    pub participant_correct: usize,
    pub model_trials: usize,
    pub model_correct: usize,
    pub human_trials: usize,
    /// Σ q_human(true word): the expected hits of a randomly chosen human.
    pub human_expected_correct: f64,
}

impl Score {
    /// Adds one trial. `model` and `humans` are `None` where unknown (no model loaded yet, or
    /// no human norms for the context).
    pub fn add(
        &mut self,
        true_word: &str,
        guess: &str,
        model: Option<&WordDistribution>,
        humans: Option<&WordDistribution>,
    ) {
        let truth = normalize(true_word);
        self.trials += 1;
        self.participant_correct += usize::from(normalize(guess) == truth);
        if let Some(m) = model {
            self.model_trials += 1;
            self.model_correct += usize::from(m.mode().0 == truth);
        }
        if let Some(h) = humans {
            self.human_trials += 1;
            self.human_expected_correct += h.prob(&truth);
        }
    }

    pub fn participant_accuracy(&self) -> Option<f64> {
        (self.trials > 0).then(|| self.participant_correct as f64 / self.trials as f64)
    }

    pub fn model_accuracy(&self) -> Option<f64> {
        (self.model_trials > 0).then(|| self.model_correct as f64 / self.model_trials as f64)
    }

    pub fn human_accuracy(&self) -> Option<f64> {
        (self.human_trials > 0).then(|| self.human_expected_correct / self.human_trials as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracies() {
        let mut s = Score::default();
        assert_eq!(s.participant_accuracy(), None);
        let model = WordDistribution::from_counts([("cat", 3.0), ("dog", 1.0)]).unwrap();
        let humans = WordDistribution::from_counts([("cat", 1.0), ("dog", 3.0)]).unwrap();
        s.add("Cat.", "cat", Some(&model), Some(&humans));
        s.add("dog", "cat", Some(&model), None);
        assert_eq!(s.participant_accuracy(), Some(0.5));
        assert_eq!(s.model_accuracy(), Some(0.5));
        assert_eq!(s.human_accuracy(), Some(0.25));
    }
}
