// Shared helpers for the browser end-to-end tests: a static server for dist/ on loopback,
// headless Chromium through playwright-core, and the native CLI for reference numbers.
import { createServer } from "node:http";
import { readFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { extname, join, normalize, resolve } from "node:path";
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import { after } from "node:test";

export const ROOT = resolve(import.meta.dirname, "..", "..");
// CLOZELAB_DIST serves another build (e.g. `trunk build --release --dist dist-release`).
export const DIST = resolve(ROOT, process.env.CLOZELAB_DIST ?? "dist");
export const ARTIFACTS = join(ROOT, "test-artifacts");
/** The native CLI: CLOZELAB_BIN, else where scripts/cargo_env.sh has cargo build it (the target
 * directory outside the clone), else the clone's own target/. */
export function cliBinary() {
  if (process.env.CLOZELAB_BIN) return process.env.CLOZELAB_BIN;
  const targets = [process.env.CARGO_TARGET_DIR ?? join(homedir(), ".cache", "clozelab", "target"), join(ROOT, "target")];
  const found = targets.map((t) => join(t, "debug", "clozelab")).find((bin) => existsSync(bin));
  if (!found) {
    throw new Error(`the clozelab CLI is not built (looked in ${targets.join(", ")}): run \`source scripts/cargo_env.sh && cargo build\`, or set CLOZELAB_BIN`);
  }
  return found;
}

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm", ".css": "text/css", ".json": "application/json", ".txt": "text/plain" };

/** Serves `root` (the built app, or a study's unpacked website) as a static host would; with
 * `pageForMissing`, as hosts with a single-page fallback do (Netlify, Cloudflare Pages, `trunk
 * serve`): any path it does not have is answered with index.html and status 200. */
export async function serveDist(root = DIST, { pageForMissing = false, isolated = false } = {}) {
  // `isolated`: every response carries the headers that make the page cross-origin isolated
  // (what the app command's server and a well-configured host send), so that the worker may
  // share memory with its product helpers.
  const isolation = isolated ? { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" } : {};
  // JSON bodies POSTed to /submit (a study's submit_url), for the tests to inspect. As a
  // careful study server would, it stores a submission once per idempotency key (a retry is
  // acknowledged again, not stored again); `submit.failNext` makes it answer 503 meanwhile,
  // `submit.refuseNext` 422 (a refusal for good: the app must not send it again).
  const submissions = [];
  // `submit.holdMs` (key → ms) stores a submission at once but answers it late: a tab closed
  // meanwhile never hears the acknowledgement. A participant's id as the key holds their final
  // submission, whatever run it is in.
  const submit = { failNext: 0, refuseNext: 0, attempts: new Map(), duplicates: 0, holdMs: new Map() };
  const stored = new Set();
  const server = createServer(async (req, res) => {
    if (req.method === "POST") {
      let body = "";
      req.on("data", (d) => { body += d; });
      req.on("end", () => {
        if (new URL(req.url, "http://x").pathname !== "/submit") { res.writeHead(404).end(); return; }
        const key = decodeURIComponent(req.headers["idempotency-key"] ?? "");
        submit.attempts.set(key, (submit.attempts.get(key) ?? 0) + 1);
        if (submit.failNext > 0) { submit.failNext--; res.writeHead(503).end(); return; }
        if (submit.refuseNext > 0) { submit.refuseNext--; res.writeHead(422).end(); return; }
        if (key && stored.has(key)) { submit.duplicates++; res.writeHead(200).end(); return; }
        try {
          const parsed = JSON.parse(body);
          // The key it came under, for tests that tell per-response POSTs from final bundles.
          Object.defineProperty(parsed, "key", { value: key, enumerable: false });
          submissions.push(parsed);
          stored.add(key);
        } catch { res.writeHead(400).end(); return; }
        const hold = submit.holdMs.get(key) ?? submit.holdMs.get(finalOwner(key)) ?? 0;
        if (hold) setTimeout(() => res.writeHead(204).end(), hold); else res.writeHead(204).end();
      });
      return;
    }
    try {
      const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
      let file = normalize(join(root, path));
      if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
      if (path.endsWith("/")) file = join(file, "index.html");
      // The app's routes (/play/kitchen, /model, …) are client-side: serve the page for them,
      // as Trunk's server does (static hosts need the same fallback for reloads on a route).
      if (!extname(path) && !path.endsWith("/")) file = join(root, "index.html");
      let body;
      try {
        body = await readFile(file);
      } catch (e) {
        if (!pageForMissing) throw e;
        file = join(root, "index.html");
        body = await readFile(file);
      }
      // As a typical static host: the page is revalidated, the (content-hashed) assets cached.
      const cache = extname(file) === ".html" || extname(file) === ".json" ? "no-cache" : "max-age=3600";
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "content-length": body.length, "cache-control": cache, ...isolation });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, submissions, submit, base: `http://127.0.0.1:${server.address().port}` };
}

/** `clozelab serve` hosting a Website package (`site`: its ZIP or folder) with its answers in
 * the SQLite file `data`, on a free loopback port; resolves once it listens, with its address
 * and the export token it printed (a new database's). */
export async function startClozelabServe(site, data, args = []) {
  const { spawn } = await import("node:child_process");
  const child = spawn(cliBinary(), ["serve", "--site", site, "--data", data, "--addr", "127.0.0.1:0", ...args], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  await new Promise((resolve, reject) => {
    child.on("exit", (code) => reject(new Error(`clozelab serve exited (${code}): ${out}`)));
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("Ctrl-C stops the server")) resolve();
    });
  });
  const base = `http://${out.match(/listening on (\S+)/)[1]}`;
  const token = out.match(/export token[^\n]*: ([0-9a-f]+)/)?.[1];
  const stop = () => new Promise((resolve) => { child.removeAllListeners("exit"); child.on("exit", resolve); child.kill("SIGTERM"); });
  return { base, token, out, child, stop };
}

