// The app's inference worker — its own wasm, fed the page's own requests — under Node.js on Dawn,
// the WebGPU engine Chromium ships (npm `webgpu`, the Dawn project's build), for machines where
// no browser reaches the GPU without a display. It loads a model folder through the page's
// upload requests, asks for the next-token list of a context and runs the Model page's speed
// check (prefill 16 and 64 tokens, a decode step, the game's 100-sample word distribution), then
// compares the list with `clozelab next-token --backend cpu` on the same weights.
//
// Usage: node scripts/dawn_worker.mjs --dist DIR --model DIR [--precision f32|f16] [--cpu]
//   [--dawn PATH_TO_webgpu_PACKAGE] [--dawn-flag FLAG]... [--cli CLOZELAB] [--rounds N]
//   [--samples N] [--host-steps N] [--require-gpu] [--compatibility] [--out FILE.json]
// `--host-steps N` adds the host-cost benchmark in the browser's engine (as
// scripts/bench_host_browser.mjs in Chromium): N decode steps at batch 1, then 1, after a
// 16-token prefill, run one by one and then replayed from one recording; per step (the
// difference over N − 1 steps) the WebGPU calls, and the CPU time of the thread that records and
// submits (Node's main thread: the wasm and Dawn's validation and encoding) apart from the
// process's other threads (the driver's).
// Prints one line per figure and a JSON summary; exits 1 when the list is off by more than the
// precision's tolerance, a request fails, or (--require-gpu) the worker is not on a GPU.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { countWebGpuCalls, callsBetween, dispatchesOf, describeCalls } from './webgpu_calls.mjs';

const CONTEXT = 'The quick brown fox jumps over';
const TOP = 15;
// Worst |log p| difference over the list, as scripts/gpu_browser.py allows.
const TOLERANCE = { f32: 2e-3, f16: 2e-2 };
const CHUNK = 8 << 20;
const MODEL_FILES = ['config.json', 'tokenizer.json', 'vocab.json', 'merges.txt', 'encoder.json', 'vocab.bpe',
  'model.safetensors'];

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    model: { type: 'string' },
    precision: { type: 'string', default: 'f32' },
    cpu: { type: 'boolean', default: false },
    dawn: { type: 'string', default: 'node_modules/webgpu' },
    'dawn-flag': { type: 'string', multiple: true, default: [] },
    cli: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    samples: { type: 'string', default: '100' },
    'host-steps': { type: 'string', default: '0' },
    'require-gpu': { type: 'boolean', default: false },
    compatibility: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
if (!args.model) {
  console.error('dawn_worker: --model DIR is required');
  process.exit(2);
}
if (!(args.precision in TOLERANCE)) {
  console.error(`dawn_worker: --precision is f32 or f16, not ${args.precision}`);
  process.exit(2);
}

const summary = { precision_asked: args.precision, node: process.version };
const fail = (why) => {
  summary.failure = why;
  finish(1);
};
function finish(code) {
  if (args.out) writeFileSync(args.out, JSON.stringify(summary, null, 2));
  console.log(JSON.stringify(summary));
  process.exit(code);
}

// Dawn's `navigator.gpu`, where its package loads and finds an adapter it accepts; without it the
// worker says why and runs on the CPU, as it does in a browser without WebGPU.
let gpu;
try {
  const dawn = await import(pathToFileURL(join(resolve(args.dawn), 'index.js')).href);
  Object.assign(globalThis, dawn.globals);
  countWebGpuCalls();
  gpu = dawn.create(args['dawn-flag']);
  if (args.compatibility) {
    // WebGPU's compatibility mode, the one Dawn offers on OpenGL (llvmpipe on a machine without
    // a GPU): every adapter request asks for it, wgpu's own included.
    const requestAdapter = gpu.requestAdapter.bind(gpu);
    gpu.requestAdapter = (options = {}) => requestAdapter({ ...options, featureLevel: 'compatibility' });
  }
  const adapter = await gpu.requestAdapter();
  summary.dawn = adapter
    ? { adapter: [adapter.info.vendor, adapter.info.architecture, adapter.info.device, adapter.info.description]
      .filter(Boolean).join(' / '), f16: adapter.features.has('shader-f16'),
      timestamp_query: adapter.features.has('timestamp-query') }
    : { adapter: null, note: 'Dawn loaded and offers no adapter on this machine' };
} catch (e) {
  summary.dawn = { adapter: null, note: `Dawn did not load: ${e.message}` };
}
console.log(`dawn: ${summary.dawn.adapter ?? summary.dawn.note}`);

