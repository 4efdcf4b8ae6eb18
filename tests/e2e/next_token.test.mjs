// The app's next-token screen against `clozelab next-token` and `clozelab word-prob`, on WebGPU
// and with WebGPU absent, with the GPT-2 test model, the GPT-NeoX one (Pythia's architecture:
// rotary embeddings, whose positions the cached decoding steps of a word's score exercise) and
// the Llama one (SmolLM2's: RMS norms, the SiLU gate, grouped key/value heads in the cache, its
// tokenizer from tokenizer.json). A word's exact probability takes decoding steps with the key/value
// cache (one row per tokenisation), which a next-token list does not: on WebGPU that is the
// browser's fused engine on its cached path.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { availableParallelism } from "node:os";
import { ROOT, serveDist, launch, cliNextToken, cliWordProb, screenshot, shownNextTokens, shownWordProb, documentLoads } from "./harness.mjs";

const MODEL_DIR = join(ROOT, "public", "models", "test");
const MODEL_DIRS = {
  test: MODEL_DIR,
  "test-gpt-neox": join(ROOT, "public", "models", "test-gpt-neox"),
  "test-llama": join(ROOT, "public", "models", "test-llama"),
};
const ARCHITECTURE = { test: /\(GPT-2, /, "test-gpt-neox": /\(GPT-NeoX, /, "test-llama": /\(Llama, / };
const CONTEXT = "The quick brown fox jumps over";
const ONE_TOKEN = "The";
const TOP = 15;
const TOLERANCE = 1e-4;
// Each has several tokenisations (4 and 3 with the test model), each scored by decoding steps.
const SCORED_WORDS = ["the", "unhappiness"];
const TIMEOUT = 240_000;

// The browser reports the machine's cores; the CPU backend uses that many threads, at most 8.
const THREADS = Math.min(availableParallelism(), 8);

let served, servedIsolated;
before(async () => { [served, servedIsolated] = await Promise.all([serveDist(), serveDist(undefined, { isolated: true })]); });
after(() => { served?.server.close(); servedIsolated?.server.close(); });

// `isolated`: served cross-origin isolated, where the CPU backend shares every product with
// helper workers (one per further core). `serviceWorker`: served as a static host does, without
// the headers, and the isolation service worker allowed to add them (one reload); otherwise
// service workers are blocked and, not isolated, the page stays on one thread.
async function checkMode(webgpu, model = "test", { isolated = false, serviceWorker = false } = {}) {
  const modelDir = MODEL_DIRS[model];
  const { browser, page, logs } = await launch({ webgpu, serviceWorkers: serviceWorker ? "allow" : "block" });
  const loads = documentLoads(page);
  const threaded = isolated || serviceWorker;
  try {
    await page.goto(`${(isolated ? servedIsolated : served).base}/next-token?model=models/${model}/`);
    const status = page.getByTestId("backend-status").locator("[data-backend]");
    await status.waitFor({ timeout: TIMEOUT });
    assert.equal(await status.getAttribute("data-backend"), webgpu ? "wgpu" : "cpu", await page.getByTestId("backend-status").innerText());
    // f32 unless asked for otherwise, and said so.
    assert.equal(await page.getByTestId("precision").getAttribute("data-precision"), "f32");
    assert.match(await page.getByTestId("backend-status").innerText(), /weights in f32/);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    assert.match(await page.getByTestId("random-model-warning").innerText(), /random TEST models, not a trained one/);

    // A one-token context first: its forward pass is one row (on the CPU, the packed weights'
    // one-row loop), the longer one's several.
    for (const context of [ONE_TOKEN, CONTEXT]) {
      const shown = await shownNextTokens(page, context, TIMEOUT);
      const reference = cliNextToken(modelDir, context, TOP).tokens;
      assert.equal(shown.length, TOP);
      for (let i = 0; i < TOP; i++) {
        assert.equal(shown[i].id, reference[i].id, `${context}, rank ${i}: browser id ${shown[i].id}, CLI id ${reference[i].id}`);
        assert.ok(Math.abs(shown[i].logprob - reference[i].logprob) <= TOLERANCE, `${context}, rank ${i}: ${shown[i].logprob} vs ${reference[i].logprob}`);
      }
    }
    for (const word of SCORED_WORDS) {
      const shown = await shownWordProb(page, word, TIMEOUT);
      const reference = cliWordProb(modelDir, CONTEXT, word);
      assert.ok(shown > 0 && Math.abs(Math.log(shown) - reference.logprob) <= TOLERANCE, `${word}: browser ${shown}, CLI ${reference.prob}`);
    }
    if (!webgpu) {
      const line = await page.getByTestId("backend-status").innerText();
      const split = await computeWorker(page).then((w) => w.evaluate(() => globalThis.__clozelabSplitProducts ?? 0));
      if (threaded && THREADS > 1) {
        assert.match(line, new RegExp(`, ${THREADS} threads`));
        assert.ok(split > 0, "no product was shared with the helpers");
      } else {
        assert.match(line, /one thread \((the page is not cross-origin isolated|this device reports one core)/);
        assert.equal(split, 0);
      }
    }
    assert.equal(await page.evaluate(() => self.crossOriginIsolated), threaded);
    if (serviceWorker) {
      // The host's answer had no headers: the service worker's reload brought them, once.
      assert.equal(loads.length, 2, `page loads: ${loads.join(", ")}`);
      assert.equal(loads[1], loads[0], "the reload keeps the page's address");
      assert.ok(await page.evaluate(() => Boolean(navigator.serviceWorker.controller)));
    } else {
      assert.equal(loads.length, 1, `page loads: ${loads.join(", ")}`);
      if (!isolated) assert.ok(logs.some((l) => l.includes("one thread for the CPU backend: service workers are blocked here")), logs.join("\n"));
    }
    // 404s are expected: no favicon, and the loader probes for tokenizer.json before vocab.json.
    const errors = logs.filter((l) => /error|panicked|unreachable/i.test(l) && !/status of 404/.test(l));
    assert.deepEqual(errors, [], `console errors:\n${logs.join("\n")}`);
    await screenshot(page, `next-token-${model}-${webgpu ? "webgpu" : "cpu"}${isolated ? "-isolated" : ""}${serviceWorker ? "-service-worker" : ""}.png`);
    // A score belongs to its context: editing the context takes it away.
    await page.getByTestId("context").fill(`${CONTEXT} the`);
    await page.locator("[data-testid=word-prob]").waitFor({ state: "detached", timeout: TIMEOUT });
    // The Model page names the architecture it loaded.
    await page.getByRole("link", { name: "Model", exact: true }).click();
    assert.match(await page.getByTestId("model-loaded").innerText(), ARCHITECTURE[model]);
  } catch (e) {
    await screenshot(page, `FAILED-next-token-${model}-${webgpu ? "webgpu" : "cpu"}${isolated ? "-isolated" : ""}${serviceWorker ? "-service-worker" : ""}.png`).catch(() => {});
    console.error(logs.join("\n"));
    throw e;
  } finally {
    await browser.close();
  }
}

test("next-token distribution on WebGPU matches the CLI", { timeout: 2 * TIMEOUT }, () => checkMode(true));
test("next-token distribution with WebGPU absent falls back to the CPU and matches the CLI", { timeout: 2 * TIMEOUT }, () => checkMode(false));
test("GPT-NeoX: next tokens and a word's score on WebGPU match the CLI", { timeout: 2 * TIMEOUT }, () => checkMode(true, "test-gpt-neox"));
test("GPT-NeoX: next tokens and a word's score on the browser's CPU match the CLI", { timeout: 2 * TIMEOUT }, () => checkMode(false, "test-gpt-neox"));
test("Llama: next tokens and a word's score on WebGPU match the CLI", { timeout: 2 * TIMEOUT }, () => checkMode(true, "test-llama"));
test("Llama: next tokens and a word's score on the browser's CPU match the CLI", { timeout: 2 * TIMEOUT }, () => checkMode(false, "test-llama"));
test("cross-origin isolated, the browser's CPU shares its products with helper workers and matches the CLI", { timeout: 2 * TIMEOUT }, () => checkMode(false, "test", { isolated: true }));
test("Llama, cross-origin isolated: the CPU's helpers give the CLI's numbers", { timeout: 2 * TIMEOUT }, () => checkMode(false, "test-llama", { isolated: true }));
test("on a host that sends no COOP/COEP, the service worker isolates the page after one reload, and the CPU's helpers match the CLI", { timeout: 2 * TIMEOUT }, () => checkMode(false, "test", { serviceWorker: true }));

/** The inference worker (not a product helper: those sleep in `Atomics.wait` and cannot be asked). */
async function computeWorker(page) {
  for (const worker of page.workers()) {
    const asleep = new Promise((resolve) => setTimeout(() => resolve(false), 2000));
    if (await Promise.race([worker.evaluate(() => self.name !== "clozelab-product-helper").catch(() => false), asleep])) return worker;
  }
  throw new Error("no inference worker");
}

// `?precision=f16`: f16 weights where the adapter offers shader-f16 (then the list stays within
// the stated tolerance of the CLI's f32 one), else f32 with a note saying why.
test("f16 asked for: used where the adapter offers shader-f16, else f32 with the reason", { timeout: 2 * TIMEOUT }, async () => {
  const { browser, page, logs } = await launch({ webgpu: true });
  try {
    await page.goto(`${served.base}/next-token?model=models/test/&precision=f16`);
    const line = page.getByTestId("precision");
    await line.waitFor({ timeout: TIMEOUT });
    const offered = await page.evaluate(async () => {
      const adapter = await navigator.gpu?.requestAdapter();
      return Boolean(adapter?.features.has("shader-f16"));
    });
    const text = await page.getByTestId("backend-status").innerText();
    if (offered) {
      assert.equal(await line.getAttribute("data-precision"), "f16", text);
      assert.match(text, /weights in f16\. Back to f32/);
    } else {
      assert.equal(await line.getAttribute("data-precision"), "f32", text);
      assert.match(text, /f16 was asked for: it needs WebGPU with shader-f16/);
    }
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("context").fill(CONTEXT);
    const list = page.locator(`[data-testid=token-list][data-context="${CONTEXT}"]`);
    await list.waitFor({ timeout: TIMEOUT });
    const shown = await list.locator("li").evaluateAll((items) => items.map((li) => Number(li.dataset.logprob)));
    const reference = cliNextToken(MODEL_DIR, CONTEXT, TOP).tokens;
    const gap = shown.reduce((sum, lp, i) => sum + Math.abs(Math.exp(lp) - Math.exp(reference[i].logprob)), 0);
    // f16: at most twice the next-token TVD the golden contexts allow it (1e-3 on this model).
    assert.ok(gap <= (offered ? 2e-3 : 1e-4), `top ${TOP} probabilities differ from the CLI's f32 by ${gap} in all`);
    await screenshot(page, `next-token-precision-${offered ? "f16" : "f32"}.png`);
  } catch (e) {
    await screenshot(page, "FAILED-next-token-precision.png").catch(() => {});
    console.error(logs.join("\n"));
    throw e;
  } finally {
    await browser.close();
  }
});

// A GPU fault after a first answer: the next request meets it, the worker moves to the CPU,
// loads the model again there, and the answer is the CLI's; the backend line says why.
async function checkGpuFault(fault, reason, name) {
  const { browser, page, logs } = await launch({ webgpu: true });
  try {
    await page.goto(`${served.base}/next-token?model=models/test/`);
    const status = page.getByTestId("backend-status").locator("[data-backend]");
    await status.waitFor({ timeout: TIMEOUT });
    assert.equal(await status.getAttribute("data-backend"), "wgpu");
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    const first = "The quick brown";
    await page.getByTestId("context").fill(first);
    await page.locator(`[data-testid=token-list][data-context="${first}"]`).waitFor({ timeout: TIMEOUT });
    const [worker] = page.workers();
    assert.ok(await worker.evaluate(fault), "the worker holds a WebGPU device");
    await page.getByTestId("context").fill(CONTEXT);
    const list = page.locator(`[data-testid=token-list][data-context="${CONTEXT}"]`);
    await list.waitFor({ timeout: TIMEOUT });
    await page.locator("[data-backend=cpu]").waitFor({ timeout: TIMEOUT });
    assert.match(await page.getByTestId("backend-status").innerText(), reason);
    const shown = await list.locator("li").evaluateAll((items) => items.map((li) => ({ id: Number(li.dataset.id), logprob: Number(li.dataset.logprob) })));
    const reference = cliNextToken(MODEL_DIR, CONTEXT, TOP).tokens;
    assert.deepEqual(shown.map((t) => t.id), reference.map((t) => t.id));
    shown.forEach((t, i) => assert.ok(Math.abs(t.logprob - reference[i].logprob) <= TOLERANCE, `rank ${i}`));
    const crashes = logs.filter((l) => /panicked|unreachable/i.test(l));
    assert.deepEqual(crashes, [], logs.join("\n"));
    await screenshot(page, `next-token-${name}.png`);
  } catch (e) {
    await screenshot(page, `FAILED-next-token-${name}.png`).catch(() => {});
    console.error(logs.join("\n"));
    throw e;
  } finally {
    await browser.close();
  }
}

test("the WebGPU device lost mid-session: the app moves to the CPU, loads the model again and answers as the CLI", { timeout: 2 * TIMEOUT }, () =>
  // The GPU goes away (as after a driver reset): the device burn-wgpu holds is destroyed.
  checkGpuFault(() => { const gpu = globalThis.__clozelabGpu; gpu?.device.destroy(); return Boolean(gpu); }, /WebGPU device was lost/, "device-lost"));

test("a GPU that computes NaN: the app moves to the CPU, says why and answers as the CLI", { timeout: 2 * TIMEOUT }, () =>
  // Every buffer read back from the GPU holds NaN from now on, as a driver whose built-in
  // overflowed would give (WGSL's tanh past exp's range did in Chromium's engine).
  checkGpuFault(() => {
    const map = GPUBuffer.prototype.getMappedRange;
    GPUBuffer.prototype.getMappedRange = function (...args) {
      const range = map.apply(this, args);
      if (this.usage & GPUBufferUsage.MAP_READ) new Float32Array(range).fill(NaN);
      return range;
    };
    return Boolean(globalThis.__clozelabGpu);
  }, /not numbers \(NaN\)/, "not-a-number"));
