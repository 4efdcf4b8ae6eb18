//! `clozelab bench host`: what the host pays for each GPU dispatch. A GPT-2 of 12 blocks and
//! tiny width (its arithmetic negligible beside the host's work) decodes at batch 1 on wgpu, as
//! the game's feedback and the speed check do (logits read back every step). Each step's kernels
//! are counted by name through cubecl's launch observer, and each thread's CPU time from
//! Linux's `schedstat`, so that the calling thread (burn's graph: the ops and their launches),
//! cubecl's device service (which compiles, records and submits the kernels) and the rest (the
//! driver's threads, which on lavapipe also run the shaders) each have their own figure. Beside it,
//! transformers decodes the same weights eagerly in the same run (a CPU here; CUDA with
//! `CLOZELAB_HF_DEVICE=cuda`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cubecl::logging::{LaunchObservation, LaunchObserver};

use serde::Serialize;

use super::args::BenchHostArgs;
use super::forward::{Workload, python_baseline};
use super::{baseline_folder, median, model_on, write_report};
use crate::cli::error::CliError;
use crate::estimators::progress::FnMonitor;
use crate::model::replayed_steps::WARM_PASSES;
use crate::model::testmodel::{generate_weights, test_config, to_safetensors};
use crate::runtime::backend::BackendKind;
use crate::runtime::decode_steps::{
    DecodeStepsSetup, prefilled, time_decode_steps, time_replays, time_steps,
};

/// Counts the kernels launched, by name, as cubecl tells a launch observer: on the calling
/// thread, before the kernel is submitted, with nothing formatted or logged (its profiling log
/// would format each kernel's id on the device service and write it from a thread of its own,
/// work the product does not do).
#[derive(Default)]
struct KernelCounter(Mutex<BTreeMap<&'static str, u64>>);

impl LaunchObserver for KernelCounter {
    fn launched(&self, kernel: &'static str) {
        if let Ok(mut counts) = self.0.lock() {
            *counts.entry(kernel).or_default() += 1;
        }
    }
}

impl KernelCounter {
    fn counts(&self) -> BTreeMap<&'static str, u64> {
        self.0.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

/// A kernel's name as cubecl's profiling log shortens it.
fn kernel_label(name: &str) -> String {
    use cubecl::config::{TypeNameFormatLevel, type_name_format};
    type_name_format(name, TypeNameFormatLevel::Short)
}

/// Who a thread is, by its id and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadRole {
    /// The thread that runs the decode loop: burn's graph and the kernels' launch calls, which
    /// natively hand each task to the device service (spinning while its queue is full).
    Calling,
    /// cubecl's device service (`DS…`): compiles, records and submits the kernels.
    DeviceService,
    /// Every other thread: the driver's (on lavapipe, unnamed threads that also run the
    /// shaders), wgpu's poll thread, the allocator's.
    Other,
}

impl ThreadRole {
    fn of(tid: u32, pid: u32, name: &str) -> Self {
        if tid == pid {
            Self::Calling
        } else if name.starts_with("DS") {
            Self::DeviceService
        } else {
            Self::Other
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Calling => "calling thread",
            Self::DeviceService => "device service",
            Self::Other => "other threads",
        }
    }
}

/// CPU nanoseconds each of this process's threads has run (Linux's `schedstat`), by role.
fn cpu_by_role() -> Vec<(ThreadRole, u64)> {
    let pid = std::process::id();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| {
            let task = task.ok()?;
            let tid: u32 = task.file_name().to_str()?.parse().ok()?;
            let ns = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            let ns: u64 = ns.split_whitespace().next()?.parse().ok()?;
            let name = std::fs::read_to_string(task.path().join("comm")).ok()?;
            Some((ThreadRole::of(tid, pid, name.trim()), ns))
        })
        .collect()
}

/// The CPU time each role used between two [`cpu_by_role`] readings, in ns.
fn used(before: &[(ThreadRole, u64)], after: &[(ThreadRole, u64)]) -> Vec<(ThreadRole, u64)> {
    let total = |readings: &[(ThreadRole, u64)], role| {
        readings
            .iter()
            .filter(|(r, _)| *r == role)
            .map(|(_, ns)| ns)
            .sum::<u64>()
    };
    [
        ThreadRole::Calling,
        ThreadRole::DeviceService,
        ThreadRole::Other,
    ]
    .into_iter()
    .map(|role| (role, total(after, role).saturating_sub(total(before, role))))
    .collect()
}

