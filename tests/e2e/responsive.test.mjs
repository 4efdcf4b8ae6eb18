// GPT-2 runs in a Web Worker: the page's own wasm holds no model engine at all (no burn code),
// while the worker's does. With a GPT-2-small-shaped model (12 layers, 768 dims, ~500 MB of f32)
// on the CPU backend, the page has no main-thread task over 1 s once the model is loaded, and
// keys typed while GPT-2 computes its feedback show in the input within 100 ms (the median of
// five; none over 400), beyond the delay that an idle thread of the same page saw meanwhile
// (what a starved machine adds to every thread). The same check runs on WebGPU (SwiftShader)
// with the small test model (the big one takes minutes there:
// `CLOZELAB_RESPONSIVE_GPU_MODEL=big` measures it, with `CLOZELAB_RESPONSIVE_TIMEOUT_S` to wait
// longer). Prints the timings and the memory seen (the note reports them).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { writeFile, rm, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { chromium } from "playwright-core";
import { join } from "node:path";
import { DIST, GPT2_SMALL_SHAPE, ensureGpt2SmallShape, serveDist, launch, screenshot } from "./harness.mjs";

const TIMEOUT = 1000 * Number(process.env.CLOZELAB_RESPONSIVE_TIMEOUT_S ?? 600);
const BIG = GPT2_SMALL_SHAPE;
const GPU_MODEL = process.env.CLOZELAB_RESPONSIVE_GPU_MODEL === "big" ? BIG : "models/test/";

// A worker that only ticks every 4 ms: how late its ticks come is what the OS alone adds to a
// thread of the page. It must come from the page's own origin (the CSP allows no blob: workers).
const IDLE_PROBE = "e2e-idle-probe.js";
const TICK_MS = 4;

let served;
before(async () => {
  await writeFile(join(DIST, IDLE_PROBE), `const ticks = [];
setInterval(() => ticks.push(performance.timeOrigin + performance.now()), ${TICK_MS});
onmessage = () => postMessage(ticks);`);
  ensureGpt2SmallShape();
  served = await serveDist();
});
after(async () => {
  served?.server.close();
  await rm(join(DIST, IDLE_PROBE), { force: true });
});

/** The largest delay beyond its period that the idle probe saw in a tick gap overlapping [from, to]. */
function idleLagMs(ticks, from, to) {
  let lag = 0;
  for (let i = 1; i < ticks.length; i++) {
    if (ticks[i] >= from && ticks[i - 1] <= to) lag = Math.max(lag, ticks[i] - ticks[i - 1] - TICK_MS);
  }
  return lag;
}

test("the page's wasm holds no model engine; the worker's does", () => {
  const wasm = readdirSync(DIST).filter((f) => f.endsWith("_bg.wasm"));
  const page = wasm.filter((f) => f !== "worker_bg.wasm");
  assert.equal(page.length, 1, `one page module in ${DIST}: ${wasm.join(", ")}`);
  // Function names live in the module's name section (kept in debug builds; wasm-opt strips
  // them in release ones, where this cannot be checked).
  const engine = (f) => readFileSync(join(DIST, f)).includes("burn_tensor::");
  if (!engine("worker_bg.wasm")) {
    assert.ok(process.env.CLOZELAB_DIST, "the worker's wasm names burn's functions (debug build)");
    console.log("not checked: this build's wasm has no function names");
    return;
  }
  assert.ok(!engine(page[0]), `${page[0]} (the page's module) contains burn's tensor code`);
});

/** Sum of the resident memory of every Chromium process, in MB. */
function chromiumRssMb() {
  try {
    const out = execFileSync("ps", ["-C", "chromium", "-o", "rss="], { encoding: "utf8" });
    return out.split("\n").filter(Boolean).reduce((a, b) => a + Number(b), 0) / 1024;
  } catch {
    return NaN;
  }
}