/** A small seeded generator (mulberry32), so a fault-injection run can be repeated. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The participant whose final submission `key` is (`participant/study/run/complete`). */
const finalOwner = (key) => (key.endsWith("/complete") ? key.split("/")[0] : undefined);

/** Whether `key` is `participant`'s final submission of a run (any study, any run). */
export const isFinalKey = (key, participant) => finalOwner(key) === participant;

/** How often the server was sent `participant`'s final submissions, retries included. */
export const finalAttempts = (served, participant) =>
  [...served.submit.attempts].filter(([k]) => isFinalKey(k, participant)).reduce((n, [, c]) => n + c, 0);

/** The GPT-2-small-shaped random model (12 layers, 768 dims, ~500 MB of f32), written into
 * the served folder (not public/, which Trunk copies on every build) on first use; returns its
 * path from the app's root. */
export const GPT2_SMALL_SHAPE = "models/gpt2-small-shape/";
export function ensureGpt2SmallShape(root = DIST) {
  const dir = join(root, GPT2_SMALL_SHAPE);
  if (!existsSync(join(dir, "model.safetensors"))) {
    const bin = cliBinary();
    execFileSync(bin, ["make-test-model", "--out", dir, "--layers", "12", "--dim", "768", "--heads", "12"], { stdio: "ignore" });
  }
  return GPT2_SMALL_SHAPE;
}

