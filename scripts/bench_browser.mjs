// The browser benchmark: clozelab's worker on its CPU backend (wasm, SIMD) beside
// onnxruntime-web (the engine under transformers.js) on the same weights, in the same headless
// Chromium, WebGPU off. clozelab runs twice: served plainly (one thread) and served cross-origin
// isolated (the worker and its product helpers, one thread per core the browser reports). Both run the same fixed prompt ids: a forward pass over 16 and over 64
// tokens, and a decode step after the 64 (the mean of 8); clozelab also its 100-sample word
// distribution (the game's feedback). Each figure is the median of 3 timed runs after an
// untimed one. onnxruntime-web runs two graphs of scripts/export_onnx.py: one that computes only
// the last position's logits (the work clozelab's next-token request does) and one that
// computes every position's (what transformers.js' exports compute); each with 1 thread, and
// the first with 2 (served cross-origin isolated). Ratios are onnxruntime-web's time over
// clozelab's with as many threads (the first build's): above 1, clozelab is faster.
//
// Usage: node scripts/bench_browser.mjs [--model big|test] [--out FILE.json]
//          [--dists DIR,DIR… [--rounds N]] [--no-onnxruntime]
// `--dists` times several builds' speed checks, alternating between them N times (a before and
// after in one sitting: each row's figures are the medians over its rounds); `--no-onnxruntime`
// leaves onnxruntime-web out (no torch needed).
// Needs: a built app (CLOZELAB_DIST, default dist/; `bash scripts/release.sh` builds the
// participants' dist-release/), the CLI (to write the test model: CLOZELAB_BIN, else where scripts/cargo_env.sh builds it), CLOZELAB_PYTHON (torch
// + transformers + onnx, for scripts/export_onnx.py; not with --no-onnxruntime) and Chromium. onnxruntime-web (pinned
// below) is installed from npm into ~/.cache/clozelab/ on first use, not into the project: the
// test command's installs stay as they are. The ONNX export is kept in ~/.cache/clozelab/onnx/
// and redone when the weights change.
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { existsSync, statSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { extname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { serveDist, ensureGpt2SmallShape, DIST, GPT2_SMALL_SHAPE, ROOT } from "../tests/e2e/harness.mjs";

const { values: args } = parseArgs({
  options: {
    model: { type: "string", default: "big" },
    out: { type: "string" },
    dists: { type: "string" },
    rounds: { type: "string", default: "1" },
    "no-onnxruntime": { type: "boolean", default: false },
  },
});
const dists = args.dists ? args.dists.split(",").map((d) => resolve(ROOT, d)) : [DIST];
const buildRounds = Number(args.rounds);
if (!(buildRounds >= 1)) throw new Error(`--rounds is a count, not ${args.rounds}`);
// The test model is public/models/test (a build made before the tests wrote it lacks it); the big
// one is written into the first build on first use. Builds without the model link to it.
const MODELS = {
  big: () => [ensureGpt2SmallShape(dists[0]), join(dists[0], GPT2_SMALL_SHAPE)],
  test: () => ["models/test/", join(ROOT, "public", "models", "test")],
};
if (!MODELS[args.model]) throw new Error(`--model is big or test, not ${args.model}`);
const [modelPath, modelSource] = MODELS[args.model]();
for (const dist of dists) {
  const link = join(dist, modelPath).replace(/\/$/, "");
  if (!existsSync(link)) {
    mkdirSync(join(link, ".."), { recursive: true });
    symlinkSync(modelSource.replace(/\/$/, ""), link);
  }
}
const ROUNDS = 3;
const DECODE_STEPS = 8;
const PREFILLS = [16, 64];
const TIMEOUT = 30 * 60 * 1000;
const ORT_VERSION = "1.24.3";
const CACHE = join(homedir(), ".cache", "clozelab");

function ensureOrt() {
  const prefix = join(CACHE, `onnxruntime-web-${ORT_VERSION}`);
  const dir = join(prefix, "node_modules", "onnxruntime-web");
  if (!existsSync(join(dir, "dist", "ort.wasm.min.mjs"))) {
    execFileSync("npm", ["install", "--prefix", prefix, "--no-audit", "--no-fund", `onnxruntime-web@${ORT_VERSION}`], { stdio: "inherit" });
  }
  return dir;
}

// The two graphs export_onnx.py writes: the last position's logits, and every position's.
const GRAPHS = { last: "gpt2.onnx", every: "gpt2-all-positions.onnx" };

function ensureOnnx(modelDir) {
  const out = join(CACHE, "onnx", args.model);
  const weights = join(modelDir, "model.safetensors");
  const stale = (name) => !existsSync(join(out, name)) || statSync(join(out, name)).mtimeMs < statSync(weights).mtimeMs;
  if (Object.values(GRAPHS).some(stale)) {
    mkdirSync(out, { recursive: true });
    const python = process.env.CLOZELAB_PYTHON ?? "python3";
    try {
      // Its stderr (torch's warnings) is shown only when the export fails.
      execFileSync(python, [join(ROOT, "scripts", "export_onnx.py"), modelDir, out], { stdio: ["ignore", "inherit", "pipe"] });
    } catch (e) {
      const said = String(e.stderr ?? "").trim().split("\n").slice(-3).join("\n");
      throw new Error(`the ONNX export failed (${python} needs torch, transformers and onnx: set CLOZELAB_PYTHON, or leave onnxruntime-web out with --no-onnxruntime):\n${said}`);
    }
  }
  return out;
}

// onnxruntime-web's page: cross-origin isolated (its threads need SharedArrayBuffer).
const ORT_PAGE = `<!doctype html><meta charset="utf-8"><title>onnxruntime-web</title>
<script type="module">
import * as ort from "/ort/ort.wasm.min.mjs";
window.runOrt = async ({ graph, threads, config, rounds, prefills, decodeSteps }) => {
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.wasmPaths = "/ort/";
  const session = await ort.InferenceSession.create("/model/" + graph, { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
  const headDim = config.n_embd / config.n_head;
  const empty = () => new ort.Tensor("float32", new Float32Array(0), [config.n_layer, 1, config.n_head, 0, headDim]);
  const ids = (list) => new ort.Tensor("int64", BigInt64Array.from(list.map(BigInt)), [1, list.length]);
  const prompt = (n) => Array.from({ length: n }, (_, i) => 262 + (i * 7919) % 40000);
  // On the wasm backend the outputs come back in JS memory: nothing is left to read.
  const run = (list, keys, values) => session.run({ input_ids: ids(list), past_keys: keys, past_values: values });
  const times = { prefill: prefills.map(() => []), decode: [] };
  for (let round = 0; round <= rounds; round++) {
    for (const [i, n] of prefills.entries()) {
      const t0 = performance.now();
      let out = await run(prompt(n), empty(), empty());
      const t1 = performance.now();
      if (round > 0) times.prefill[i].push(t1 - t0);
      if (i === prefills.length - 1) {
        const t2 = performance.now();
        for (let s = 0; s < decodeSteps; s++) out = await run([1000 + s], out.keys, out.values);
        if (round > 0) times.decode.push((performance.now() - t2) / decodeSteps);
      }
    }
  }
  return { isolated: self.crossOriginIsolated, times };
};
</script>`;

async function serveOrt(onnxDir, ortPackage) {
  const ortDir = join(ortPackage, "dist");
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    const headers = { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" };
    try {
      let body, type;
      if (path === "/") [body, type] = [ORT_PAGE, "text/html"];
      else if (Object.values(GRAPHS).some((name) => path === `/model/${name}`)) [body, type] = [await readFile(join(onnxDir, path.slice(7))), "application/octet-stream"];
      else if (path.startsWith("/ort/") && !path.includes("..")) {
        body = await readFile(join(ortDir, path.slice(5)));
        type = { ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm" }[extname(path)] ?? "application/octet-stream";
      } else { res.writeHead(404, headers).end(); return; }
      res.writeHead(200, { ...headers, "content-type": type }).end(body);
    } catch {
      res.writeHead(404, headers).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function clozelab(browser, base, isolated) {
  // Not isolated means one thread: no service worker may add the headers the host left out.
  const context = await browser.newContext({ serviceWorkers: isolated ? "allow" : "block" });
  await context.addInitScript(() => { delete Navigator.prototype.gpu; });
  const page = await context.newPage();
  await page.goto(`${base}/model?model=${modelPath}&backend=cpu`);
  await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
  await page.getByTestId("speed-run").click();
  await page.getByTestId("speed-table").waitFor({ timeout: TIMEOUT });
  const ms = async (op) => Number(await page.locator(`[data-testid=speed-table] tr[data-op=${op}] td`).getAttribute("data-ms"));
  const figures = { prefill16: await ms("prefill-16"), prefill64: await ms("prefill-64"), decode: await ms("decode"), words100: await ms("words") };
  const backend = await page.getByTestId("backend-status").locator("[data-backend]").getAttribute("data-backend");
  if (backend !== "cpu") throw new Error(`clozelab ran on ${backend}, not the CPU`);
  const line = await page.getByTestId("backend-status").innerText();
  figures.threads = Number(line.match(/(\d+) threads/)?.[1] ?? 1);
  if (isolated !== figures.threads > 1) throw new Error(`served ${isolated ? "" : "not "}isolated, clozelab says: ${line}`);
  await context.close();
  return figures;
}

async function onnxruntime(browser, base, graph, threads, config) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/`);
  await page.waitForFunction(() => typeof window.runOrt === "function");
  const { isolated, times } = await page.evaluate((a) => window.runOrt(a), { graph, threads, config, rounds: ROUNDS, prefills: PREFILLS, decodeSteps: DECODE_STEPS });
  if (threads > 1 && !isolated) throw new Error("the onnxruntime-web page is not cross-origin isolated: it would run one thread");
  await context.close();
  return { prefill16: median(times.prefill[0]), prefill64: median(times.prefill[1]), decode: median(times.decode) };
}

const modelDir = join(dists[0], modelPath);
const config = JSON.parse(await readFile(join(modelDir, "config.json"), "utf8"));
const withOrt = !args["no-onnxruntime"];
// Per build: served plainly (one thread), then cross-origin isolated (every core).
const SERVINGS = [false, true];
const apps = [];
for (const dist of dists) apps.push(await Promise.all(SERVINGS.map((isolated) => serveDist(dist, { isolated }))));
const ortPackage = withOrt ? ensureOrt() : null;
const ort = withOrt ? await serveOrt(ensureOnnx(modelDir), ortPackage) : null;
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-webgpu", "--disable-background-networking", "--disable-component-update"] });
try {
  // runs[build][serving]: each round's figures.
  const runs = dists.map(() => SERVINGS.map(() => []));
  for (let round = 1; round <= buildRounds; round++) {
    for (const [i, dist] of dists.entries()) {
      for (const [j, isolated] of SERVINGS.entries()) {
        console.error(`clozelab (${dist}${isolated ? ", isolated" : ""}) on ${config.n_layer} layers, ${config.n_embd} dims, round ${round} of ${buildRounds}…`);
        runs[i][j].push(await clozelab(browser, apps[i][j].base, isolated));
      }
    }
  }
  const keys = ["prefill16", "prefill64", "decode", "words100", "threads"];
  const ours = runs.map((servings) => servings.map((list) => Object.fromEntries(keys.map((k) => [k, median(list.map((f) => f[k]))]))));
  // Each onnxruntime-web run: [label, graph, threads].
  const ortRuns = withOrt ? [["last position's logits, 1 thread", GRAPHS.last, 1], ["every position's logits, 1 thread", GRAPHS.every, 1], ["last position's logits, 2 threads", GRAPHS.last, 2]] : [];
  const ortFigures = [];
  for (const [label, graph, threads] of ortRuns) {
    console.error(`onnxruntime-web, ${label}…`);
    ortFigures.push(await onnxruntime(browser, ort.base, graph, threads, config));
  }
  const ortVersion = withOrt ? JSON.parse(await readFile(join(ortPackage, "package.json"), "utf8")).version : null;
  const label = (dist) => (dists.length > 1 ? ` ${dist}` : "");
  const threadsName = (n) => `${n} thread${n > 1 ? "s" : ""}`;
  // [name, figures, clozelab's figures at as many threads (for the ratio) or null]
  const rows = [
    ...dists.flatMap((dist, i) => ours[i].map((f) => [`clozelab worker, CPU (wasm SIMD, ${threadsName(f.threads)})${label(dist)}`, f, null])),
    ...ortRuns.map(([name, , threads], i) => [`onnxruntime-web ${ortVersion}, ${name}`, ortFigures[i], ours[0].find((f) => f.threads === threads) ?? null]),
  ];
  const cols = [["prefill16", "prefill 16"], ["prefill64", "prefill 64"], ["decode", "decode step"]];
  const rounds = buildRounds > 1 ? `, the median of ${buildRounds} such runs per build, alternating` : "";
  const ratio = withOrt ? `; ratio: the row's time over clozelab's with as many threads${dists.length > 1 ? " (first build)" : ""}` : "";
  console.log(`browser CPU, ms (median of ${ROUNDS} after an untimed run${rounds}; ${config.n_layer} layers, ${config.n_embd} dims${ratio})`);
  console.log(["engine".padEnd(64), ...cols.map(([, h]) => h.padStart(18)), "100-sample words".padStart(18)].join(""));
  for (const [name, f, same] of rows) {
    const cells = cols.map(([k]) => `${f[k].toFixed(1)}${same ? ` (${(f[k] / same[k]).toFixed(2)}×)` : ""}`.padStart(18));
    console.log([name.padEnd(64), ...cells, (f.words100 ? `${(f.words100 / 1000).toFixed(2)} s` : "—").padStart(18)].join(""));
  }
  const ortOut = Object.fromEntries(ortRuns.map(([, graph, threads], i) => [`${graph}, ${threads} thread${threads > 1 ? "s" : ""}`, ortFigures[i]]));
  if (args.out) writeFileSync(resolve(args.out), JSON.stringify({ model: args.model, dists, config, rounds: ROUNDS, build_rounds: buildRounds, clozelab: dists.length === 1 ? ours[0] : ours, clozelab_runs: runs, onnxruntime_web: ortOut, ort_version: ortVersion }, null, 2));
} finally {
  await browser.close();
  for (const app of apps.flat()) app.server.close();
  ort?.server.close();
}