async function playTwoWords(webgpu, model) {
  const { browser, page, logs } = await launch({ webgpu });
  let peakRss = 0;
  const sampler = setInterval(() => { peakRss = Math.max(peakRss, chromiumRssMb()); }, 250);
  try {
    await page.addInitScript(() => {
      window.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
      }).observe({ type: "longtask", buffered: true });
    });
    const t0 = Date.now();
    await page.goto(`${served.base}/next-token?model=${model}&PROLIFIC_PID=e2e-responsive-${webgpu ? "gpu" : "cpu"}${webgpu ? "" : "&backend=cpu"}`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    const loadS = (Date.now() - t0) / 1000;
    const readyAt = await page.evaluate(() => performance.now());
    await page.locator(`[data-testid=token-list] li`).first().waitFor({ timeout: TIMEOUT });
    const nextTokenS = (Date.now() - t0) / 1000 - loadS;
    await page.getByRole("link", { name: "Play" }).click();
    await page.locator('[data-testid=passage-list] li[data-passage="kitchen"] a').click();
    const backend = await page.getByTestId("backend-status").locator("[data-backend]").getAttribute("data-backend");
    assert.equal(backend, webgpu ? "wgpu" : "cpu");

    const input = page.getByTestId("guess");
    const game = page.locator("section.game");
    // Word 1: the time until GPT-2's 100-sample word distribution is shown; not waited for with
    // the small model on WebGPU (SwiftShader's timings say nothing of a GPU's; ~16 CPU-seconds).
    await input.waitFor({ timeout: TIMEOUT });
    await input.fill("Sunday");
    const asked = Date.now();
    await input.press("Enter");
    let firstWordsS = null;
    if (webgpu && model !== BIG) {
      await page.getByTestId("feedback").waitFor({ timeout: TIMEOUT });
    } else {
      await page.getByTestId("model-bars").waitFor({ timeout: TIMEOUT });
      firstWordsS = (Date.now() - asked) / 1000;
    }
    await page.getByTestId("next-context").click();
    // Word 2: move on while GPT-2 computes, and type while it works.
    await input.fill("my");
    await input.press("Enter");
    await page.getByTestId("feedback").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("next-context").click();
    await input.waitFor({ timeout: TIMEOUT });
    // Measured in the page: from the key event's timestamp to the next frame after the input
    // shows it (the test driver's own round trips are not the page's latency).
    await page.evaluate(async (probe) => {
      window.__keys = [];
      window.__probe = new Worker(`/${probe}`);
      // A worker starts when the browser gets to it, which on a loaded host can take longer
      // than five keys: type only once the probe is ticking.
      await new Promise((resolve, reject) => {
        window.__probe.onerror = () => reject(new Error("the idle probe did not load"));
        const ask = () => window.__probe.postMessage(null);
        window.__probe.onmessage = (e) => (e.data.length > 2 ? resolve() : setTimeout(ask, 20));
        ask();
      });
      const input = document.querySelector("[data-testid=guess]");
      input.addEventListener("keydown", (e) => { window.__down = e.timeStamp; });
      input.addEventListener("input", () => {
        const down = window.__down;
        requestAnimationFrame(() => {
          const now = performance.now();
          window.__keys.push({ ms: now - down, from: performance.timeOrigin + down, to: performance.timeOrigin + now, value: input.value });
        });
      });
    }, IDLE_PROBE);
    const typed = [];
    for (const key of ["v", "w", "x", "y", "z"]) {
      const computing = (await game.getAttribute("data-gpt2")) === "computing";
      await page.keyboard.press(key);
      await page.waitForFunction((n) => window.__keys.length >= n, typed.length + 1, { timeout: 5000 });
      const last = await page.evaluate(() => window.__keys.at(-1));
      assert.ok(last.value.endsWith(key), `the input shows ${key}`);
      typed.push({ ...last, computing });
    }
    const ticks = await page.evaluate(() => new Promise((resolve) => {
      window.__probe.onmessage = (e) => resolve(e.data);
      window.__probe.postMessage(null);
    }));
    assert.ok(ticks.length > 10, "the idle probe ticked");
    const keyLatencies = typed.map((k) => ({ ms: Math.round(k.ms), duringComputation: k.computing, idleLagMs: Math.round(idleLagMs(ticks, k.from, k.to)) }));
    await page.waitForFunction(() => document.querySelector("section.game")?.dataset.gpt2 !== "computing", null, { timeout: TIMEOUT });
    // GPT-2's words were sampled (on WebGPU by the draw kernel), not given up on.
    assert.equal(await game.getAttribute("data-gpt2"), "ready", logs.filter((l) => /panicked|error/i.test(l)).join("\n"));
    const heapMb = await page.evaluate(() => (performance.memory?.usedJSHeapSize ?? NaN) / 1048576);
    const longTasks = await page.evaluate((after) => window.__longTasks.filter((t) => t.start >= after), readyAt);
    const worst = Math.max(0, ...longTasks.map((t) => t.duration));
    console.log(JSON.stringify({ backend, model, loadS, nextTokenS, firstWordsS, keyLatencies, longTasksAfterLoad: longTasks.length, worstTaskMs: worst, pageHeapMb: heapMb, peakChromiumRssMb: Math.round(peakRss) }));
    await screenshot(page, `responsive-${backend}.png`);
    assert.ok(keyLatencies.some((k) => k.duringComputation), "a key was typed while GPT-2 computed");
    // Keys show within 100 ms (the median of five) and none waits 400 ms, counting only what
    // the page adds to what the OS made an idle thread wait meanwhile. On two cores with another
    // process keeping one busy and three browsers on the other, single keys took 100-136 ms with
    // no long task on the page, and 180-728 ms while the host also ran this VM at half speed.
    const excess = keyLatencies.map((k) => k.ms - k.idleLagMs);
    const sorted = [...excess].sort((a, b) => a - b);
    assert.ok(sorted[2] < 100, `typed keys took ${sorted.join(", ")} ms beyond the idle thread's delay (${JSON.stringify(keyLatencies)})`);
    for (const ms of excess) assert.ok(ms <= 400, `a typed key took ${ms} ms beyond the idle thread's delay`);
    // The page does no heavy work itself. Its longest task is drawing the distribution chart
    // (plotters' text on a canvas: 276 ms in a CPU profile taken on a slow host), stretched on a
    // loaded machine where the worker's and SwiftShader's threads compete with the page's:
    // 50-113 ms in normal runs (three of them under load), 498 and 696 ms while the host ran this
    // VM at half speed. Hence 1000: a whole feedback computed on the main thread takes seconds.
    assert.ok(worst <= 1000, `main-thread task of ${worst} ms after the model loaded`);
    // The page itself never holds the weights: they live in the worker.
    assert.ok(!(heapMb > 200), `page JS heap ${heapMb} MB`);
  } catch (e) {
    await screenshot(page, `FAILED-responsive-${webgpu ? "gpu" : "cpu"}.png`).catch(() => {});
    console.error(logs.join("\n"));
    throw e;
  } finally {
    clearInterval(sampler);
    await browser.close();
  }
}