const BASE_ARGS = ["--headless", "--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

// One Chromium per test file and WebGPU setting, started on first use: each test gets a
// fresh context (its own storage, caches and service workers, as a new incognito window),
// which costs a fraction of a browser start (~0.5 CPU-s each, ~40 in the suite).
// They are closed when the file's tests are done (only under `node --test`: the fault-injection
// script imports this module too, and a hook there would print an empty test report).
const browsers = new Map();
if (process.env.NODE_TEST_CONTEXT) {
  after(async () => {
    for (const started of browsers.values()) await (await started).close();
    browsers.clear();
  });
}

// `CLOZELAB_TEST_SERVICE_WORKERS=allow` runs every test that does not choose as a host without
// COOP/COEP serves the app to a browser with service workers: each page reloads once into
// isolation and the CPU backend runs on every core (the suite then takes about 30 % longer).
const DEFAULT_SERVICE_WORKERS = process.env.CLOZELAB_TEST_SERVICE_WORKERS === "allow" ? "allow" : "block";

/** A fresh context and page in Chromium with WebGPU (SwiftShader) or with WebGPU absent;
 * `browser.close()` closes that context. Service workers are blocked unless `serviceWorkers` is
 * "allow" (or the environment says so, above), as in browsers that have them off: on a host that sends no COOP/COEP the page then
 * stays on one thread at once instead of reloading under the isolation service worker
 * (public/isolation/), which the tests that ask for it exercise. */
export async function launch({ webgpu, serviceWorkers = DEFAULT_SERVICE_WORKERS }) {
  if (!browsers.has(webgpu)) {
    const args = webgpu ? [...BASE_ARGS, "--enable-unsafe-webgpu"] : [...BASE_ARGS, "--disable-webgpu"];
    browsers.set(webgpu, chromium.launch({ executablePath: "/usr/bin/chromium", args }));
  }
  const context = await (await browsers.get(webgpu)).newContext({ viewport: { width: 1100, height: 900 }, serviceWorkers });
  const browser = { close: () => context.close() };
  if (!webgpu) {
    // Make "no WebGPU" unambiguous whatever the browser build does with the flag.
    await context.addInitScript(() => { delete Navigator.prototype.gpu; });
  }
  const page = await context.newPage();
  const logs = [];
  page.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
  return { browser, page, logs };
}

/** The worker's own wasm in `page` (any page of the served build), answering requests sent
 * straight to it as the page's would be: returns `ask(request)`, which resolves to the request's
 * last reply (progress and loading replies skipped). */
export async function directWorker(page) {
  await page.evaluate(async () => {
    // The worker's entry point answers its page through `postMessage`, which in a page would
    // post to the page itself.
    globalThis.postMessage = () => {};
    const glue = await import("/worker.js");
    await glue.default({ module_or_path: "/worker_bg.wasm" });
    const worker = new glue.DirectWorker();
    let nextId = 1;
    globalThis.__ask = (request) => new Promise((done) => {
      worker.request(JSON.stringify({ id: nextId++, request }), (json) => {
        const { reply } = JSON.parse(json);
        const kind = typeof reply === "string" ? reply : Object.keys(reply)[0];
        if (!["Loading", "Progress"].includes(kind)) done(reply);
      });
    });
  });
  return (request) => page.evaluate((r) => globalThis.__ask(r), request);
}

/** `directWorker` on `served`'s build, on WebGPU in f32, with the model at `model` (a path
 * under the build) loaded: returns `ask`, having checked that the worker took WebGPU and the model. */
export async function webGpuWorkerWithModel(page, served, model) {
  await page.goto(`${served.base}/build.json`);
  const ask = await directWorker(page);
  const backend = await ask({ Init: { force_cpu: false, precision: "F32" } });
  assert.equal(backend.Backend?.kind, "wgpu", JSON.stringify(backend));
  const ready = await ask({ LoadUrl: { base: model } });
  assert.ok(ready.ModelReady, JSON.stringify(ready).slice(0, 300));
  return ask;
}

/** The addresses of the page's own document loads, in order, counted by their navigation
 * requests: a service worker's reload can come before the first load's DOMContentLoaded, which
 * would then never fire for it. */
export function documentLoads(page) {
  const loads = [];
  page.on("request", (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) loads.push(request.url());
  });
  return loads;
}

