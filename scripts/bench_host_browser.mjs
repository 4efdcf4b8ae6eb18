// The host-cost benchmark in the browser's engine: what the page's side pays for each WebGPU
// dispatch of a decode step, beside `clozelab bench host` (native wgpu). The worker's own wasm
// (burn with fusion, WebGPU) runs in a headless Chromium page, fed the worker's requests
// directly (as scripts/dawn_worker.mjs does under Node.js), on a GPT-2 of 12 blocks of width 64
// whose arithmetic is negligible: a decode step at batch 1, its most likely token read back
// (`DecodeSteps`). WebGPU's methods are wrapped to count what each step calls (dispatches,
// submissions, bind groups, buffers…); the page's thread, which records and submits, is
// profiled through the DevTools protocol (its busy time: every sample but "(idle)"); the GPU
// process's CPU time (which validates, encodes and, on SwiftShader, also runs the shaders) is
// read from /proc. Each figure per step is the difference between a run of S steps and a run of
// 1 (both after a prefill and an untimed run), over S − 1 steps. Each build runs its steps one by
// one and replayed from one recording (`--modes`: eager, replayed or both), whose recording
// the difference leaves out.
//
// Usage: node scripts/bench_host_browser.mjs [--dists DIR,DIR… [--rounds N]] [--steps S]
//          [--modes eager,replayed] [--out FILE.json]
// Needs a built app (CLOZELAB_DIST, default dist/; a release build for figures), the CLI (to
// write the model: CLOZELAB_BIN) and Chromium. Here WebGPU is SwiftShader (the CPU): the step's
// wall time is not a GPU's, but the page's thread does the same work as on any GPU.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { serveDist, cliBinary, directWorker, DIST, ROOT } from "../tests/e2e/harness.mjs";
import { countWebGpuCalls, callsBetween, dispatchesOf, describeCalls } from "./webgpu_calls.mjs";

const { values: args } = parseArgs({
  options: {
    dists: { type: "string" },
    rounds: { type: "string", default: "1" },
    steps: { type: "string", default: "100" },
    heads: { type: "string", default: "1" },
    modes: { type: "string", default: "eager,replayed" },
    out: { type: "string" },
  },
});
const modes = args.modes.split(",");
if (!modes.every((m) => ["eager", "replayed"].includes(m))) throw new Error("--modes: eager, replayed or both");
const builds = args.dists ? args.dists.split(",").map((d) => resolve(ROOT, d)) : [DIST];
const dists = builds.flatMap((dist) => modes.map((mode) => ({ dist, replayed: mode === "replayed",
  label: `${dist} (${mode})` })));
const rounds = Number(args.rounds);
const steps = Number(args.steps);
if (!(rounds >= 1) || !(steps >= 2)) throw new Error("--rounds is at least 1 and --steps at least 2");

// The model `clozelab bench host` generates (its seed 1; by default one head, 64 wide as
// GPT-2's: `--heads` as bench host's), written once.
const heads = Number(args.heads);
if (!(heads >= 1) || 64 % heads !== 0) throw new Error("--heads divides the width, 64");
const MODEL = join(homedir(), ".cache", "clozelab", heads === 1 ? "host-bench-model" : `host-bench-model-${heads}-heads`);
if (!existsSync(join(MODEL, "model.safetensors"))) {
  execFileSync(cliBinary(), ["make-test-model", "--out", MODEL, "--layers", "12", "--dim", "64", "--heads", String(heads),
    "--seed", "1"], { stdio: "inherit" });
}

// CPU seconds (user + system) of Chromium's processes of a kind (`--type=gpu-process`,
// `--type=renderer`), from /proc.
function cpuOf(type) {
  let ticks = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`--type=${type}`)) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch { /* gone meanwhile */ }
  }
  return ticks / 100; // USER_HZ
}

// The page's thread's busy time in a CPU profile (every sample but "(idle)"), ms, summed by
// `keyOf(functionName)`, most first.
function selfTime(profile, keyOf) {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n.callFrame.functionName || "(anonymous)"]));
  const total = new Map();
  profile.samples.forEach((node, i) => {
    const name = byNode.get(node);
    if (name === "(idle)") return;
    const key = keyOf(name);
    total.set(key, (total.get(key) ?? 0) + profile.timeDeltas[i] / 1000);
  });
  return [...total].sort((a, b) => b[1] - a[1]);
}

const busyMs = (profile) => selfTime(profile, () => "busy")[0]?.[1] ?? 0;

// The functions the page's thread spent its busy time in (self time, ms), most first.
const topFunctions = (profile, count = 8) => selfTime(profile, (name) => name).slice(0, count);

// The same time by the crate a wasm function belongs to (its name's first path segment, or the
// type's in `<A as B>::f`), and "browser" for JS, WebGPU's bindings and the engine's own entries
// ("(program)", "(garbage collector)"), ms.
function byCrate(profile) {
  const crateOf = (name) => name.match(/^<?([a-z_][a-z0-9_]*)(\[[0-9a-f]+\])?::/)?.[1] ?? "browser";
  return selfTime(profile, crateOf).slice(0, 8);
}

