//! The sharded predictors job on a real Slurm (scripts/slurm_cluster.sh: Debian's slurmctld,
//! slurmd and munge as a single-node cluster): a 3-task job array and a merge job that waits
//! on it (`--dependency=afterok`). One task fails on purpose the first time, so the merge never
//! runs; that task is resubmitted alone, and a second merge then writes exactly what one
//! process writes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::predictors::{SAMPLES, job, model_flags};

struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn start(dir: PathBuf) -> Self {
        let out = Command::new("bash")
            .arg(crate::common::repo_root().join("scripts/slurm_cluster.sh"))
            .args(["start", dir.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the Slurm cluster did not start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Cluster { dir }
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("SLURM_CONF", self.dir.join("slurm.conf"));
        command
    }

    /// Submits `script` with `args` and gives the job's id.
    fn sbatch(&self, args: &[&str], script: &Path) -> String {
        let out = self
            .command("sbatch")
            .arg("--parsable")
            .args(args)
            .arg(script)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "sbatch: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Waits until nothing is queued or running.
    fn wait_idle(&self) {
        let start = Instant::now();
        loop {
            let out = self.command("squeue").arg("-h").output().unwrap();
            if out.status.success() && out.stdout.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(300),
                "jobs still queued after 300 s: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `scontrol show job`'s JobState of a finished job (kept in memory for MinJobAge).
    fn state(&self, id: &str) -> String {
        let out = self
            .command("scontrol")
            .args(["show", "job", id])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace()
            .filter(|f| f.starts_with("JobState=") || f.starts_with("Reason="))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(crate::common::repo_root().join("scripts/slurm_cluster.sh"))
            .args(["stop", self.dir.to_str().unwrap()])
            .status();
    }
}

/// Whether to run: always when the test command asks (CLOZELAB_REQUIRE_SLURM=1, where the
/// cluster script installs Slurm), else where Slurm is installed.
fn slurm_wanted() -> bool {
    let required = std::env::var("CLOZELAB_REQUIRE_SLURM").as_deref() == Ok("1");
    let installed = Command::new("sbatch").arg("--version").output().is_ok();
    if !required && !installed {
        eprintln!("SKIPPED: no Slurm here (the test command installs it)");
    }
    required || installed
}

#[test]
fn a_job_array_and_its_dependent_merge_on_slurm_equal_one_process_after_a_failed_task() {
    if !slurm_wanted() {
        return;
    }
    let job = job();
    let dir = job.dir("slurm-job");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cluster = Cluster::start(job.dir("slurm-cluster"));
    let d = dir.display();
    let bin = env!("CARGO_BIN_EXE_clozelab");
    let array = dir.join("array.sh");
    std::fs::write(
        &array,
        format!(
            "#!/bin/bash\n\
             #SBATCH --array=1-3\n\
             #SBATCH --output={d}/task-%A-%a.out\n\
             # The planted failure: task 2 fails the first time it runs.\n\
             if [ \"$SLURM_ARRAY_TASK_ID\" = 2 ] && [ ! -e {d}/failed-once ]; then\n\
             touch {d}/failed-once; echo 'planted failure' >&2; exit 1\n\
             fi\n\
             exec {bin} predictors --corpus {} {} --samples {SAMPLES} --seed 5 --shards 3 --out {d}/parts\n",
            job.corpus.display(),
            model_flags()
        ),
    )
    .unwrap();
    let merge = dir.join("merge.sh");
    std::fs::write(
        &merge,
        format!(
            "#!/bin/bash\n\
             #SBATCH --output={d}/merge-%j.out\n\
             exec {bin} merge {d}/parts/shard-1-of-3 {d}/parts/shard-2-of-3 {d}/parts/shard-3-of-3 --out {d}/merged\n"
        ),
    )
    .unwrap();

    let tasks = cluster.sbatch(&[], &array);
    let after = format!("--dependency=afterok:{tasks}");
    let first_merge = cluster.sbatch(&[&after, "--kill-on-invalid-dep=yes"], &merge);
    cluster.wait_idle();
    assert!(
        !dir.join("merged").exists(),
        "the merge ran though a task failed"
    );
    let state = cluster.state(&first_merge);
    assert!(
        state.contains("DependencyNeverSatisfied") || state.contains("CANCELLED"),
        "the first merge: {state}"
    );
    for k in [1, 3] {
        assert!(
            dir.join(format!("parts/shard-{k}-of-3/manifest.json"))
                .exists()
        );
    }
    assert!(!dir.join("parts/shard-2-of-3").exists());

    let again = cluster.sbatch(&["--array=2"], &array);
    let second_merge = cluster.sbatch(&[&format!("--dependency=afterok:{again}")], &merge);
    cluster.wait_idle();
    assert!(
        cluster.state(&second_merge).contains("COMPLETED"),
        "the second merge: {}",
        cluster.state(&second_merge)
    );
    for file in ["predictors.csv", "manifest.json"] {
        let merged = std::fs::read(dir.join("merged").join(file)).unwrap();
        let whole = std::fs::read(job.dir("whole").join(file)).unwrap();
        assert!(
            merged == whole,
            "Slurm's merged {file} differs from one process's"
        );
    }
}
