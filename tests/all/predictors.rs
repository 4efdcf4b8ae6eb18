//! `clozelab predictors` and `clozelab merge`: every word of a corpus under two models, as one
//! process and as three shards merged (byte for byte the same), each word equal to `clozelab
//! surprisal` of its text with the item's seed; merges of parts that are not one job's whole
//! set refused with the reason; a killed shard rerun writes the same part; a Slurm array
//! task's environment picks its shard.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::common;

fn clozelab(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_clozelab"));
    command.args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: &Output) -> String {
    assert!(!out.status.success(), "expected a refusal");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Seven items, one given twice (a norms file repeats its passage), odd characters among them.
const CORPUS: &str = "item\ttext\n\
p1\tThe dog barked at the mailman every single morning.\n\
p2\t\"She said \"\"no\"\" and left.\"\n\
p3\tA naïve café owner served crème brûlée to the guests.\n\
p1\tThe dog barked at the mailman every single morning.\n\
p4\tRain fell.\n\
p5\tIn the beginning, the committee met twice a week to discuss the plans for the new library.\n\
p6\tWhy?\n\
p7\tThe children ran to the river, laughing and shouting as the sun set behind the hills.\n";

/// Continuations per word for its entropy: enough to give every word a value.
pub(crate) const SAMPLES: &str = "8";

pub(crate) struct Job {
    root: PathBuf,
    pub(crate) corpus: PathBuf,
}

impl Job {
    /// `clozelab predictors` of this corpus under both test models, [`SAMPLES`] samples, seed 5 unless
    /// `extra` names another.
    fn args(&self, extra: &[&str]) -> Vec<String> {
        let mut args = vec![
            "predictors".to_string(),
            "--corpus".to_string(),
            self.corpus.display().to_string(),
        ];
        for model in [common::test_model_dir(), common::test_llama_model_dir()] {
            args.extend(["--model".to_string(), model.display().to_string()]);
        }
        args.extend(["--samples", SAMPLES].map(String::from));
        if !extra.contains(&"--seed") {
            args.extend(["--seed", "5"].map(String::from));
        }
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    }

    fn predictors(&self, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let args = self.args(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        clozelab(&args, env)
    }

    pub(crate) fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

/// `--model` of both test models, for a shell script.
pub(crate) fn model_flags() -> String {
    format!(
        "--model {} --model {}",
        common::test_model_dir().display(),
        common::test_llama_model_dir().display()
    )
}

/// The job run once whole and once as three shards (written once per test process).
pub(crate) fn job() -> &'static Job {
    static JOB: OnceLock<Job> = OnceLock::new();
    JOB.get_or_init(|| {
        let root = common::repo_root()
            .join("target")
            .join(format!("predictors-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let corpus = root.join("corpus.tsv");
        std::fs::write(&corpus, CORPUS).unwrap();
        let job = Job { root, corpus };
        // The whole job with its items on three threads at once, the parts on one thread (the
        // test command's): the merge's byte identity covers the threaded driver too.
        ok(&job.predictors(
            &["--out", job.dir("whole").to_str().unwrap()],
            &[("RAYON_NUM_THREADS", "3")],
        ));
        for k in 1..=3 {
            let shard = format!("{k}/3");
            let out = job.dir("sharded");
            ok(&job.predictors(&["--shard", &shard, "--out", out.to_str().unwrap()], &[]));
        }
        job
    })
}

fn part(job: &Job, k: usize) -> PathBuf {
    job.dir("sharded").join(format!("shard-{k}-of-3"))
}

fn merge(parts: &[&Path], out: &Path) -> Output {
    let mut args = vec!["merge".to_string()];
    args.extend(parts.iter().map(|p| p.display().to_string()));
    args.extend(["--out".to_string(), out.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    clozelab(&args, &[])
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn three_shards_merge_into_one_processs_table_byte_for_byte() {
    let job = job();
    let whole = job.dir("whole");
    let merged = job.dir("merged");
    let parts: Vec<PathBuf> = (1..=3).map(|k| part(job, k)).collect();
    let parts: Vec<&Path> = parts.iter().map(PathBuf::as_path).collect();
    ok(&merge(&parts, &merged));
    for file in ["predictors.csv", "manifest.json"] {
        assert!(
            read(&whole.join(file)) == read(&merged.join(file)),
            "merged {file} differs from one process's"
        );
    }
    let table = String::from_utf8(read(&whole.join("predictors.csv"))).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let words: usize = CORPUS
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once('\t'))
        .filter(|(id, _)| seen.insert(*id))
        .map(|(_, text)| text.split_whitespace().count())
        .sum();
    assert_eq!(
        table.lines().count() - 1,
        2 * words,
        "a row per word and model"
    );
    // Every shard holds items, and the parts' sizes are balanced by tokens.
    for p in &parts {
        let rows = std::fs::read_to_string(p.join("predictors.csv"))
            .unwrap()
            .lines()
            .count();
        assert!(rows > 1, "{} is empty", p.display());
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&read(&whole.join("manifest.json"))).unwrap();
    assert_eq!(manifest["corpus"]["items"], 7);
    assert_eq!(manifest["shard"]["count"], 1);
    assert_eq!(manifest["models"].as_array().unwrap().len(), 2);
    assert_eq!(
        manifest["models"][0]["weights_sha256"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
}

#[test]
fn every_row_equals_clozelab_surprisal_of_its_text_with_the_items_seed() {
    let job = job();
    let table = std::fs::read_to_string(job.dir("whole").join("predictors.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(table.as_bytes());
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let model_name = common::test_model_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mut compared = 0;
    for (item, text) in [
        (
            "p3",
            "A naïve café owner served crème brûlée to the guests.",
        ),
        ("p2", "She said \"no\" and left."),
        ("p6", "Why?"),
    ] {
        let ours: Vec<&csv::StringRecord> = rows
            .iter()
            .filter(|r| &r[column("item")] == item && r[column("model")] == model_name)
            .collect();
        let seed = &ours[0][column("seed")];
        let out = clozelab(
            &[
                "surprisal",
                "--model",
                common::test_model_dir().to_str().unwrap(),
                "--text",
                text,
                "--samples",
                SAMPLES,
                "--seed",
                seed,
                "--json",
            ],
            &[],
        );
        let lines: Vec<serde_json::Value> = ok(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), ours.len(), "{item}");
        for (theirs, row) in lines.iter().zip(&ours) {
            assert_eq!(theirs["word"], row[column("word")]);
            for field in [
                "surprisal_bits",
                "surprisal_all_segmentations_bits",
                "entropy_bits",
                "entropy_standard_error_bits",
            ] {
                let cell = &row[column(field)];
                let table_value: Option<f64> = (!cell.is_empty()).then(|| cell.parse().unwrap());
                assert_eq!(
                    theirs[field].as_f64(),
                    table_value,
                    "{item} {field} {:?}",
                    theirs["word"]
                );
            }
            let ids: Vec<u64> = row[column("token_ids")]
                .split(' ')
                .map(|t| t.parse().unwrap())
                .collect();
            let theirs_ids: Vec<u64> = theirs["token_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            assert_eq!(ids, theirs_ids);
            compared += 1;
        }
    }
    assert!(compared >= 15, "{compared} words compared");
}

#[test]
fn merges_of_anything_but_one_jobs_whole_set_are_refused_saying_why() {
    let job = job();
    let (p1, p2, p3) = (part(job, 1), part(job, 2), part(job, 3));
    let out = job.dir("refused");
    let says = |parts: &[&Path], what: &str| {
        let err = refused(&merge(parts, &out));
        assert!(err.contains(what), "{what:?} not in: {err}");
        assert!(
            !out.join("predictors.csv").exists(),
            "a refused merge wrote"
        );
    };
    says(&[&p1, &p2], "shard 3/3 is missing");
    says(&[&p1, &p2, &p2, &p3], "given twice");
    // A part cut short: its table no longer the one its manifest vouches for.
    let cut = job.dir("cut");
    std::fs::create_dir_all(&cut).unwrap();
    let table = read(&p2.join("predictors.csv"));
    std::fs::write(cut.join("predictors.csv"), &table[..table.len() - 40]).unwrap();
    std::fs::copy(p2.join("manifest.json"), cut.join("manifest.json")).unwrap();
    says(&[&p1, &cut, &p3], "truncated or changed");
    // A part that never finished has no manifest.
    std::fs::remove_file(cut.join("manifest.json")).unwrap();
    says(&[&p1, &cut, &p3], "did not finish");
    // Another seed, another shard count, another corpus: another job.
    let other = job.dir("other-seed");
    ok(&job.predictors(
        &[
            "--shard",
            "2/3",
            "--seed",
            "6",
            "--out",
            other.to_str().unwrap(),
        ],
        &[],
    ));
    says(&[&p1, &other.join("shard-2-of-3"), &p3], "options");
    let halves = job.dir("halves");
    ok(&job.predictors(&["--shard", "2/2", "--out", halves.to_str().unwrap()], &[]));
    says(&[&p1, &halves.join("shard-2-of-2"), &p3], "shard counts");
    let corpus = job.dir("corpus-b.tsv");
    std::fs::write(&corpus, CORPUS.replace("Rain fell.", "Snow fell.")).unwrap();
    let other_corpus = job.dir("other-corpus");
    let job_b = Job {
        root: job.root.clone(),
        corpus,
    };
    ok(&job_b.predictors(
        &["--shard", "3/3", "--out", other_corpus.to_str().unwrap()],
        &[],
    ));
    says(
        &[&p1, &p2, &other_corpus.join("shard-3-of-3")],
        "inputs differ",
    );
}

#[test]
fn a_killed_shard_run_again_and_a_slurm_task_write_the_same_part() {
    let job = job();
    let rerun = job.dir("rerun");
    let mut child = Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args(job.args(&["--shard", "2/3", "--out", rerun.to_str().unwrap()]))
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    child.kill().unwrap();
    child.wait().unwrap();
    let written = rerun.join("shard-2-of-3");
    // Killed mid-run: no manifest vouches for a half-written table.
    if written.join("manifest.json").exists() {
        assert_eq!(
            read(&written.join("predictors.csv")),
            read(&part(job, 2).join("predictors.csv"))
        );
    }
    ok(&job.predictors(&["--shard", "2/3", "--out", rerun.to_str().unwrap()], &[]));
    let slurm = job.dir("slurm");
    ok(&job.predictors(
        &["--out", slurm.to_str().unwrap()],
        &[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ],
    ));
    for dir in [&written, &slurm.join("shard-2-of-3")] {
        for file in ["predictors.csv", "manifest.json"] {
            assert!(
                read(&dir.join(file)) == read(&part(job, 2).join(file)),
                "{} differs from the part's first run",
                dir.join(file).display()
            );
        }
    }
}

#[test]
fn bad_corpora_models_and_shards_get_clear_errors() {
    let job = job();
    let bad = job.dir("bad.csv");
    std::fs::write(&bad, "name,text\na,x\n").unwrap();
    let out = job.dir("bad-out");
    let run = |corpus: &Path, model: &str, extra: &[&str]| {
        let mut args = vec![
            "predictors",
            "--corpus",
            corpus.to_str().unwrap(),
            "--model",
            model,
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        refused(&clozelab(&args, &[]))
    };
    let model = common::test_model_dir().to_str().unwrap();
    assert!(run(&bad, model, &[]).contains("missing column"));
    assert!(run(&job.corpus, "no/such-model@step1", &[]).contains("huggingface-cli download"));
    assert!(run(&job.corpus, model, &["--shard", "4/3"]).contains("K/N"));
    let twice = run(&job.corpus, model, &["--model", model]);
    assert!(twice.contains("two models are named"), "{twice}");
    std::fs::write(&bad, [0xff, 0xfe, b'\n']).unwrap();
    assert!(run(&bad, model, &[]).contains("not UTF-8"));
    assert!(!out.exists(), "a refused run wrote");
}
