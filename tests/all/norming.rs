//! Norming precision and the simulation of adaptive norming: on made-up contexts whose answer
//! is known, the fixed design's N is the one the interval formula gives and adaptive
//! assignment spends its readings on the uncertain contexts; on the Provo norms, the command
//! line's table.

use std::collections::BTreeMap;

use clozelab::analysis::norming::precision::{ContextPrecision, PrecisionTarget, wilson_width};
use clozelab::analysis::norming::simulation::{Simulation, SimulationError, Unit, summarise};
use clozelab::data::provo::ProvoContext;

fn context(text_id: u32, word_num: u32, answers: &[(&str, u32)], target: &str) -> ProvoContext {
    ProvoContext {
        text_id,
        word_num,
        context: "x".into(),
        original: target.into(),
        human: answers
            .iter()
            .map(|(w, k)| (w.to_string(), *k))
            .collect::<BTreeMap<_, _>>(),
        gpt2_logprob_human: None,
        gpt2_logprob_original: Some(0.5f64.ln()),
    }
}

/// Half the contexts everyone answers the same; the other half split evenly on the target.
fn made_up() -> Vec<ProvoContext> {
    (0..20)
        .map(|i| {
            if i % 2 == 0 {
                context(i, 2, &[("sure", 40)], "sure")
            } else {
                context(i, 2, &[("yes", 20), ("no", 20)], "yes")
            }
        })
        .collect()
}

#[test]
fn a_fixed_design_needs_the_n_the_interval_formula_gives_and_adaptive_spends_less() {
    let w = 0.3;
    let target = PrecisionTarget::new(Some(w), None, 1.0).unwrap();
    // Every even-split context's interval holds ½, so it is checked at its widest: the
    // smallest n with wilson_width(½, n) ≤ w.
    let needed = (1..1000).find(|&n| wilson_width(0.5, n) <= w).unwrap();
    let simulation = Simulation::new(&made_up(), Unit::Context, target, 1000).unwrap();
    let run = simulation.run(7).unwrap();
    assert!(
        run.fixed.readings <= 20 * needed as u64 && run.fixed.readings >= 20 * (needed as u64 - 3),
        "{} readings, {needed} each",
        run.fixed.readings
    );
    // A context everyone answers the same is settled once its interval's lower end is high
    // enough; adaptive assignment stops giving it readings there, and gives the split ones what
    // they need, within 10% of what knowing each context's need in advance would spend.
    let settled = (1..1000)
        .find(|&n| target.met_by(&ContextPrecision::new(n, n, 0, 1).unwrap()))
        .unwrap();
    assert!(settled < needed);
    let in_advance = 10 * (settled + needed) as u64;
    assert!(
        run.adaptive.readings as f64 <= 1.1 * in_advance as f64,
        "{:?} against {in_advance}",
        run.adaptive
    );
    assert!(run.adaptive.readings < run.fixed.readings);
    assert!(run.adaptive.claim_holds && run.fixed.claim_holds);
    // Read whole, each unit holds both kinds: adaptive assignment saves nothing.
    let passages: Vec<ProvoContext> = made_up()
        .into_iter()
        .map(|mut c| {
            c.word_num = c.text_id + 2;
            c.text_id /= 2;
            c
        })
        .collect();
    let simulation = Simulation::new(&passages, Unit::Passage, target, 1000).unwrap();
    assert_eq!(simulation.units(), 10);
    let rows = summarise(&simulation, 3).unwrap();
    assert_eq!(rows.len(), 3);
    assert!((rows[2].relative_to_fixed - 1.0).abs() < 0.1, "{rows:?}");
}

#[test]
fn a_target_that_cannot_be_met_is_a_clear_error() {
    let target = PrecisionTarget::new(Some(0.01), None, 1.0).unwrap();
    let simulation = Simulation::new(&made_up(), Unit::Context, target, 50).unwrap();
    let err = simulation.run(0).unwrap_err();
    assert!(
        matches!(err, SimulationError::Unreachable { cap: 50, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("at most 50 readings per unit"));
    assert!(summarise(&simulation, 0).is_err());
    assert_eq!(
        Simulation::new(&[], Unit::Context, target, 50).unwrap_err(),
        SimulationError::NoContexts
    );
}

#[test]
fn the_command_line_simulates_on_the_provo_norms() {
    let Some(shared) = crate::common::shared_dir() else {
        eprintln!("SKIPPED: no ../shared");
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args([
            "norming-sim",
            "--width",
            "0.3",
            "--seeds",
            "2",
            "--unit",
            "context",
            "--json",
            "--provo",
        ])
        .arg(shared.join("provo"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["contexts"], 2687);
    let policies = json["policies"].as_array().unwrap();
    assert_eq!(policies.len(), 3);
    let readings = |i: usize| policies[i]["mean_readings"].as_f64().unwrap();
    assert!(readings(2) < readings(0), "adaptive below fixed: {json}");
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args(["norming-sim", "--provo"])
        .arg(shared.join("provo"))
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("state a bound"));
}

#[test]
fn the_precision_figure_counts_the_contexts_that_meet_the_target() {
    use clozelab::analysis::figures::Plot;
    use clozelab::analysis::figures::norming::{default_target, precision};
    // 40 answers, split evenly on the target or all alike: both within 0.3 (0.296 at the
    // widest); 4 answers split evenly: not yet.
    let mut norms = made_up();
    norms.push(context(99, 2, &[("yes", 2), ("no", 2)], "yes"));
    let figure = precision(&norms, &default_target()).unwrap();
    let Plot::Lines { series, .. } = &figure.plot else {
        panic!("{:?}", figure.plot)
    };
    assert_eq!(series[0].points.len(), 20, "{}", series[0].name);
    assert_eq!(series[1].points.len(), 1, "{}", series[1].name);
    let (n, width) = series[1].points[0];
    assert!(
        n == 4.0 && (width - wilson_width(0.5, 4)).abs() < 1e-12,
        "{width}"
    );
    assert!(series[2].points.iter().all(|&(_, y)| y == 0.3));
    assert_eq!(series[2].points.last(), Some(&(41.0, 0.3)));
    assert!(
        figure
            .title
            .starts_with("Norming precision: 20 of 21 contexts (95%) meet 90% of the contexts")
            && figure.title.ends_with(": target met"),
        "{}",
        figure.title
    );
    assert_eq!(figure.csv.lines().count(), 22);
    assert!(precision(&[], &default_target()).is_none());
}
