//! The Analysis page's figures on a small synthetic dataset (tests/fixtures/analysis): every
//! figure draws as SVG with its CSV, and `clozelab figures` writes the same files.

use crate::common;
use clozelab::data::provo::ContextKey;

use clozelab::analysis::dataset::{Dataset, DatasetError};
use clozelab::analysis::figures::{Plot, all, context_bars};
use clozelab::analysis::metrics::EceConvention;
use clozelab::analysis::passage_texts::PassageTexts;
use clozelab::analysis::table1::table1_csv;
use clozelab::analysis::table1::{Table1Options, compute_on};

fn fixture_files() -> Vec<(String, String)> {
    let dir = common::repo_root().join("tests/fixtures/analysis");
    [
        "norms.jsonl",
        "samples_small_model.jsonl",
        "continuations_small_model.jsonl",
    ]
    .iter()
    .map(|f| {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        (f.to_string(), text)
    })
    .collect()
}

#[test]
fn every_figure_draws_with_the_numbers_behind_it() {
    let data = Dataset::from_files(&fixture_files(), &PassageTexts::default(), &[]).unwrap();
    assert_eq!(data.norms.len(), 24);
    let names: Vec<&str> = data.systems.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["samples_small_model", "continuations_small_model"]);
    let options = Table1Options {
        resamples: 3,
        ..Table1Options::default()
    };
    let (rows, per_context) = compute_on(&data, &options).unwrap();
    let figures = all(&rows, &per_context, EceConvention::LastBin);
    let ids: Vec<&str> = figures.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "tvd-density",
            "reliability-original",
            "reliability-human-majority",
            "reliability-oracle-majority",
            "interpretation-mean",
            "interpretation-w1",
            "predictors-samples-small-model",
            "predictors-continuations-small-model",
        ]
    );
    for f in &figures {
        let svg = f.to_svg(900, 520).unwrap();
        let first_words = f
            .title
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            svg.starts_with("<svg") && svg.contains(&first_words),
            "{}",
            f.id
        );
        assert!(f.csv.lines().count() > 1, "{}: {}", f.id, f.csv);
    }
    // The interpretation curve's CSV holds the rows' own numbers.
    let model = rows
        .iter()
        .find(|r| r.system == "samples_small_model")
        .unwrap();
    let curve = model.interpretation_curve.as_ref().unwrap();
    let csv = &figures[4].csv;
    assert!(
        csv.contains(&format!(
            "samples_small_model,0,{:.6},{:.6}",
            curve[0].mean_tvd, curve[0].w1_to_oracle
        )),
        "{csv}"
    );
    // The reliability CSV counts every context of each system once per target.
    let reliability = &figures[1].csv;
    let counted: usize = reliability
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("samples_small_model,"))
        .map(|l| l.split(',').nth(2).unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(counted, model.contexts);
    // Table 1 as CSV: one line per row.
    assert_eq!(table1_csv(&rows).lines().count(), 1 + rows.len());
    // Figure 1 for a context: the humans' words and the system's, top 15 of each.
    let bars = context_bars(&data, ContextKey::new(1, 5), "samples_small_model").unwrap();
    let Plot::Bars { labels, series, .. } = &bars.plot else {
        panic!("bars")
    };
    assert!(labels.len() <= 30 && series.len() == 2);
    let human_total: f64 = series[0].points.iter().map(|p| p.1).sum();
    assert!(human_total > 0.5 && human_total <= 1.0 + 1e-9);
    assert!(context_bars(&data, ContextKey::new(9, 9), "samples_small_model").is_none());
}

#[test]
fn bad_analysis_files_are_refused_with_their_names() {
    let no_norms = vec![("s.jsonl".to_string(), fixture_files()[1].1.clone())];
    assert!(matches!(
        Dataset::from_files(&no_norms, &PassageTexts::default(), &[]),
        Err(DatasetError::NoNorms)
    ));
    let broken = vec![(
        "n.jsonl".to_string(),
        "{\"text_id\": 1, \"human\": {".to_string(),
    )];
    let err = Dataset::from_files(&broken, &PassageTexts::default(), &[])
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("n.jsonl line 1"), "{err}");
    let odd = vec![
        fixture_files()[0].clone(),
        (
            "odd.jsonl".to_string(),
            "{\"text_id\": 1, \"word_num\": 2}\n".to_string(),
        ),
    ];
    let err = Dataset::from_files(&odd, &PassageTexts::default(), &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("odd.jsonl") && err.contains("not a sample file"),
        "{err}"
    );
}

#[test]
fn the_cli_writes_every_figure_as_svg_and_csv() {
    let dir = common::repo_root().join("tests/fixtures/analysis");
    let out = common::repo_root()
        .join("target")
        .join(format!("figures-{}", std::process::id()));
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args(["figures", "--resamples", "3", "--context", "1:5", "--out"])
        .arg(&out)
        .args(["--file", dir.join("norms.jsonl").to_str().unwrap()])
        .args([
            "--file",
            dir.join("samples_small_model.jsonl").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    for name in [
        "table1.csv",
        "tvd-density.svg",
        "tvd-density.csv",
        "reliability-original.svg",
        "interpretation-w1.csv",
        "context-1-5.svg",
    ] {
        assert!(out.join(name).is_file(), "{name}");
    }
    let table = std::fs::read_to_string(out.join("table1.csv")).unwrap();
    assert!(
        table.starts_with("system,contexts,ece_original,"),
        "{table}"
    );
    std::fs::remove_dir_all(&out).ok();
}

/// `--sample-model` (repeated): each model samples every context and is a row of Table 1 of its
/// own, the same on every run with the same seed.
#[test]
fn models_given_to_sample_are_a_row_of_table_1_each() {
    let dir = common::repo_root().join("tests/fixtures/analysis");
    let models = [
        common::test_gpt_neox_model_dir(),
        common::test_llama_model_dir(),
    ];
    let run = |name: &str| {
        let out = common::repo_root()
            .join("target")
            .join(format!("figures-{name}-{}", std::process::id()));
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_clozelab"));
        command
            .args([
                "figures",
                "--resamples",
                "2",
                "--model-samples",
                "8",
                "--out",
            ])
            .arg(&out)
            .args(["--file", dir.join("norms.jsonl").to_str().unwrap()]);
        for model in models {
            command.arg("--sample-model").arg(model);
        }
        let status = command.output().unwrap();
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        let table = std::fs::read_to_string(out.join("table1.csv")).unwrap();
        std::fs::remove_dir_all(&out).ok();
        table
    };
    let table = run("a");
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    for model in models {
        let system = format!("{} (sampled)", model.file_name().unwrap().to_string_lossy());
        let row = rows
            .iter()
            .find(|r| r[0] == system)
            .unwrap_or_else(|| panic!("no row {system} in\n{table}"));
        assert_eq!(row[1], "24", "{system} covers every context");
    }
    assert_eq!(run("b"), table, "the same seed samples the same words");
}
