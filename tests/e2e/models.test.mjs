// People against several models in the page: the GPT-2, GPT-NeoX (Pythia's architecture) and
// Llama (SmolLM2's) test models, each from its folder or as a hub model and revision
// (`owner/name@revision`, read from a stand-in hub through `?hub=`, as Hugging Face's
// `HF_ENDPOINT` names a mirror), switched where they are used: a passage played with feedback
// from each, then the Analysis page with each model beside the files' system and two people:
// a row each in Table 1, a probability column each beside a participant, and a surprisal column
// group each in trials.csv, as `clozelab results --model` writes them.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DIST, ROOT, cliBinary, download, parseCsv, serveDist, screenshot, withPage } from "./harness.mjs";

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
    // The field suggests the three folders this browser now keeps, the hub's revision among them.
    const kept = [`${served.base}/models/test/`, `${hub}/clozelab/test-gpt-neox/resolve/step1000/`, `${served.base}/models/test-llama/`];
    await page.waitForFunction((want) => {
      const offered = [...document.querySelectorAll("#kept-models option")].map((o) => o.value);
      return want.every((u) => offered.includes(u));
    }, kept, { timeout: TIMEOUT });
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
    // The JSON export's manifest names the model it holds now: its architecture, its own
    // tokenizer and its weights' fingerprint.
    await page.locator("details.data-panel summary").click();
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("download-json").click()]);
    const { manifest, responses } = JSON.parse(await readFile(await download.path(), "utf8"));
    assert.equal(responses.length, 4);
    assert.equal(manifest.model_name, "models/test-llama/");
    assert.equal(manifest.architecture, "Llama");
    const vocabulary = Object.keys(JSON.parse(await readFile(join(DIST, "models/test-llama/tokenizer.json"), "utf8")).model.vocab).length;
    assert.equal(manifest.tokenizer, `tokenizer.json, ${vocabulary} tokens`);
    assert.equal(manifest.weight_sha256, createHash("sha256").update(await readFile(join(DIST, "models/test-llama/model.safetensors"))).digest("hex"));
    await screenshot(page, "models-play-llama.png");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "models-play-llama-phone.png");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at phone width`);
  }));

test("GPT-2, GPT-NeoX and Llama each sampled on every context and scoring every target word, switched on the Analysis page: Table 1, a participant and trials.csv hold all three", { timeout: 8 * TIMEOUT }, () =>
  withPage("models-analysis", {}, async (page) => {
    const dir = await mkdtemp(join(tmpdir(), "clozelab-models-"));
    const row = (participant, position, response) => `${participant},1,${position},${response},1500,2026-11-22T10:00:00Z`;
    const exportCsv = join(dir, "export.csv");
    await writeFile(exportCsv, ["participant,passage,position,response,response_time_ms,timestamp", row("ann", 3, "lighthouse"), row("ann", 4, "keeper"), row("bob", 3, "lamp")].join("\n") + "\n");
    await page.goto(`${served.base}/analysis?model=models/test/`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("analysis-files").setInputFiles([...FILES, exportCsv]);
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length === 3, null, { timeout: TIMEOUT });
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
      await page.getByTestId("model-surprisal-run").click({ timeout: TIMEOUT });
      await page.waitForFunction((n) => document.querySelectorAll("[data-testid=model-surprisal-summary] li").length === n, i + 1, { timeout: 2 * TIMEOUT });
      // The new columns make the page analyse again, which draws the model field anew: wait,
      // as a person sees "Computing in the worker…" go, before typing the next model.
      await page.waitForFunction(() => !document.querySelector("[data-testid=analysing]") && document.querySelector("[data-testid=model-source]"), null, { timeout: 2 * TIMEOUT });
    }
    const systems = await page.locator("[data-testid=table1] tr[data-system]").evaluateAll((rows) => rows.map((r) => r.dataset.system));
    const sampled = models.map((m) => `${m} (sampled here)`);
    for (const system of ["samples_small_model", ...sampled]) assert.ok(systems.includes(system), `${system} in ${systems}`);
    for (const model of models) {
      const contexts = await page.locator(`[data-testid=table1] tr[data-system="${model} (sampled here)"] td`).first().innerText();
      assert.equal(contexts.trim(), "24", model);
    }
    await page.getByTestId("table1").scrollIntoViewIfNeeded();
    await screenshot(page, "models-table1.png");
    // A participant beside all four systems at once: a probability column and a row each.
    await page.getByTestId("participant-select").selectOption("ann");
    await page.getByTestId("participant-compare").click();
    await page.waitForFunction(() => document.querySelector('[data-testid=participant-panel] [data-figure="participant-accuracy"]')?.dataset.drawn === "true", null, { timeout: TIMEOUT });
    const table = page.getByTestId("participant-table");
    const heads = await table.locator("thead th").allInnerTexts();
    for (const system of ["samples_small_model", ...sampled]) assert.ok(heads.includes(`P(${system})`), `P(${system}) in ${heads}`);
    const names = await table.locator("tbody th").allInnerTexts();
    assert.deepEqual(names, ["ann", "samples_small_model", ...sampled, "Oracle (others' majority)"]);
    for (const r of await table.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.querySelectorAll("[data-col=system_prob]").length))) assert.equal(r, 4);
    await page.getByTestId("participant-panel").scrollIntoViewIfNeeded();
    await screenshot(page, "models-participant.png");
    // trials.csv: a surprisal column group per model, each as `clozelab results --model` has it.
    const trials = parseCsv(await readFile(await download(page, "download-trials", dir), "utf8"));
    const out = join(dir, "cli");
    execFileSync(cliBinary(), ["results", ...[...FILES, exportCsv].flatMap((f) => ["--file", f]), ...models.flatMap((m) => ["--model", join(DIST, m)]), "--out", out], { stdio: ["ignore", "ignore", "pipe"] });
    const cli = parseCsv(await readFile(join(out, "trials.csv"), "utf8"));
    const groups = ["", "_2", "_3"].map((n) => [`surprisal_bits${n}`, `surprisal_all_segmentations_bits${n}`]);
    for (const group of groups) for (const column of group) assert.ok(trials.header.includes(column) && cli.header.includes(column), `${column} in ${trials.header} and ${cli.header}`);
    assert.equal(trials.rows.length, 3);
    assert.equal(cli.rows.length, 3);
    const modelColumns = ["surprisal_model", "surprisal_model_2", "surprisal_model_3"];
    assert.deepEqual(modelColumns.map((c) => trials.rows[0][c]), ["test", "test-gpt-neox", "test-llama"]);
    trials.rows.forEach((r, i) => {
      for (const column of groups.flat()) {
        assert.ok(r[column] !== "" && Math.abs(Number(r[column]) - Number(cli.rows[i][column])) < 1e-3, `row ${i} ${column}: page ${r[column]}, CLI ${cli.rows[i][column]}`);
      }
      // Three different models: their surprisals differ.
      assert.notEqual(r.surprisal_bits, r.surprisal_bits_2);
      assert.notEqual(r.surprisal_bits_2, r.surprisal_bits_3);
    });
    await rm(dir, { recursive: true, force: true });
  }));