/** `clozelab next-token --json` for the same model and context (the reference). */
export function cliNextToken(modelDir, context, top) {
  const bin = cliBinary();
  const out = execFileSync(bin, ["next-token", "--model", modelDir, "--context", context, "--top", String(top), "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(out);
}

/** `clozelab word-prob --json` for the same model, context and word (the reference). */
export function cliWordProb(modelDir, context, word) {
  const bin = cliBinary();
  const out = execFileSync(bin, ["word-prob", "--model", modelDir, "--context", context, "--word", word, "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(out).words[0];
}

/** Types `context` on the Next token page and returns the list it shows: `{id, logprob}` each. */
export async function shownNextTokens(page, context, timeout) {
  await page.getByTestId("context").fill(context);
  const list = page.locator(`[data-testid=token-list][data-context="${context}"]`);
  await list.waitFor({ timeout });
  return list.locator("li").evaluateAll((items) => items.map((li) => ({ id: Number(li.dataset.id), logprob: Number(li.dataset.logprob) })));
}

/** Scores `word` on the Next token page and returns the probability it shows. */
export async function shownWordProb(page, word, timeout) {
  await page.getByTestId("scored-word").fill(word);
  await page.getByTestId("score-word").click();
  const scored = page.locator(`[data-testid=word-prob][data-word="${word}"]`);
  await scored.waitFor({ timeout });
  return Number(await scored.getAttribute("data-prob"));
}

export async function screenshot(page, name) {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
}

/** Runs `body` on a fresh page; fails on alerts or console errors, with a screenshot. */
export async function withPage(name, { webgpu = false, viewport, serviceWorkers } = {}, body) {
  const { browser, page, logs } = await launch({ webgpu, serviceWorkers });
  if (viewport) await page.setViewportSize(viewport);
  const dialogs = [];
  page.on("dialog", async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  try {
    await body(page, logs, dialogs);
    assert.deepEqual(dialogs, [], "no script ever ran an alert");
    const errors = logs.filter((l) => /panicked|unreachable|Content Security Policy|Refused/i.test(l));
    assert.deepEqual(errors, [], `console errors:\n${logs.join("\n")}`);
  } catch (e) {
    await screenshot(page, `FAILED-${name}.png`).catch(() => {});
    console.error(logs.join("\n"));
    throw e;
  } finally {
    await browser.close();
  }
}

/** Answers the two-token round on screen (80 %) and waits until `answered` rounds are counted. */
export async function answerTwoToken(page, timeout, answered) {
  const round = page.getByTestId("two-token-round");
  await round.waitFor({ timeout: timeout });
  const key = `${await round.getAttribute("data-position")}/${await round.getAttribute("data-round")}`;
  const button = page.locator("[data-testid=p-button][data-percent='80']");
  await Promise.race([
    button.waitFor({ timeout: timeout }),
    page.waitForFunction((k) => {
      const r = document.querySelector("[data-testid=two-token-round]");
      return !r || `${r.dataset.position}/${r.dataset.round}` !== k;
    }, key, { timeout: timeout }),
  ]);
  if (await button.count()) await button.click();
  await page.waitForFunction((n) => new RegExp(`^${n} of`).test(document.querySelector("[data-testid=token-progress]")?.innerText ?? ""), answered, { timeout: timeout });
}

/** Table 1 from the CLI, same files and options: system → row of numbers. */
export async function cliTable(files, resamples = "3", flags = []) {
  const out = await mkdtemp(join(tmpdir(), "clozelab-figures-"));
  try {
    execFileSync(cliBinary(), ["figures", "--resamples", resamples, "--out", out, ...flags, ...files.flatMap((f) => ["--file", f])]);
    return parseTable1(await readFile(join(out, "table1.csv"), "utf8"));
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** Table 1's CSV (the CLI's or the page's download): system → column → cell. */
export function parseTable1(csv) {
  const [header, ...lines] = csv.trim().split(/\r?\n/);
  const cols = header.split(",");
  return Object.fromEntries(lines.map((l) => {
    const cells = l.split(",");
    return [cells[0], Object.fromEntries(cols.map((c, i) => [c, cells[i]]))];
  }));
}

export async function assertSameAsCli(page, cli, systems) {
  for (const system of systems) {
    for (const col of ["ece_original", "ece_human_majority", "ece_oracle_majority", "tvd_human", "w1_to_oracle", "top1_accuracy"]) {
      const shown = (await page.locator(`[data-testid=table1] tr[data-system="${system}"] td[data-col=${col}]`).innerText()).trim();
      const expected = cli[system][col] === "" ? "—" : Number(cli[system][col]).toFixed(3);
      assert.equal(shown, expected, `${system} ${col}`);
    }
  }
}

/** Clicks the button `testid` and saves the download it starts into `dir`; returns its path. */
export async function download(page, testid, dir, timeout = 120_000) {
  const [file] = await Promise.all([page.waitForEvent("download", { timeout }), page.getByTestId(testid).click()]);
  const path = join(dir, file.suggestedFilename());
  await file.saveAs(path);
  return path;
}

/** RFC 4180 CSV (quoted cells may hold commas, quotes and newlines) as objects by header. */
export function parseCsv(text) {
  const rows = [];
  let row = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { row.push(cell); cell = ""; } else if (c === "\n") { row.push(cell); rows.push(row); row = []; cell = ""; } else if (c !== "\r") cell += c;
  }
  if (cell || row.length) { row.push(cell); rows.push(row); }
  const [header, ...body] = rows;
  return { header, rows: body.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]]))) };
}