// What a dedicated worker's global scope gives the worker's wasm: wgpu finds `navigator.gpu`
// through `WorkerGlobalScope`; gloo-worker's registration posts to the (absent) page.
globalThis.WorkerGlobalScope ??= class WorkerGlobalScope {};
Object.defineProperty(globalThis, 'navigator', { value: { ...(globalThis.navigator ?? {}), gpu }, configurable: true });
globalThis.self = globalThis;
globalThis.postMessage = () => {};

const dist = resolve(args.dist);
const glue = await import(pathToFileURL(join(dist, 'worker.js')).href);
await glue.default({ module_or_path: readFileSync(join(dist, 'worker_bg.wasm')) });
const worker = new glue.DirectWorker();

let nextId = 1;
// Sends one request; resolves with its final reply, passing progress to `onProgress`.
function ask(request, onProgress = () => {}, send = (id, onReply) => worker.request(JSON.stringify({ id, request }), onReply)) {
  const id = nextId++;
  return new Promise((resolveReply) => {
    send(id, (json) => {
      const { reply } = JSON.parse(json);
      const [kind] = typeof reply === 'string' ? [reply] : Object.keys(reply);
      if (['Loading', 'Progress', 'SwitchedToCpu'].includes(kind)) onProgress(reply);
      else resolveReply(reply);
    });
  });
}
const expect = (reply, kind) => {
  if (reply?.[kind] === undefined) fail(`expected ${kind}, got ${JSON.stringify(reply).slice(0, 400)}`);
  return reply[kind];
};

const backend = expect(await ask({ Init: { force_cpu: args.cpu, precision: args.precision.toUpperCase() } }), 'Backend');
summary.backend = backend;
console.log(`worker backend: ${backend.kind}${backend.adapter ? ` (${backend.adapter})` : ''}` +
  `${backend.fallback_reason ? `; on the CPU because ${backend.fallback_reason}` : ''}; precision ${backend.precision}`);

const modelDir = resolve(args.model);
const present = readdirSync(modelDir);
const files = MODEL_FILES.filter((f) => present.includes(f));
const t0 = performance.now();
expect(await ask({ UploadBegin: { files: files.map((f) => [f, statSync(join(modelDir, f)).size]) } }), 'ChunkReceived');
for (const [index, name] of files.entries()) {
  const bytes = readFileSync(join(modelDir, name));
  for (let at = 0; at < bytes.length; at += CHUNK) {
    const piece = bytes.subarray(at, Math.min(at + CHUNK, bytes.length));
    const reply = await ask(null, undefined, (id, onReply) => worker.upload_chunk(id, index, piece, onReply));
    expect(reply, 'ChunkReceived');
  }
}
summary.model = expect(await ask('UploadEnd'), 'ModelReady');
summary.load_s = (performance.now() - t0) / 1000;
console.log(`model: ${summary.model.name} (${summary.model.parameters} parameters) in ${summary.load_s.toFixed(1)} s`);

const top = expect(await ask({ NextTokens: { context: CONTEXT, k: TOP } }), 'NextTokens');
summary.top = top.map(({ id, logprob }) => ({ id, logprob }));

const speed = expect(await ask({ MeasureSpeed: { rounds: Number(args.rounds), word_samples: Number(args.samples), seed: 1 } }),
  'Speed');
summary.speed_ms = speed;
console.log(`speed check (median of ${speed.rounds}): prefill 16 ${speed.prefill_ms[0].toFixed(1)} ms, ` +
  `prefill 64 ${speed.prefill_ms[1].toFixed(1)} ms, decode step ${speed.decode_step_ms.toFixed(2)} ms, ` +
  `${speed.word_samples}-sample word distribution ${speed.word_distribution_ms.toFixed(0)} ms`);

// CPU ms of this process's main thread and of its other threads (Linux's schedstat).
function threadCpuMs() {
  const cpu = { main: 0, others: 0 };
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      cpu[Number(tid) === process.pid ? 'main' : 'others'] += ns / 1e6;
    } catch { /* the thread ended meanwhile */ }
  }
  return cpu;
}

