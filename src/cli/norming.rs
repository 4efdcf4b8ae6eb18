//! `clozelab norming-sim`: adaptive norming against a fixed N and a model-planned allocation,
//! simulated on the Provo norms' responses ([`crate::analysis::norming::simulation`]);
//! `norming-state`: a study's progress towards its target from its results so far, and the
//! state file a study outside JATOS serves ([`crate::game::readback::norming_progress`]);
//! `norming-prior`: the model's probability of each context's next word, adaptive norming's
//! prior in the config.

use super::error::CliError;
use super::job_parts::write_part;
use super::norming_args::{NormingPriorArgs, NormingSimArgs, NormingStateArgs, NormingUnit};
use crate::analysis::norming::precision::PrecisionTarget;
use crate::analysis::norming::seed_runs::{SeedLine, parse_seed_runs, seed_runs_jsonl};
use crate::analysis::norming::simulation::{
    PolicySummary, Simulation, SimulationError, Unit, summarise, summarise_runs,
};
use crate::data::job_manifest::{CorpusSource, JobDescription, JobManifest, sha256_hex};
use crate::game::design::adaptive_norming::STATE_FILE;
use crate::game::design::study::StudyConfig;
use crate::game::readback::norming_progress::state_file;
use crate::game::readback::results_merge::StudyResults;
use crate::game::run::norming_state::{NormingPlan, ResponseCounts};

pub fn norming_sim(args: &NormingSimArgs) -> Result<(), CliError> {
    if let Some(dir) = &args.runs {
        return summarise_merged(dir, args.json);
    }
    let provo = args
        .provo
        .as_ref()
        .expect("clap asks for --provo without --runs");
    let target = PrecisionTarget::new(args.width, args.unseen, args.share)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let norms =
        crate::data::provo::read_norms(provo).map_err(|e| CliError::usage(e.to_string()))?;
    let unit = match args.unit {
        NormingUnit::Passage => Unit::Passage,
        NormingUnit::Context => Unit::Context,
    };
    let unit_name = format!("{unit:?}").to_lowercase();
    let simulation = Simulation::new(&norms, unit, target, args.cap)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let shard = args.shard.shard()?;
    let Some(out) = &args.out else {
        if shard.count > 1 {
            return Err(CliError::usage(format!(
                "shard {shard} of the seeds is written, not printed: give --out DIR"
            )));
        }
        let rows =
            summarise(&simulation, args.seeds).map_err(|e| CliError::usage(e.to_string()))?;
        let about = SimulationAbout {
            target: target.describe(),
            unit: unit_name,
            contexts: simulation.contexts(),
            units: simulation.units(),
            seeds: args.seeds,
        };
        print_summary(&about, &rows, args.json);
        return Ok(());
    };
    // Each seed is one item of the job: a part runs its seeds as one process runs them.
    let seeds = usize::try_from(args.seeds).map_err(|_| CliError::usage("too many seeds"))?;
    let range = shard.items(&vec![1; seeds]);
    let lines = range
        .clone()
        .map(|seed| {
            let seed = seed as u64;
            simulation.run(seed).map(|run| SeedLine { seed, run })
        })
        .collect::<Result<Vec<_>, SimulationError>>()
        .map_err(|e| CliError::usage(e.to_string()))?;
    let table = seed_runs_jsonl(&lines);
    let norms_file = provo.join("provo_cloze.jsonl");
    let bytes = std::fs::read(&norms_file).map_err(CliError::io("read", &norms_file))?;
    let job = JobDescription {
        command: "norming-sim".to_string(),
        table: "norming_runs.jsonl".to_string(),
        header_lines: 0,
        clozelab_version: env!("CARGO_PKG_VERSION").to_string(),
        corpus: CorpusSource {
            name: norms_file.display().to_string(),
            sha256: sha256_hex(&bytes),
            items: seeds,
        },
        models: Vec::new(),
        options: serde_json::json!({
            "target": target.describe(),
            "width": args.width,
            "unseen": args.unseen,
            "share": args.share,
            "unit": unit_name,
            "cap": args.cap,
            "contexts": simulation.contexts(),
            "units": simulation.units(),
        }),
    };
    let manifest = JobManifest::describe(job, shard, range, &table);
    let path = write_part(out, &table, &manifest)?;
    println!(
        "wrote {}: {} seeds (shard {shard})",
        path.display(),
        manifest.rows
    );
    Ok(())
}

/// What a summary is of.
struct SimulationAbout {
    target: String,
    unit: String,
    contexts: usize,
    units: usize,
    seeds: u64,
}

/// The summary of a merged job's runs, as the one process that ran every seed prints it.
fn summarise_merged(dir: &std::path::Path, json: bool) -> Result<(), CliError> {
    let name = dir.display().to_string();
    let read = |file: &str| {
        let path = dir.join(file);
        std::fs::read_to_string(&path).map_err(CliError::io("read", path))
    };
    let manifest = JobManifest::from_json(&name, &read("manifest.json")?)
        .map_err(|e| CliError::usage(e.to_string()))?;
    if manifest.job.command != "norming-sim" || manifest.shard.count != 1 {
        return Err(CliError::usage(format!(
            "{name} holds {} {} ({}), not a whole norming-sim job: merge its parts first",
            manifest.job.command, manifest.job.table, manifest.shard
        )));
    }
    let text = read(&manifest.job.table)?;
    manifest
        .check_table(&name, &text)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let lines = parse_seed_runs(&manifest.job.table, &text)?;
    let runs: Vec<_> = lines.iter().map(|l| l.run).collect();
    let rows = summarise_runs(&runs).map_err(|e| CliError::usage(e.to_string()))?;
    let option = |key: &str| manifest.job.options.get(key).cloned().unwrap_or_default();
    let about = SimulationAbout {
        target: option("target").as_str().unwrap_or_default().to_string(),
        unit: option("unit").as_str().unwrap_or_default().to_string(),
        contexts: option("contexts").as_u64().unwrap_or_default() as usize,
        units: option("units").as_u64().unwrap_or_default() as usize,
        seeds: runs.len() as u64,
    };
    print_summary(&about, &rows, json);
    Ok(())
}

fn print_summary(about: &SimulationAbout, rows: &[PolicySummary], json: bool) {
    if json {
        let json = serde_json::json!({
            "target": about.target,
            "unit": about.unit,
            "contexts": about.contexts,
            "units": about.units,
            "seeds": about.seeds,
            "policies": rows,
        });
        println!("{json}");
        return;
    }
    println!(
        "target: {}; {} contexts in {} {}s; {} seeds",
        about.target, about.contexts, about.units, about.unit, about.seeds
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
