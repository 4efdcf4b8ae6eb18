//! The simulation's seeds' runs as a table (`norming_runs.jsonl`, one JSON line per seed, in
//! seed order), so that a sharded `norming-sim` can run its seeds on many machines and
//! summarise them after the merge exactly as one process does: each number is written in the
//! shortest form that reads back to the same `f64`.

use super::simulation::SeedRun;
use crate::data::DataError;
use crate::data::rows::read_rows;

/// One seed's run, as a line of the table.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeedLine {
    pub seed: u64,
    #[serde(flatten)]
    pub run: SeedRun,
}

/// The table's text: a line per seed.
pub fn seed_runs_jsonl(lines: &[SeedLine]) -> String {
    lines
        .iter()
        .map(|l| serde_json::to_string(l).expect("plain fields") + "\n")
        .collect()
}

/// The table read back; `file` names it in errors. The seeds must run 0, 1, … without a gap
/// or a repeat, as a whole job's do.
///
/// ```
/// use clozelab::analysis::norming::seed_runs::{parse_seed_runs, seed_runs_jsonl};
/// let line = r#"{"seed":0,"fixed":{"readings":40,"interval_coverage":0.95,"claim_holds":true},"model_planned":{"readings":30,"interval_coverage":0.9,"claim_holds":false},"adaptive":{"readings":25,"interval_coverage":0.93,"claim_holds":true}}"#;
/// let runs = parse_seed_runs("runs.jsonl", &format!("{line}\n")).unwrap();
/// assert_eq!(seed_runs_jsonl(&runs), format!("{line}\n"));
/// assert!(parse_seed_runs("runs.jsonl", &line.replace("\"seed\":0", "\"seed\":1")).is_err());
/// ```
pub fn parse_seed_runs(file: &str, text: &str) -> Result<Vec<SeedLine>, DataError> {
    let rows = read_rows::<SeedLine>(file, text)?;
    for (i, (line, row)) in rows.iter().enumerate() {
        if row.seed != i as u64 {
            return Err(DataError::At {
                file: file.into(),
                line: *line,
                column: 1,
                message: format!(
                    "seed {} where seed {i} belongs: not one job's seeds in order",
                    row.seed
                ),
            });
        }
    }
    Ok(rows.into_iter().map(|(_, row)| row).collect())
}