const hostSteps = Number(args['host-steps']);
// Steps run one by one, then replayed from one recording (whose recording the difference of
// the two runs leaves out); the replays must pick the same tokens.
for (const replayed of hostSteps >= 2 ? [false, true] : []) {
  const run = async (steps) => {
    const [calls, cpu] = [{ ...globalThis.__webgpuCalls }, threadCpuMs()];
    const reply = expect(await ask({ DecodeSteps: { prefill: 16, steps, replayed } }), 'DecodeSteps');
    const [callsAfter, cpuAfter] = [{ ...globalThis.__webgpuCalls }, threadCpuMs()];
    return { stepMs: reply.step_ms, tokens: reply.tokens, eagerReason: reply.eager_reason,
      calls: callsBetween(calls, callsAfter), main: cpuAfter.main - cpu.main, others: cpuAfter.others - cpu.others };
  };
  await run(hostSteps);
  const [many, one] = [await run(hostSteps), await run(1)];
  const calls = callsBetween(one.calls, many.calls, hostSteps - 1);
  const dispatches = dispatchesOf(calls);
  const label = replayed ? 'host cost, replayed' : 'host cost';
  if (dispatches === 0) console.log(`${label}: no WebGPU dispatch (the worker is not on a GPU)`);
  const perDispatch = (ms) => (ms * 1e3) / (hostSteps - 1) / dispatches;
  const stepMs = [...many.stepMs].sort((a, b) => a - b)[Math.floor(hostSteps / 2)];
  const host = { step_ms: stepMs, dispatches_per_step: dispatches, wall_us_per_dispatch: (stepMs * 1e3) / dispatches,
    main_thread_cpu_us_per_dispatch: perDispatch(many.main - one.main),
    other_threads_cpu_us_per_dispatch: perDispatch(many.others - one.others), calls_per_step: calls,
    tokens: many.tokens, eager_reason: many.eagerReason };
  if (replayed) {
    summary.host_replayed = host;
    if (JSON.stringify(host.tokens) !== JSON.stringify(summary.host.tokens)) {
      fail(`the replayed steps' tokens are not those of the steps run one by one`);
    }
  } else {
    summary.host = host;
  }
  if (dispatches > 0) console.log(`${label} of a decode step (median of ${hostSteps}): ${stepMs.toFixed(2)} ms, ` +
    `${dispatches.toFixed(1)} dispatches, ${host.wall_us_per_dispatch.toFixed(1)} µs of wall time each; CPU µs per ` +
    `dispatch: main thread ${host.main_thread_cpu_us_per_dispatch.toFixed(1)}, other threads ` +
    `${host.other_threads_cpu_us_per_dispatch.toFixed(1)}${host.eager_reason ? ` (run one by one: ${host.eager_reason})` : ''}`);
  if (dispatches > 0) console.log(`WebGPU calls a step: ${describeCalls(calls)}`);
}

if (args.cli) {
  const out = spawnSync(args.cli, ['next-token', '--model', modelDir, '--context', CONTEXT, '--top', String(TOP),
    '--backend', 'cpu', '--json'], { encoding: 'utf8' });
  if (out.status !== 0) fail(`the CLI failed: ${out.stderr}`);
  const reference = new Map(JSON.parse(out.stdout).tokens.map((t) => [t.id, t.logprob]));
  let worst = 0;
  for (const { id, logprob } of summary.top) {
    if (!reference.has(id)) fail(`token ${id} is in the worker's top ${TOP} but not the CLI's`);
    worst = Math.max(worst, Math.abs(reference.get(id) - logprob));
  }
  summary.worst_logprob_difference = worst;
  const tolerance = TOLERANCE[backend.precision === 'F16' ? 'f16' : 'f32'];
  console.log(`next-token list against the CLI's CPU backend: worst |Δ log p| ${worst.toExponential(2)} (tolerance ${tolerance})`);
  if (!(worst <= tolerance)) fail(`the list differs from the CLI's by ${worst}`);
}
if (args['require-gpu'] && backend.kind !== 'wgpu') fail('the worker is not on a GPU');
finish(0);
