//! `clozelab norming-sim`: adaptive norming against a fixed N and a model-planned allocation,
//! simulated on the Provo norms' responses ([`crate::analysis::norming::simulation`]);
//! `norming-state`: a study's progress towards its target from its results so far, and the
//! state file a study outside JATOS serves ([`crate::game::readback::norming_progress`]);
//! `norming-prior`: the model's probability of each context's next word, adaptive norming's
//! prior in the config.

use super::error::CliError;
use super::norming_args::{NormingPriorArgs, NormingSimArgs, NormingStateArgs, NormingUnit};
use crate::analysis::norming::precision::PrecisionTarget;
use crate::analysis::norming::simulation::{Simulation, Unit, summarise};
use crate::game::design::adaptive_norming::STATE_FILE;
use crate::game::design::study::StudyConfig;
use crate::game::readback::norming_progress::state_file;
use crate::game::readback::results_merge::StudyResults;
use crate::game::run::norming_state::{NormingPlan, ResponseCounts};

pub fn norming_sim(args: &NormingSimArgs) -> Result<(), CliError> {
    let target = PrecisionTarget::new(args.width, args.unseen, args.share)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let norms =
        crate::data::provo::read_norms(&args.provo).map_err(|e| CliError::usage(e.to_string()))?;
    let unit = match args.unit {
        NormingUnit::Passage => Unit::Passage,
        NormingUnit::Context => Unit::Context,
    };
    let simulation = Simulation::new(&norms, unit, target, args.cap)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let rows = summarise(&simulation, args.seeds).map_err(|e| CliError::usage(e.to_string()))?;
    if args.json {
        let json = serde_json::json!({
            "target": target.describe(),
            "unit": format!("{unit:?}").to_lowercase(),
            "contexts": simulation.contexts(),
            "units": simulation.units(),
            "seeds": args.seeds,
            "policies": rows,
        });
        println!("{json}");
        return Ok(());
    }
    println!(
        "target: {}; {} contexts in {} {}s; {} seeds",
        target.describe(),
        simulation.contexts(),
        simulation.units(),
        format!("{unit:?}").to_lowercase(),
        args.seeds
    );
    println!(
        "{:<40} {:>10} {:>8} {:>9} {:>10} {:>11}",
        "policy", "readings", "sd", "vs fixed", "coverage", "claim held"
    );
    for r in rows {
        println!(
            "{:<40} {:>10.0} {:>8.0} {:>9.2} {:>10.3} {:>11.2}",
            r.policy,
            r.mean_readings,
            r.sd_readings,
            r.relative_to_fixed,
            r.mean_interval_coverage,
            r.claim_held
        );
    }
    Ok(())
}

/// Reads and checks a study config.
fn read_study(path: &std::path::Path) -> Result<(String, StudyConfig), CliError> {
    let text = std::fs::read_to_string(path).map_err(CliError::io("read", path))?;
    let config = StudyConfig::from_json(&text)
        .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
    Ok((text, config))
}

fn norming_plan(path: &std::path::Path, config: &StudyConfig) -> Result<NormingPlan, CliError> {
    NormingPlan::of(config).ok_or_else(|| {
        CliError::usage(format!(
            "{} has no adaptive_norming section to state a precision target",
            path.display()
        ))
    })
}

pub fn norming_state(args: &NormingStateArgs) -> Result<(), CliError> {
    let (_, config) = read_study(&args.study)?;
    let plan = norming_plan(&args.study, &config)?;
    let files = args
        .files
        .iter()
        .map(|p| {
            Ok((
                p.display().to_string(),
                std::fs::read(p).map_err(CliError::io("read", p))?,
            ))
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    let results = StudyResults::read(files)?;
    let written_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let state = state_file(&results, &config.study_id(), &written_at);
    let status = plan.status(&ResponseCounts::of_state(&state));
    if let Some(out) = &args.out {
        let text = serde_json::to_string_pretty(&state).expect("plain data serialises");
        std::fs::write(out, text).map_err(CliError::io("write", out))?;
        eprintln!(
            "wrote {} (serve it beside the study's config as {STATE_FILE})",
            out.display()
        );
    }
    if args.json {
        let json = serde_json::json!({
            "target": plan.target.describe(),
            "contexts": status.contexts,
            "met": status.met,
            "done": status.done,
            "completed_runs": state.runs,
        });
        println!("{json}");
    } else {
        println!(
            "{} of {} contexts meet the target ({}): {}",
            status.met,
            status.contexts,
            plan.target.describe(),
            if status.done {
                "met, the study is full"
            } else {
                "not yet"
            }
        );
        for list in &plan.lists {
            println!(
                "list {}: {} completed runs",
                list.name,
                state.runs.get(&list.name).copied().unwrap_or(0)
            );
        }
    }
    Ok(())
}

pub fn norming_prior(args: &NormingPriorArgs) -> Result<(), CliError> {
    let (text, config) = read_study(&args.study)?;
    let plan = norming_plan(&args.study, &config)?;
    let (engine, _) = super::load_engine(&args.model)?;
    let mut scorer = crate::estimators::wordprob::WordScorer::new(&engine.tokenizer);
    let mut prior = serde_json::Map::new();
    let contexts: std::collections::BTreeMap<&str, &str> = plan
        .lists
        .iter()
        .flat_map(|l| l.contexts.iter().map(|(k, t)| (k.as_str(), t.as_str())))
        .collect();
    for (key, target) in contexts {
        let (passage, position) = key.rsplit_once(':').expect("keys are passage:position");
        let passage = config
            .passage(passage)
            .expect("the plan's passages are the study's");
        let position: usize = position.parse().expect("keys are passage:position");
        let context = passage.context(position);
        let scores = pollster::block_on(scorer.score(
            &engine.model,
            &engine.tokenizer,
            &context,
            &[target.to_string()],
            1.0,
            &mut crate::estimators::progress::Unmonitored,
        ))?;
        // Kept inside (0, 1), as the config's check asks of a prior.
        let p = scores
            .first()
            .map_or(0.5, |s| s.prob)
            .clamp(1e-6, 1.0 - 1e-6);
        prior.insert(key.to_string(), serde_json::json!(p));
    }
    let mut json: serde_json::Value =
        serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(&text))
            .map_err(|e| CliError::usage(e.to_string()))?;
    let count = prior.len();
    json["adaptive_norming"]["prior"] = serde_json::Value::Object(prior);
    let out = serde_json::to_string_pretty(&json).expect("a JSON value serialises");
    StudyConfig::from_json(&out).map_err(|e| CliError::usage(e.to_string()))?;
    std::fs::write(&args.out, out).map_err(CliError::io("write", &args.out))?;
    eprintln!(
        "wrote {} with the model's probability of {count} contexts' next words",
        args.out.display()
    );
    Ok(())
}
