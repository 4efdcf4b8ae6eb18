//! `clozelab table1`: Table 1 of Ilia & Aziz (2024) on the Provo norms and the paper's
//! samples, with a row for each model given to sample, and the syntactic and semantic rows when
//! asked.

use super::commands::Table1Args;
use super::error::CliError;

pub fn table1(args: &Table1Args) -> Result<(), CliError> {
    let dir = &args.provo;
    let options = args.table1.options();
    let (seed, resamples) = (options.seed, options.resamples);
    let (oracle_size, ece) = (options.oracle_size, options.ece);
    let started = std::time::Instant::now();
    let mut data = crate::analysis::dataset::Dataset::from_shared_dir(dir)?;
    super::model_systems::add_model_systems(&mut data, &args.models, seed)?;
    let (rows, per_context) = crate::analysis::table1::compute_on(&data, &options)?;
    let class_rows = super::classes::class_rows(&args.classes, &data, &options)?;
    if let Some(path) = &args.per_context {
        let opt = |x: Option<f64>| x.map(|v| format!("{v:.6}")).unwrap_or_default();
        let rows = per_context.iter().map(|r| {
            vec![
                r.text_id.to_string(),
                r.word_num.to_string(),
                r.system.clone(),
                opt(r.tvd_human),
                opt(r.tvd_oracle),
                format!("{:.6}", r.entropy),
                r.mode.clone(),
                format!("{:.6}", r.mode_prob),
            ]
        });
        let header = [
            "text_id",
            "word_num",
            "system",
            "tvd_human",
            "tvd_oracle",
            "entropy",
            "mode",
            "mode_prob",
        ];
        let csv = crate::data::write_delimited(&header, rows, crate::data::Delimiter::Comma);
        std::fs::write(path, csv).map_err(CliError::io("write", path))?;
    }
    if args.json {
        println!(
            "{}",
            serde_json::json!({"options": options, "rows": rows, "class_rows": class_rows})
        );
    } else {
        print!("{}", crate::analysis::table1::format_table(&rows));
        if !class_rows.is_empty() {
            println!("\nSyntactic and semantic TVD to the full human distribution:");
            print!("{}", crate::analysis::classes::format_rows(&class_rows));
        }
        eprintln!(
            "({resamples} resamples of the oracle split ({oracle_size:?} each), seed {seed}, ECE {ece:?}; {:.1} s)",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
