//! The other shardable batch commands: `samples` (a model's word samples for every context,
//! the system Table 1 reads) and `norming-sim` (its seeds), each run whole and as three parts
//! merged by `clozelab merge` into the same bytes; the merged samples give Table 1 the row
//! `--sample-model` gives; the merged seeds the summary one process prints.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;

fn clozelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: Output) -> String {
    assert!(!out.status.success(), "expected a refusal");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = common::repo_root()
        .join("target")
        .join(format!("sharded-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn norms() -> PathBuf {
    common::repo_root().join("tests/fixtures/analysis/norms.jsonl")
}

/// A Provo folder in `dir` whose norms are the fixture's.
fn provo_dir(dir: &Path) -> PathBuf {
    let provo = dir.join("provo");
    std::fs::create_dir_all(&provo).unwrap();
    std::fs::copy(norms(), provo.join("provo_cloze.jsonl")).unwrap();
    provo
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs `args` whole into `dir/whole` and as three parts into `dir/parts`, merges the parts
/// into `dir/merged`, and checks that every file of the merge is the whole run's.
fn whole_and_merged(dir: &Path, args: &[&str]) {
    let whole = dir.join("whole");
    let parts = dir.join("parts");
    let run = |extra: &[&str]| ok(clozelab(&[args, extra].concat()));
    run(&["--out", s(&whole)]);
    for k in 1..=3 {
        run(&["--shard", &format!("{k}/3"), "--out", s(&parts)]);
    }
    let part_dirs: Vec<PathBuf> = (1..=3)
        .map(|k| parts.join(format!("shard-{k}-of-3")))
        .collect();
    let merged = dir.join("merged");
    let mut merge = vec!["merge"];
    merge.extend(part_dirs.iter().map(|p| s(p)));
    merge.extend(["--out", s(&merged)]);
    ok(clozelab(&merge));
    let mut files: Vec<_> = std::fs::read_dir(&whole)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "a table and its manifest: {files:?}");
    for file in files {
        let a = std::fs::read(whole.join(&file)).unwrap();
        let b = std::fs::read(dir.join("merged").join(&file)).unwrap();
        assert!(a == b, "merged {file:?} differs from one process's");
    }
}

#[test]
fn a_models_samples_in_three_parts_merge_into_one_processs_and_are_table_1s_sampled_row() {
    let dir = scratch("samples");
    let norms = norms();
    let model = common::test_llama_model_dir();
    let args = [
        "samples",
        "--norms",
        s(&norms),
        "--model",
        s(model),
        "--samples",
        "8",
        "--seed",
        "3",
    ];
    whole_and_merged(&dir, &args);
    let name = model.file_name().unwrap().to_string_lossy().into_owned();
    let merged = dir.join("merged").join(format!("{name}.jsonl"));
    let text = std::fs::read_to_string(&merged).unwrap();
    assert_eq!(text.lines().count(), 24, "a line per context");
    // Two passages in three parts: one part holds none, and says so.
    let sizes: Vec<usize> = (1..=3)
        .map(|k| {
            let part = dir.join("parts").join(format!("shard-{k}-of-3"));
            std::fs::read_to_string(part.join(format!("{name}.jsonl")))
                .unwrap()
                .lines()
                .count()
        })
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), 24);
    assert!(sizes.contains(&0) && sizes.contains(&12), "{sizes:?}");

    // Table 1 of the merged file equals Table 1 of the same model sampled in-process.
    let table1 = |extra: &[&str], out: &Path| {
        let mut args = vec![
            "figures",
            "--resamples",
            "2",
            "--seed",
            "3",
            "--file",
            s(&norms),
            "--out",
            s(out),
        ];
        args.extend(extra);
        ok(clozelab(&args));
        std::fs::read_to_string(out.join("table1.csv")).unwrap()
    };
    let from_file = table1(&["--file", s(&merged)], &dir.join("figures-file"));
    let in_process = table1(
        &["--sample-model", s(model), "--model-samples", "8"],
        &dir.join("figures-sampled"),
    );
    let row = |table: &str, system: &str| -> String {
        table
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{system},")).map(str::to_string))
            .unwrap_or_else(|| panic!("no row {system} in\n{table}"))
    };
    assert_eq!(
        row(&from_file, &name),
        row(&in_process, &format!("{name} (sampled)")),
        "the merged samples are the system --sample-model samples"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn norming_seeds_in_three_parts_merge_into_one_processs_and_its_summary() {
    let dir = scratch("norming");
    let provo = provo_dir(&dir);
    let flags = [
        "--provo",
        s(&provo),
        "--width",
        "0.45",
        "--unit",
        "context",
        "--seeds",
        "7",
        "--cap",
        "60",
    ];
    whole_and_merged(&dir, &[&["norming-sim"][..], &flags].concat());
    let merged = dir.join("merged");
    assert_eq!(
        std::fs::read_to_string(merged.join("norming_runs.jsonl"))
            .unwrap()
            .lines()
            .count(),
        7
    );
    for json in [&["--json"][..], &[]] {
        let one_process = ok(clozelab(&[&["norming-sim"][..], &flags, json].concat()));
        let from_merge = ok(clozelab(
            &[&["norming-sim", "--runs", s(&merged)][..], json].concat(),
        ));
        assert_eq!(from_merge, one_process);
    }
    // A part is no whole job; a part must be written; a changed table is named.
    let part = dir.join("parts/shard-2-of-3");
    assert!(
        refused(clozelab(&["norming-sim", "--runs", s(&part)])).contains("merge its parts first")
    );
    let shard = [&["norming-sim", "--shard", "1/3"][..], &flags].concat();
    assert!(refused(clozelab(&shard)).contains("give --out DIR"));
    let runs = merged.join("norming_runs.jsonl");
    let text = std::fs::read_to_string(&runs).unwrap();
    std::fs::write(&runs, text.replacen("\"seed\":6", "\"seed\":7", 1)).unwrap();
    assert!(
        refused(clozelab(&["norming-sim", "--runs", s(&merged)])).contains("truncated or changed")
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn merge_refuses_parts_of_two_commands() {
    let dir = scratch("two-commands");
    let provo = provo_dir(&dir);
    let norming = dir.join("norming");
    ok(clozelab(&[
        "norming-sim",
        "--provo",
        s(&provo),
        "--width",
        "0.45",
        "--seeds",
        "2",
        "--cap",
        "60",
        "--shard",
        "1/2",
        "--out",
        s(&norming),
    ]));
    let samples = dir.join("samples");
    let norms = norms();
    ok(clozelab(&[
        "samples",
        "--norms",
        s(&norms),
        "--model",
        s(common::test_model_dir()),
        "--samples",
        "4",
        "--shard",
        "2/2",
        "--out",
        s(&samples),
    ]));
    let err = refused(clozelab(&[
        "merge",
        s(&norming.join("shard-1-of-2")),
        s(&samples.join("shard-2-of-2")),
        "--out",
        s(&dir.join("merged")),
    ]));
    assert!(err.contains("commands differ"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
