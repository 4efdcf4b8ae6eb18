// People against several models in the page: the GPT-2, GPT-NeoX (Pythia's architecture) and
// Llama (SmolLM2's) test models, each from its folder or as a hub model and revision
// (`owner/name@revision`, read from a stand-in hub through `?hub=`, as Hugging Face's
// `HF_ENDPOINT` names a mirror), switched where they are used: a passage played with feedback
// from each, then Table 1 on the Analysis page with a row for each beside the files' system.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import { DIST, ROOT, serveDist, screenshot, withPage } from "./harness.mjs";

const TIMEOUT = 120_000;
const FIXTURES = join(ROOT, "tests/fixtures/analysis");
const FILES = ["norms.jsonl", "samples_small_model.jsonl"].map((f) => join(FIXTURES, f));
// The stand-in hub: dist/hub/<owner>/<name>/resolve/<revision>/ is a model folder.
const HUB = join(DIST, "hub");
const HUB_GPT_NEOX = join(HUB, "clozelab", "test-gpt-neox", "resolve", "step1000");

let served;
before(async () => {
  await mkdir(join(HUB_GPT_NEOX, ".."), { recursive: true });
  await rm(HUB_GPT_NEOX, { force: true, recursive: true });
  await symlink(join(DIST, "models", "test-gpt-neox"), HUB_GPT_NEOX);
  served = await serveDist();
});
after(async () => {
  served?.server.close();
  await rm(HUB, { force: true, recursive: true });
});

/** Switches the loaded model with the model field and waits until the header names it. */
async function switchModel(page, typed, loadedName) {
  const field = page.getByTestId("model-source");
  await field.fill(typed);
  await page.getByTestId("model-switch-load").click();
  await page.locator("[data-ready=true]", { hasText: `Model: ${loadedName}` }).waitFor({ timeout: TIMEOUT });
}

async function guessAndSeeFeedback(page, word, modelLabel) {
  const input = page.getByTestId("guess");
  await input.waitFor({ timeout: TIMEOUT });
  await input.fill(word);
  await input.press("Enter");
  const bars = page.getByTestId("model-bars");
  await bars.waitFor({ timeout: TIMEOUT });
  assert.match(await bars.locator("figcaption").innerText(), new RegExp(`^${modelLabel} \\(100 samples\\)`));
  const probs = await bars.locator("li").evaluateAll((li) => li.map((x) => Number(x.dataset.prob)));
  assert.ok(probs.length > 0 && probs.every((p) => p > 0 && p <= 1), `${modelLabel}: ${probs}`);
}

test("a passage played with feedback from GPT-2, a Pythia revision from the hub and a SmolLM2-shaped model, switched in the game", { timeout: 4 * TIMEOUT }, () =>
  withPage("models-play", {}, async (page) => {
    const hub = `${served.base}/hub`;
    await page.goto(`${served.base}/?model=models/test/&hub=${encodeURIComponent(hub)}&PROLIFIC_PID=e2e-models`);
    await page.locator("[data-ready=true]", { hasText: "Model: models/test/" }).waitFor({ timeout: TIMEOUT });
    await page.locator('[data-testid=passage-list] li[data-passage="kitchen"] a').click({ timeout: TIMEOUT });
    await guessAndSeeFeedback(page, "sunday", "test");
    // Something that is neither a folder nor a hub id is refused by name, and nothing changes.
    await page.getByTestId("model-source").fill("gpt2");
    await page.getByTestId("model-switch-load").click();
    assert.match(await page.getByTestId("model-switch-problem").innerText(), /"gpt2" is neither a folder URL/);
    await page.getByTestId("next-context").click();
    await switchModel(page, "clozelab/test-gpt-neox@step1000", `${hub}/clozelab/test-gpt-neox/resolve/step1000/`);
    await guessAndSeeFeedback(page, "morning", "test-gpt-neox@step1000");
    await page.getByTestId("next-context").click();
    await switchModel(page, "models/test-llama/", "models/test-llama/");
    await guessAndSeeFeedback(page, "the", "test-llama");
    // A model the hub does not have: said so, and the model loaded before stays.
    await page.getByTestId("model-source").fill("clozelab/no-such-model@main");
    await page.getByTestId("model-switch-load").click();
    const problem = page.getByTestId("model-switch-problem");
    await problem.waitFor({ timeout: TIMEOUT });
    assert.match(await problem.innerText(), /the model loaded before stays: .*no-such-model.*config\.json/);
    await page.locator("[data-ready=true]", { hasText: "Model: models/test-llama/" }).waitFor({ timeout: TIMEOUT });
    await page.getByTestId("next-context").click();
    await guessAndSeeFeedback(page, "a", "test-llama");
    assert.match(await page.getByTestId("score").innerText(), /test-llama: /);
    await screenshot(page, "models-play-llama.png");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "models-play-llama-phone.png");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at phone width`);
  }));

test("Table 1 with GPT-2, GPT-NeoX and Llama each sampled on every context, switched on the Analysis page", { timeout: 6 * TIMEOUT }, () =>
  withPage("models-analysis", {}, async (page) => {
    await page.goto(`${served.base}/analysis?model=models/test/`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("analysis-files").setInputFiles(FILES);
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length === 2, null, { timeout: TIMEOUT });
    await page.getByTestId("analysis-resamples").fill("2");
    await page.getByTestId("analyse").click();
    const models = ["models/test/", "models/test-gpt-neox/", "models/test-llama/"];
    for (const [i, model] of models.entries()) {
      if (i > 0) await switchModel(page, model, model);
      await page.getByTestId("model-samples-n").fill("5");
      await page.getByTestId("model-samples-run").click();
      await page.locator(`[data-testid=table1] tr[data-system="${model} (sampled here)"]`).waitFor({ timeout: 3 * TIMEOUT });
      // Each model sampled every context itself: none was taken from another's kept samples.
      assert.match(await page.getByTestId("model-samples-status").innerText(), /^All 24 contexts sampled \(24 now/, model);
    }
    const systems = await page.locator("[data-testid=table1] tr[data-system]").evaluateAll((rows) => rows.map((r) => r.dataset.system));
    for (const system of ["samples_small_model", ...models.map((m) => `${m} (sampled here)`)]) assert.ok(systems.includes(system), `${system} in ${systems}`);
    for (const model of models) {
      const contexts = await page.locator(`[data-testid=table1] tr[data-system="${model} (sampled here)"] td`).first().innerText();
      assert.equal(contexts.trim(), "24", model);
    }
    await page.getByTestId("table1").scrollIntoViewIfNeeded();
    await screenshot(page, "models-table1.png");
  }));