async function measure(browser, { dist, replayed }) {
  const server = await serveDist(dist);
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error(`pageerror: ${e.message}\n${e.stack}`));
  page.on("console", (m) => {
    // The model's loader asks for tokenizer files the folder may not have (404s).
    if (m.type() === "error" && !m.text().includes("404")) console.error(`console: ${m.text()}`);
  });
  const link = join(dist, "models", "host-bench");
  if (!existsSync(link)) {
    mkdirSync(join(link, ".."), { recursive: true });
    symlinkSync(MODEL, link);
  }
  await page.goto(`${server.base}/build.json`);
  await page.evaluate(countWebGpuCalls);
  const ask = await directWorker(page);
  const backend = await ask({ Init: { force_cpu: false, precision: "F32" } });
  if (backend.Backend?.kind !== "wgpu") throw new Error(`not on WebGPU: ${JSON.stringify(backend)}`);
  const ready = await ask({ LoadUrl: { base: "models/host-bench/" } });
  if (!ready.ModelReady) throw new Error(`the model did not load: ${JSON.stringify(ready).slice(0, 300)}`);
  const session = await context.newCDPSession(page);
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", { interval: 100 });
  await ask({ DecodeSteps: { prefill: 16, steps, replayed } });
  const run = async (n) => {
    const callsBefore = await page.evaluate(() => ({ ...globalThis.__webgpuCalls }));
    const [gpuBefore, rendererBefore] = [cpuOf("gpu-process"), cpuOf("renderer")];
    await session.send("Profiler.start");
    const reply = await ask({ DecodeSteps: { prefill: 16, steps: n, replayed } });
    const { profile } = await session.send("Profiler.stop");
    const [gpuAfter, rendererAfter] = [cpuOf("gpu-process"), cpuOf("renderer")];
    const callsAfter = await page.evaluate(() => ({ ...globalThis.__webgpuCalls }));
    if (!reply.DecodeSteps) throw new Error(`DecodeSteps failed: ${JSON.stringify(reply).slice(0, 300)}`);
    if (replayed && reply.DecodeSteps.eager_reason) {
      throw new Error(`the step was not recorded: ${reply.DecodeSteps.eager_reason}`);
    }
    const calls = callsBetween(callsBefore, callsAfter);
    return { stepMs: reply.DecodeSteps.step_ms, calls, busyMs: busyMs(profile), top: topFunctions(profile),
      crates: byCrate(profile),
      gpuProcessMs: (gpuAfter - gpuBefore) * 1e3, rendererMs: (rendererAfter - rendererBefore) * 1e3 };
  };
  const many = await run(steps);
  const one = await run(1);
  await context.close();
  server.server.close();
  const per = (a, b) => (a - b) / (steps - 1);
  const sorted = [...many.stepMs].sort((a, b) => a - b);
  const calls = callsBetween(one.calls, many.calls, steps - 1);
  const dispatches = dispatchesOf(calls);
  return {
    stepMs: sorted[Math.floor(sorted.length / 2)],
    dispatches,
    pageThreadUsPerDispatch: (per(many.busyMs, one.busyMs) * 1e3) / dispatches,
    gpuProcessUsPerDispatch: (per(many.gpuProcessMs, one.gpuProcessMs) * 1e3) / dispatches,
    rendererUsPerDispatch: (per(many.rendererMs, one.rendererMs) * 1e3) / dispatches,
    callsPerStep: calls,
    topFunctions: many.top.map(([name, ms]) => [name, ms / steps]),
    crates: many.crates.map(([name, ms]) => [name, ms / steps]),
  };
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--enable-unsafe-webgpu", "--disable-background-networking"] });
const results = dists.map(() => []);
for (let round = 0; round < rounds; round++) {
  for (const [i, dist] of dists.entries()) {
    const r = await measure(browser, dist);
    results[i].push(r);
    console.error(`round ${round + 1}, ${dist.label}: ${r.stepMs.toFixed(2)} ms a step, ${r.dispatches.toFixed(1)} dispatches`);
  }
}
await browser.close();
console.log(`host cost of a decode step at batch 1 in the browser's engine (12 blocks of width 64, one head; ${steps} steps, ` +
  `medians over ${rounds} round(s))`);
const summary = dists.map((dist, i) => {
  const rs = results[i];
  const pick = (f) => median(rs.map(f));
  const row = {
    dist: dist.label, stepMs: pick((r) => r.stepMs), dispatches: pick((r) => r.dispatches),
    pageThreadUsPerDispatch: pick((r) => r.pageThreadUsPerDispatch),
    gpuProcessUsPerDispatch: pick((r) => r.gpuProcessUsPerDispatch),
    rendererUsPerDispatch: pick((r) => r.rendererUsPerDispatch),
    callsPerStep: rs[rs.length - 1].callsPerStep,
    topFunctions: rs[rs.length - 1].topFunctions,
    crates: rs[rs.length - 1].crates,
  };
  console.log(`${dist.label}: ${row.stepMs.toFixed(2)} ms a step, ${row.dispatches.toFixed(1)} dispatches a step, ` +
    `${((row.stepMs * 1e3) / row.dispatches).toFixed(1)} µs of wall time each; CPU µs per dispatch: page's thread ` +
    `${row.pageThreadUsPerDispatch.toFixed(1)}, renderer process ${row.rendererUsPerDispatch.toFixed(1)}, ` +
    `GPU process ${row.gpuProcessUsPerDispatch.toFixed(1)}`);
  console.log(`  WebGPU calls a step: ${describeCalls(row.callsPerStep)}`);
  console.log(`  the page's thread by crate, ms a step: ${row.crates.map(([c, ms]) => `${c} ${ms.toFixed(2)}`).join(", ")}`);
  console.log(`  the page's thread, self ms a step: ${row.topFunctions.map(([f, ms]) => `${f} ${ms.toFixed(2)}`).join(", ")}`);
  return row;
});
if (summary.length > 1) {
  for (const row of summary.slice(1)) {
    console.log(`${row.dist} against ${summary[0].dist}: step ${(summary[0].stepMs / row.stepMs).toFixed(2)}×, page's ` +
      `thread per step ${((summary[0].pageThreadUsPerDispatch * summary[0].dispatches) / (row.pageThreadUsPerDispatch * row.dispatches)).toFixed(2)}×`);
  }
}
if (args.out) writeFileSync(args.out, JSON.stringify({ steps, rounds, results: summary }, null, 2));
