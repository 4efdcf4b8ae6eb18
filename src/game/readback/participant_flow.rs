//! The participant flow a paper reports (as a CONSORT diagram does): every run that started,
//! those who withdrew, those left out (each under the first of its reasons), and those
//! analysed, by how their run ended. Its counts add up by construction — started = withdrew +
//! left out + analysed — and come from the same runs and exclusions as the trial table.

use super::exclusions::Exclusion;
use crate::analysis::figures::{Figure, Plot, Series};
use crate::data::participant_run::{ParticipantRun, RunState};
use crate::data::{Delimiter, write_delimited};

/// The flow's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParticipantFlow {
    /// Every run the results hold (withdrawn ones too: JATOS keeps their fact, not their data).
    pub started: usize,
    pub withdrew: usize,
    /// Runs left out, by the first of their reasons' codes, in the order reasons are checked.
    pub left_out: Vec<(&'static str, usize)>,
    /// Runs analysed, by how they ended: (state, runs).
    pub analysed: Vec<(&'static str, usize)>,
}

fn state_code(state: RunState) -> &'static str {
    match state {
        RunState::Complete => "complete",
        RunState::Incomplete => "incomplete",
        RunState::Withdrawn => "withdrawn",
        RunState::ScreenedOut => "screened_out",
    }
}

fn add(counts: &mut Vec<(&'static str, usize)>, key: &'static str) {
    match counts.iter_mut().find(|(k, _)| *k == key) {
        Some((_, n)) => *n += 1,
        None => counts.push((key, 1)),
    }
}

impl ParticipantFlow {
    /// The flow of `runs` with `exclusions` (as [`super::exclusions::decide`] made them).
    ///
    /// ```
    /// use clozelab::data::participant_run::{ParticipantRun, RunState};
    /// use clozelab::game::readback::exclusions::{ExclusionRules, decide};
    /// use clozelab::game::readback::participant_flow::ParticipantFlow;
    /// let mut test = ParticipantRun::bare("T".into(), "jatos-1".into(), RunState::Complete);
    /// test.worker_type = Some("Jatos".into());
    /// let runs = [
    ///     test,
    ///     ParticipantRun::bare("P1".into(), "jatos-2".into(), RunState::Complete),
    ///     ParticipantRun::bare("P2".into(), "jatos-3".into(), RunState::Withdrawn),
    ///     ParticipantRun::bare("P3".into(), "jatos-4".into(), RunState::Incomplete),
    /// ];
    /// let flow = ParticipantFlow::of(&runs, &decide(&runs, &ExclusionRules::default()));
    /// assert_eq!((flow.started, flow.withdrew), (4, 1));
    /// assert_eq!(flow.left_out, [("jatos_test_run", 1)]);
    /// assert_eq!(flow.analysed, [("complete", 1), ("incomplete", 1)]);
    /// assert_eq!(flow.analysed_runs(), 2);
    /// ```
    pub fn of(runs: &[ParticipantRun], exclusions: &[Exclusion]) -> Self {
        let mut flow = Self {
            started: runs.len(),
            ..Self::default()
        };
        for run in runs {
            if run.state == RunState::Withdrawn {
                flow.withdrew += 1;
                continue;
            }
            let excluded = exclusions
                .iter()
                .find(|e| e.participant == run.participant && e.run == run.run);
            match excluded.and_then(|e| e.reasons.iter().min()) {
                Some(reason) => add(&mut flow.left_out, reason.code()),
                None => add(&mut flow.analysed, state_code(run.state)),
            }
        }
        flow.left_out.sort_by_key(|(code, _)| {
            super::exclusions::ExclusionReason::ALL
                .iter()
                .position(|r| r.code() == *code)
        });
        flow.analysed.sort_by_key(|(state, _)| {
            ["complete", "incomplete", "screened_out"]
                .iter()
                .position(|s| s == state)
        });
        flow
    }

    /// Runs left out, all reasons together.
    pub fn left_out_runs(&self) -> usize {
        self.left_out.iter().map(|(_, n)| n).sum()
    }

    /// Runs analysed, all states together.
    pub fn analysed_runs(&self) -> usize {
        self.analysed.iter().map(|(_, n)| n).sum()
    }

    /// The flow as rows (stage, detail, runs): started, withdrew, left out (one row per reason),
    /// analysed (one row per state).
    pub fn rows(&self) -> Vec<(&'static str, &'static str, usize)> {
        let mut rows = vec![
            ("started", "", self.started),
            ("withdrew", "", self.withdrew),
        ];
        rows.extend(self.left_out.iter().map(|(r, n)| ("left_out", *r, *n)));
        rows.extend(self.analysed.iter().map(|(s, n)| ("analysed", *s, *n)));
        rows
    }

    /// `flow.csv`: stage, detail, runs.
    pub fn csv(&self) -> String {
        write_delimited(
            &["stage", "detail", "runs"],
            self.rows()
                .into_iter()
                .map(|(stage, detail, n)| vec![stage.into(), detail.into(), n.to_string()]),
            Delimiter::Comma,
        )
    }

    /// One sentence for a paper's method section.
    pub fn sentence(&self) -> String {
        let left_out: Vec<String> = self
            .left_out
            .iter()
            .map(|(reason, n)| format!("{n} {}", reason.replace('_', " ")))
            .collect();
        format!(
            "{} runs started; {} withdrew; {} left out{}; {} analysed.",
            self.started,
            self.withdrew,
            self.left_out_runs(),
            if left_out.is_empty() {
                String::new()
            } else {
                format!(" ({})", left_out.join(", "))
            },
            self.analysed_runs()
        )
    }

    /// The flow as a bar per stage (the Analysis page's figure, `flow.svg`).
    pub fn figure(&self) -> Figure {
        let rows = self.rows();
        let labels: Vec<String> = rows
            .iter()
            .map(|(stage, detail, _)| match *detail {
                "" => stage.replace('_', " "),
                detail => format!("{}: {}", stage.replace('_', " "), detail.replace('_', " ")),
            })
            .collect();
        let points = rows
            .iter()
            .enumerate()
            .map(|(i, (_, _, n))| (i as f64, *n as f64))
            .collect();
        Figure {
            id: "participant-flow".into(),
            title: format!("Participant flow: {}", self.sentence()),
            plot: Plot::Bars {
                labels,
                series: vec![Series {
                    name: "runs".into(),
                    points,
                }],
                y_label: "runs".into(),
            },
            csv: self.csv(),
        }
    }
}
