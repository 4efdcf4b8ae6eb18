// Loading a model in the browser: a second visit works offline from Cache Storage, local
// files load through the file picker, and the Model page times the loaded model.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readFile } from "node:fs/promises";
import { ROOT, serveDist, launch, screenshot } from "./harness.mjs";

const TIMEOUT = 240_000;
let served;
before(async () => { served = await serveDist(); });
after(() => served?.server.close());

test("a second visit loads the model from the browser cache with the network cut", { timeout: 2 * TIMEOUT }, async () => {
  const { browser, page, logs } = await launch({ webgpu: false });
  try {
    await page.goto(`${served.base}/model?model=models/test/`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    // Cut every model download: only Cache Storage can serve the files now.
    let blocked = 0;
    await page.route("**/models/test/**", (route) => { blocked++; return route.abort(); });
    await page.reload();
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    assert.match(await page.getByTestId("model-state").innerText(), /Loaded models\/test\//);
    assert.ok(blocked <= 1, `only the optional tokenizer.json probe may touch the network, saw ${blocked}`);

    // The speed check: four figures from the worker, a longer context never faster by much
    // than a shorter one, and the word distribution (many forward passes) the slowest.
    await page.getByTestId("speed-run").click();
    await page.getByTestId("speed-table").waitFor({ timeout: TIMEOUT });
    const ms = {};
    for (const op of ["prefill-16", "prefill-64", "decode", "words"]) {
      ms[op] = Number(await page.locator(`[data-testid=speed-table] tr[data-op=${op}] td`).getAttribute("data-ms"));
      assert.ok(Number.isFinite(ms[op]) && ms[op] >= 0, `${op}: ${ms[op]}`);
    }
    assert.ok(ms.words > ms["prefill-16"], JSON.stringify(ms));
    assert.match(await page.getByTestId("speed-table").innerText(), /100 sampled continuations/);
    await screenshot(page, "model-speed-desktop.png");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "model-speed-phone.png");
  } catch (e) {
    console.error(logs.join("\n"));
    throw e;
  } finally {
    await browser.close();
  }
});

test("model files chosen in the file picker load; a bad weights file is a clear error", { timeout: 2 * TIMEOUT }, async () => {
  const { browser, page, logs } = await launch({ webgpu: false });
  const dir = join(ROOT, "public", "models", "test");
  try {
    await page.goto(`${served.base}/model`);
    await page.getByTestId("backend-status").locator("[data-backend]").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("model-state").getByText("No model loaded").waitFor();
    // Broken weights first: the page must say why and stay usable.
    const asBuffer = async (name) => ({ name, mimeType: "application/octet-stream", buffer: await readFile(join(dir, name)) });
    await page.locator("#model-files").setInputFiles([
      await asBuffer("config.json"), await asBuffer("vocab.json"), await asBuffer("merges.txt"),
      { name: "model.safetensors", mimeType: "application/octet-stream", buffer: Buffer.from("this is not a safetensors file") },
    ]);
    await page.getByRole("alert").filter({ hasText: "Could not load the model" }).waitFor({ timeout: TIMEOUT });
    assert.match(await page.getByTestId("model-state").innerText(), /weights file/);
    await page.locator("#model-files").setInputFiles(["config.json", "model.safetensors", "vocab.json", "merges.txt"].map((f) => join(dir, f)));
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    assert.match(await page.getByTestId("model-state").innerText(), /local files/);
    // The worker keeps the model across pages.
    await page.getByRole("link", { name: "Next token" }).click();
    await page.getByTestId("context").fill("Hello");
    await page.locator(`[data-testid=token-list][data-context="Hello"] li`).first().waitFor({ timeout: TIMEOUT });
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "next-token-phone.png");
  } catch (e) {
    console.error(logs.join("\n"));
    throw e;
  } finally {
    await browser.close();
  }
});