/// One decode step's host cost on wgpu.
#[derive(Debug, Serialize)]
pub struct HostFigures {
    pub system: String,
    /// Median wall time of a decode step (its most likely token read back), ms.
    pub step_ms: f64,
    /// Kernels launched per decode step.
    pub dispatches_per_step: f64,
    /// The same, by kernel.
    pub kernels_per_step: BTreeMap<String, f64>,
    /// Wall time per dispatch, µs: the step's median over its dispatches.
    pub wall_us_per_dispatch: f64,
    /// CPU time per dispatch, µs, by the threads' role.
    pub cpu_us_per_dispatch: Vec<(ThreadRole, f64)>,
}

/// The timed round of [`measure`].
struct Timed {
    /// Each step's wall time, ms.
    step_ms: Vec<f64>,
    /// Kernels dispatched over all steps, by name: those launched, and for replayed steps the
    /// recorded step's for every replay.
    launched: BTreeMap<&'static str, f64>,
    /// CPU ns over all steps, by role.
    cpu: Vec<(ThreadRole, u64)>,
    /// Each step's most likely token.
    tokens: Vec<u32>,
}

/// Launches counted since `before`, by name.
fn launched_since(
    kernels: &KernelCounter,
    before: &BTreeMap<&'static str, u64>,
) -> BTreeMap<&'static str, f64> {
    kernels
        .counts()
        .into_iter()
        .map(|(name, n)| {
            let since = n - before.get(name).copied().unwrap_or(0);
            (name, since as f64)
        })
        .filter(|(_, n)| *n > 0.0)
        .collect()
}

/// Decodes `steps` tokens at batch 1 after a 16-token prefill, twice (the first round untimed:
/// shaders compile and autotune picks kernels on first use); the second round's steps alone
/// are counted and timed ([`prefilled`], then [`time_steps`]; or, `replayed`, the step recorded
/// and then [`time_replays`], a replay counting the kernels of one of the recording's passes,
/// which are alike).
fn measure(
    model: &crate::model::Transformer,
    steps: usize,
    replayed: bool,
    kernels: &KernelCounter,
) -> Result<Timed, CliError> {
    let mut setup = DecodeStepsSetup::new(16, steps)
        .map_err(|e| CliError::Bench(format!("bench host: {e}")))?;
    if replayed {
        setup = setup.replayed();
    }
    let started = Instant::now();
    let clock = FnMonitor {
        clock: || started.elapsed().as_secs_f64(),
        on_progress: |_: &_| true,
    };
    pollster::block_on(time_decode_steps(model, setup, &clock))?;
    let mut cache = pollster::block_on(prefilled(model, setup))?;
    if !replayed {
        let (kernels_before, cpu_before) = (kernels.counts(), cpu_by_role());
        let report = pollster::block_on(time_steps(model, &mut cache, steps, &clock))?;
        let cpu = used(&cpu_before, &cpu_by_role());
        return Ok(Timed {
            step_ms: report.step_ms,
            launched: launched_since(kernels, &kernels_before),
            cpu,
            tokens: report.tokens,
        });
    }
    let before_recording = kernels.counts();
    let mut recorded = pollster::block_on(model.replayed_steps(cache))?;
    if let Some(reason) = recorded.eager_reason() {
        return Err(CliError::Bench(format!(
            "the step was not recorded: {reason:?}"
        )));
    }
    let pass = launched_since(kernels, &before_recording);
    let (kernels_before, cpu_before) = (kernels.counts(), cpu_by_role());
    let report = pollster::block_on(time_replays(&mut recorded, steps, &clock))?;
    let cpu = used(&cpu_before, &cpu_by_role());
    let mut launched = launched_since(kernels, &kernels_before);
    for (name, n) in pass {
        *launched.entry(name).or_default() += n / (WARM_PASSES + 1) as f64 * steps as f64;
    }
    Ok(Timed {
        step_ms: report.step_ms,
        launched,
        cpu,
        tokens: report.tokens,
    })
}