test("the page stays responsive on the CPU backend with a GPT-2-small-shaped model", { timeout: TIMEOUT }, () => playTwoWords(false, BIG));

test(`the page stays responsive on WebGPU (${GPU_MODEL})`, { timeout: TIMEOUT }, () => playTwoWords(true, GPU_MODEL));

test("a participant can type within seconds, first visit and cached visit", { timeout: TIMEOUT }, async () => {
  const study = { title: "Load study", texts: [{ id: "short", title: "Short", text: "One two three four five" }], passages: ["short"] };
  const file = join(DIST, "study-load.json");
  await writeFile(file, JSON.stringify(study));
  // A persistent profile: its HTTP cache is on disk, as a participant's browser's is (an
  // incognito-like test context keeps a small in-memory cache that a 10 MB wasm does not fit).
  const profile = await mkdtemp(join(tmpdir(), "clozelab-profile-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-webgpu"] });
  const page = context.pages()[0] ?? (await context.newPage());
  const logs = [];
  page.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
  const browser = { close: async () => { await context.close(); await rm(profile, { recursive: true, force: true }); } };
  try {
    const visit = async (pid) => {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("Network.enable");
      let bytes = 0;
      const urls = [];
      const cached = new Set();
      cdp.on("Network.responseReceived", (e) => { if (e.response.fromDiskCache || e.response.fromMemoryCache) cached.add(e.requestId); });
      cdp.on("Network.requestServedFromCache", (e) => cached.add(e.requestId));
      // Bytes that crossed the network (cache hits count nothing).
      cdp.on("Network.loadingFinished", (e) => { if (!cached.has(e.requestId)) bytes += e.encodedDataLength; });
      cdp.on("Network.requestWillBeSent", (e) => urls.push(e.request.url));
      const t0 = Date.now();
      await page.goto(`${served.base}/?study=study-load.json&PROLIFIC_PID=${pid}`);
      await page.getByTestId("guess").waitFor({ timeout: TIMEOUT });
      await page.waitForFunction(() => document.activeElement?.dataset.testid === "guess", null, { timeout: TIMEOUT });
      const seconds = (Date.now() - t0) / 1000;
      await cdp.detach();
      // The worker's own files (Trunk preloads every wasm-bindgen snippet for the app, the
      // worker's small JS modules among them: those are not GPT-2).
      return { seconds, bytes, workerFetched: urls.some((u) => /\/worker(_loader\.js|\.js|_bg\.wasm)/.test(u)) };
    };
    const first = await visit("load-1");
    const cached = await visit("load-2");
    console.log(JSON.stringify({ dist: DIST, firstVisit: first, cachedVisit: cached }));
    assert.ok(cached.bytes < first.bytes / 10, "the second visit comes from the cache");
    assert.ok(cached.seconds < 3, `a cached visit took ${cached.seconds} s until the participant could type`);
    assert.ok(!first.workerFetched, "a participant never downloads GPT-2's worker");
  } catch (e) {
    console.error(logs.join("\n"));
    throw e;
  } finally {
    await browser.close();
    await rm(file, { force: true });
  }
});
