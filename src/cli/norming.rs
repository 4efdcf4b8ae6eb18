//! `clozelab norming-sim`: adaptive norming against a fixed N and a model-planned allocation,
//! simulated on the Provo norms' responses ([`crate::analysis::norming::simulation`]).

use super::commands::{NormingSimArgs, NormingUnit};
use super::error::CliError;
use crate::analysis::norming::precision::PrecisionTarget;
use crate::analysis::norming::simulation::{Simulation, Unit, summarise};

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