/// A round's figures per step and per dispatch.
fn figures(system: String, timed: Timed, steps: usize) -> Result<HostFigures, CliError> {
    let Timed {
        step_ms,
        launched,
        cpu,
        ..
    } = timed;
    let kernels_per_step: BTreeMap<String, f64> = launched
        .iter()
        .map(|(name, n)| (kernel_label(name), n / steps as f64))
        .collect();
    let launched: f64 = launched.values().sum();
    if launched == 0.0 {
        return Err(CliError::Bench(
            "cubecl's launch observer saw no kernel".into(),
        ));
    }
    let step = median(step_ms);
    let per_step = launched / steps as f64;
    Ok(HostFigures {
        system,
        step_ms: step,
        dispatches_per_step: per_step,
        kernels_per_step,
        wall_us_per_dispatch: step * 1e3 / per_step,
        cpu_us_per_dispatch: cpu
            .into_iter()
            .map(|(role, ns)| (role, ns as f64 / 1e3 / launched))
            .collect(),
    })
}

/// Prints a round's figures, `ratio` after its step time.
fn print_figures(figures: &HostFigures, ratio: &str) {
    println!(
        "{}: {:.2} ms a step{ratio}, {:.0} dispatches a step, {:.1} µs of wall time each",
        figures.system, figures.step_ms, figures.dispatches_per_step, figures.wall_us_per_dispatch
    );
    let cpu: Vec<String> = figures
        .cpu_us_per_dispatch
        .iter()
        .map(|(role, us)| format!("{} {us:.1}", role.label()))
        .collect();
    println!("  CPU µs per dispatch: {}", cpu.join(", "));
    let kernels: Vec<String> = figures
        .kernels_per_step
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    println!("  kernels a step: {}", kernels.join(", "));
}

pub fn host(args: &BenchHostArgs) -> Result<(), CliError> {
    let kernels = Arc::new(KernelCounter::default());
    let _observing = LaunchObservation::new(kernels.clone());
    let config = test_config(args.layers, args.dim, args.heads);
    eprintln!(
        "generating a {}-block GPT-2 of width {} ({:.1}M random parameters)…",
        args.layers,
        args.dim,
        config.num_params() as f64 / 1e6
    );
    let weights = to_safetensors(&generate_weights(&config, 1))?;
    let Some((model, adapter)) = model_on(BackendKind::Wgpu, &config, &weights)? else {
        return Err(CliError::Bench("bench host needs wgpu".into()));
    };
    eprintln!(
        "decoding {} steps on {adapter}, twice, then replaying a recorded step as often…",
        args.steps
    );
    let system = format!("burn wgpu ({adapter})");
    let one_by_one = measure(&model, args.steps, false, &kernels)?;
    let replays = measure(&model, args.steps, true, &kernels)?;
    // The same steps after the same prefill: a replay that read stale inputs or a stale cache
    // would pick other tokens.
    if replays.tokens != one_by_one.tokens {
        return Err(CliError::Bench(format!(
            "the replayed steps' tokens {:?} are not those of the steps run one by one {:?}",
            replays.tokens, one_by_one.tokens
        )));
    }
    let eager = figures(system.clone(), one_by_one, args.steps)?;
    let replayed = figures(format!("{system}, replayed"), replays, args.steps)?;
    let mut baseline = None;
    if !args.no_python {
        let dir = baseline_folder("host", &config, &weights)?;
        eprintln!("measuring Hugging Face transformers (torch, eager) on the same weights…");
        let w = Workload {
            prefill: 16,
            decode_steps_batch1: args.steps,
            // Unused here, but the baseline script decodes them too: one step each.
            batches: [64, 256],
            decode_steps_batched: 1,
            repeats: 1,
        };
        match python_baseline(&dir, w) {
            Ok(f) => baseline = Some(f),
            Err(e) => eprintln!("no transformers baseline: {e}"),
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    println!(
        "host cost of a decode step at batch 1 ({} blocks of width {} in {} heads, random GPT-2 \
         weights; median of {} steps)",
        args.layers, args.dim, args.heads, args.steps
    );
    for figures in [&eager, &replayed] {
        let ratio = baseline
            .as_ref()
            .map(|b| {
                format!(
                    " ({:.2}×)",
                    (1e3 / b.decode_batch1_tokens_per_s) / figures.step_ms
                )
            })
            .unwrap_or_default();
        print_figures(figures, &ratio);
    }
    if let Some(b) = &baseline {
        println!(
            "{}: {:.2} ms a step (ratio: its step over clozelab's, measured in this run)",
            b.system,
            1e3 / b.decode_batch1_tokens_per_s
        );
    }
    let json = serde_json::json!({
        "config": {"layers": args.layers, "dim": args.dim, "heads": args.heads, "steps": args.steps},
        "result": eager,
        "replayed": replayed,
        "baseline": baseline,
    });
    write_report(&args.out, &json)?;
    eprintln!("wrote {}", args.out.display());
    Ok(())
}
