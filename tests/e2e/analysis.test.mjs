// The Analysis page on the small synthetic dataset (tests/fixtures/analysis): the files are
// given, Table 1 and every figure are drawn and downloadable (SVG, PNG, CSV), the per-context
// figure follows the search, and the numbers in the page equal `clozelab figures`'.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, assertSameAsCli, cliTable, serveDist, screenshot, withPage, cliBinary } from "./harness.mjs";

const TIMEOUT = 120_000;
const FIXTURES = join(ROOT, "tests/fixtures/analysis");
const FILES = ["norms.jsonl", "samples_small_model.jsonl", "continuations_small_model.jsonl"].map((f) => join(FIXTURES, f));

let served;
before(async () => { served = await serveDist(); });
after(() => served?.server.close());

test("analysis: the figures from given files, downloadable, equal to the CLI's", { timeout: 3 * TIMEOUT }, () =>
  withPage("analysis", {}, async (page) => {
    await page.goto(`${served.base}/analysis`);
    await page.getByTestId("analysis-files").setInputFiles(FILES);
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length === 3, null, { timeout: TIMEOUT });
    await page.getByTestId("analysis-resamples").fill("3");
    await page.getByTestId("analyse").click();
    await page.getByTestId("table1").waitFor({ timeout: TIMEOUT });
    const figures = page.getByTestId("figure");
    await page.waitForFunction(() => {
      const all = [...document.querySelectorAll("[data-testid=figure]")];
      return all.length >= 9 && all.every((f) => f.dataset.drawn === "true");
    }, null, { timeout: TIMEOUT });
    const ids = await figures.evaluateAll((all) => all.map((f) => f.dataset.figure));
    for (const id of ["context-1-2", "norming_precision", "tvd-density", "reliability-original", "reliability-human-majority", "reliability-oracle-majority", "interpretation-mean", "interpretation-w1", "predictors-samples-small-model"]) {
      assert.ok(ids.includes(id), `${id} in ${ids}`);
    }
    // Each figure's canvas has been drawn on (not blank).
    const inked = await page.evaluate(() => [...document.querySelectorAll("[data-testid=figure] canvas")].map((c) => {
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let dark = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] < 200) dark++;
      return dark;
    }));
    assert.ok(inked.every((n) => n > 500), `ink per figure: ${inked}`);
    await screenshot(page, "analysis.png");

    // The numbers equal the CLI's (3 decimals shown).
    await assertSameAsCli(page, await cliTable(FILES), ["Oracle", "samples_small_model", "continuations_small_model"]);

    // Downloads: SVG, PNG and CSV of a figure, and Table 1.
    const density = page.locator('[data-figure="tvd-density"]');
    for (const [button, check] of [
      ["download-svg", (b) => b.toString("utf8").startsWith("<svg")],
      ["download-png", (b) => b.subarray(1, 4).toString() === "PNG"],
      ["download-csv", (b) => b.toString("utf8").startsWith("system,tvd,density,bandwidth")],
    ]) {
      const [download] = await Promise.all([page.waitForEvent("download"), density.getByTestId(button).click()]);
      const bytes = await readFile(await download.path());
      assert.ok(check(bytes), `${button}: ${download.suggestedFilename()}`);
    }
    const [table] = await Promise.all([page.waitForEvent("download"), page.getByTestId("download-table1").click()]);
    assert.match(await readFile(await table.path(), "utf8"), /^system,contexts,ece_original/);

    // The per-context figure follows the search and the system chosen.
    await page.getByTestId("context-search").fill("children ran outside");
    await page.getByTestId("context-matches").locator("button").first().click();
    await page.waitForFunction(() => /^context-2-/.test(document.querySelector("[data-testid=context-figure] [data-testid=figure]")?.dataset.figure ?? ""), null, { timeout: TIMEOUT });
    await page.getByTestId("context-system").selectOption("continuations_small_model");
    await page.waitForFunction(() => /continuations_small_model/.test(document.querySelector("[data-testid=context-figure] figcaption")?.innerText ?? ""), null, { timeout: TIMEOUT });
    await page.getByTestId("context-figure").scrollIntoViewIfNeeded();
    await screenshot(page, "analysis-context.png");
  }));

test("analysis: a file that is neither norms nor samples is named in a clear error", { timeout: TIMEOUT }, () =>
  withPage("analysis-bad", {}, async (page) => {
    await page.goto(`${served.base}/analysis`);
    await page.getByTestId("analysis-files").setInputFiles([
      { name: "norms.jsonl", mimeType: "application/json", buffer: await readFile(FILES[0]) },
      { name: "odd.jsonl", mimeType: "application/json", buffer: Buffer.from('{"text_id": 1, "word_num": 2}\n') },
    ]);
    await page.getByTestId("analyse").click();
    const error = page.getByTestId("analysis-error");
    await error.waitFor({ timeout: TIMEOUT });
    assert.match(await error.innerText(), /odd\.jsonl.*not a sample file/);
  }));

test("analysis: the loaded model sampled on every context becomes a system, and a reload reuses what was sampled", { timeout: 4 * TIMEOUT }, () =>
  withPage("analysis-model", {}, async (page) => {
    const run = async () => {
      await page.goto(`${served.base}/analysis?model=models/test/`);
      await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
      await page.getByTestId("analysis-files").setInputFiles(FILES.slice(0, 2));
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length === 2, null, { timeout: TIMEOUT });
      await page.getByTestId("analysis-resamples").fill("2");
      await page.getByTestId("analyse").click();
      await page.getByTestId("model-samples-run").waitFor({ timeout: TIMEOUT });
      await page.getByTestId("model-samples-n").fill("5");
      await page.getByTestId("model-samples-run").click();
      await page.waitForFunction(() => /^All 24 contexts sampled/.test(document.querySelector("[data-testid=model-samples-status]")?.innerText ?? ""), null, { timeout: 3 * TIMEOUT });
      const status = await page.getByTestId("model-samples-status").innerText();
      await page.locator('[data-testid=table1] tr[data-system="models/test/ (sampled here)"]').waitFor({ timeout: TIMEOUT });
      return status;
    };
    const first = await run();
    assert.match(first, /\(24 now, the rest from this browser's cache\)/);
    const contexts = await page.locator('[data-testid=table1] tr[data-system="models/test/ (sampled here)"] td').first().innerText();
    assert.equal(contexts.trim(), "24");
    // Appendix D: the token level, as the CLI computes it on the same norms and model.
    await page.getByTestId("token-level-run").click();
    await page.getByTestId("token-level-row").waitFor({ timeout: 2 * TIMEOUT });
    const shown = await page.getByTestId("token-level-row").locator("td").allInnerTexts();
    const cli = JSON.parse(execFileSync(cliBinary(), ["token-level", "--model", join(ROOT, "public/models/test"), "--file", FILES[0], "--resamples", "1", "--json"], { encoding: "utf8" }).trim().split("\n").pop()).token_level;
    assert.deepEqual(shown.map((c) => c.trim()), ["token", String(cli.contexts), cli.tvd.toFixed(3), cli.ece_original.toFixed(3), cli.ece_majority.toFixed(3), cli.top1_accuracy.toFixed(3)]);
    // Its figure: the token level's TVD density beside each system's word level.
    await page.waitForFunction(() => document.querySelector('[data-figure="token-level-density"]')?.dataset.drawn === "true", null, { timeout: TIMEOUT });
    const levels = await page.getByTestId("token-level-table").locator("tbody tr").evaluateAll((rows) => rows.map((r) => `${r.querySelector("th").innerText} ${r.querySelector("td").innerText}`));
    assert.deepEqual(levels, ["models/test/ token", "samples_small_model word", "models/test/ (sampled here) word"]);
    await screenshot(page, "analysis-model-samples.png");
    // A new visit finds every context in IndexedDB: nothing is sampled again.
    const second = await run();
    assert.match(second, /\(0 now, the rest from this browser's cache\)/);
  }));

test("analysis: a participant of the exports, and the player's own saved answers, beside the model and the oracle, as the CLI computes them", { timeout: 3 * TIMEOUT }, () =>
  withPage("analysis-participant", {}, async (page) => {
    const dir = await mkdtemp(join(tmpdir(), "clozelab-participant-"));
    try {
      const row = (participant, position, response) => `${participant},1,${position},${response},1500,2026-11-22T10:00:00Z`;
      const exportCsv = join(dir, "export.csv");
      await writeFile(exportCsv, ["participant,passage,position,response,response_time_ms,timestamp", row("ann", 3, "lighthouse"), row("ann", 4, "keeper"), row("bob", 3, "lamp"), row("bob", 5, "stairs")].join("\n") + "\n");
      const own = { participant: "you", passage: "1", position: 3, response: "night", response_time_ms: 900, timestamp: "2026-11-22T11:00:00Z", normalized: "night", first_keystroke_ms: null, practice: false };
      const ownJson = join(dir, "own.json");
      await writeFile(ownJson, JSON.stringify([own]));

      await page.goto(`${served.base}/analysis`);
      await page.getByTestId("analysis-files").setInputFiles([FILES[0], FILES[1], exportCsv]);
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length === 3, null, { timeout: TIMEOUT });
      await page.getByTestId("analysis-resamples").fill("2");
      await page.getByTestId("analyse").click();
      await page.getByTestId("participant-panel").waitFor({ timeout: TIMEOUT });
      // Nothing saved in this browser yet: said plainly.
      await page.getByTestId("add-own-answers").click();
      await page.getByRole("alert").filter({ hasText: "no answers are saved in this browser" }).waitFor({ timeout: TIMEOUT });
      // An answer saved as the game saves it, then added to the data.
      await page.evaluate((record) => new Promise((resolve, reject) => {
        const open = indexedDB.open("clozelab");
        open.onsuccess = () => {
          const tx = open.result.transaction("responses", "readwrite");
          tx.objectStore("responses").put(JSON.stringify(record), `play\u001flocal-0000000000000001\u001f${record.participant}\u001f${record.passage}\u001f000003`);
          tx.oncomplete = () => { open.result.close(); resolve(); };
          tx.onerror = () => reject(tx.error);
        };
        open.onerror = () => reject(open.error);
      }), own);
      await page.getByTestId("add-own-answers").click();
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=participant-select] option").length === 3, null, { timeout: TIMEOUT });
      const options = await page.getByTestId("participant-select").locator("option").allInnerTexts();
      assert.deepEqual(options, ["ann", "bob", "you"]);

      for (const who of ["ann", "you"]) {
        assert.deepEqual(await shownParticipant(page, who), await cliParticipant([FILES[0], FILES[1]], who, [exportCsv, ownJson]), who);
      }
      await page.getByTestId("participant-panel").scrollIntoViewIfNeeded();
      await screenshot(page, "analysis-participant.png");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }));

test("analysis: hostile text in norms, samples and exports stays text, and a spreadsheet cannot run it", { timeout: 2 * TIMEOUT }, () =>
  withPage("analysis-hostile", {}, async (page) => {
    const IMG = "<img src=x onerror=alert(1)>";
    const norms = [2, 3, 4].map((w) => JSON.stringify({ text_id: 1, word_num: w, context: `${IMG} the ${"word ".repeat(w - 2)}`.trim(), original: "word", human: { word: 3, "<script>alert(2)</script>": 2, other: 1 } })).join("\n");
    const samples = [2, 3, 4].map((w) => JSON.stringify({ text_id: 1, word_num: w, samples: { word: 2, "<b>bold</b>": 2 } })).join("\n");
    const exportCsv = ["participant,passage,position,response,response_time_ms,timestamp", `"<img src=y onerror=alert(3)>",1,2,word,900,t`, `"<img src=y onerror=alert(3)>",1,3,other,900,t`, `=HYPERLINK(1),1,2,other,900,t`].join("\n") + "\n";
    await page.goto(`${served.base}/analysis`);
    await page.getByTestId("analysis-files").setInputFiles([
      { name: `${IMG}.jsonl`, mimeType: "application/json", buffer: Buffer.from(norms) },
      { name: "samples.jsonl", mimeType: "application/json", buffer: Buffer.from(samples) },
      { name: "export.csv", mimeType: "text/csv", buffer: Buffer.from(exportCsv) },
    ]);
    await page.getByTestId("analysis-resamples").fill("2");
    await page.getByTestId("analyse").click();
    await page.getByTestId("participant-panel").waitFor({ timeout: TIMEOUT });
    assert.ok((await page.getByTestId("analysis-file-list").innerText()).includes(`${IMG}.jsonl`));
    assert.ok((await page.getByTestId("context-matches").innerText()).includes(IMG), "contexts are listed as text");
    const options = await page.getByTestId("participant-select").locator("option").allInnerTexts();
    assert.deepEqual(options, ["<img src=y onerror=alert(3)>", "=HYPERLINK(1)"]);
    await page.getByTestId("participant-compare").click();
    await page.waitForFunction(() => document.querySelector('[data-testid=participant-panel] [data-figure="participant-accuracy"]')?.dataset.drawn === "true", null, { timeout: TIMEOUT });
    assert.equal((await page.getByTestId("participant-table").locator("tbody th").first().innerText()), "<img src=y onerror=alert(3)>");
    assert.equal(await page.locator("main img, main script, main b").count(), 0, "nothing imported became markup");
    // The histogram's CSV names the participants: exact by default, inert for a spreadsheet.
    const histogram = page.locator('[data-testid=participant-panel] [data-figure="participant-accuracy"]');
    const csvOf = async (button) => {
      const [download] = await Promise.all([page.waitForEvent("download"), histogram.getByTestId(button).click()]);
      return readFile(await download.path(), "utf8");
    };
    const exact = await csvOf("download-csv");
    assert.ok(exact.split("\n").some((l) => l.startsWith("=HYPERLINK(1),")), exact);
    const safe = await csvOf("download-csv-spreadsheet");
    assert.ok(safe.split("\n").some((l) => l.startsWith("'=HYPERLINK(1),")), safe);
    assert.ok(!safe.split("\n").some((l) => /^[=+\-@]/.test(l)), safe);
    await screenshot(page, "analysis-hostile.png");
  }));

const PROVO = join(ROOT, "..", "shared", "provo");
const PROVO_FILES = ["provo_cloze.jsonl", "samples_gpt2_ancestral_n1000.jsonl", "samples_gpt2_temp0.5_n40.jsonl", "samples_bloom176b_raw_continuations.jsonl", "samples_chatgpt_words.jsonl"].map((f) => join(PROVO, f));

/** Scores of one participant from `clozelab figures --participant`, as the page shows them:
 * the CLI's tidy rows (one per predictor and system) gathered into one row per predictor. */
async function cliParticipant(files, who, responses = []) {
  const out = await mkdtemp(join(tmpdir(), "clozelab-participant-cli-"));
  try {
    execFileSync(cliBinary(), ["figures", "--resamples", "2", "--participant", who, "--out", out, ...files.flatMap((f) => ["--file", f]), ...responses.flatMap((f) => ["--responses", f])]);
    const [header, ...lines] = (await readFile(join(out, `participant-${who}.csv`), "utf8")).trim().split(/\r?\n/);
    const cols = header.split(",");
    const rows = [];
    for (const e of lines.map((l) => Object.fromEntries(l.split(",").map((c, i) => [cols[i], c])))) {
      let row = rows.find((r) => r.name === e.predictor);
      if (!row) {
        row = { name: e.predictor, top1: `${(100 * Number(e.top1_accuracy)).toFixed(1)} %`, probs: [], rank: `${e.rank} of ${e.participants}` };
        rows.push(row);
      }
      row.probs.push(e.system_prob === "" ? "—" : Number(e.system_prob).toFixed(3));
    }
    return rows;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** Compares `who` in the page's participant panel with every system. */
async function shownParticipant(page, who) {
  await page.getByTestId("participant-select").selectOption(who);
  await page.getByTestId("participant-compare").click();
  await page.waitForFunction((name) => document.querySelector("[data-testid=participant-table] tbody th")?.innerText === name, who, { timeout: TIMEOUT });
  await page.waitForFunction(() => document.querySelector('[data-testid=participant-panel] [data-figure="participant-accuracy"]')?.dataset.drawn === "true", null, { timeout: TIMEOUT });
  return page.getByTestId("participant-table").locator("tbody tr").evaluateAll((rows) => rows.map((r) => ({
    name: r.querySelector("th").innerText,
    top1: r.querySelector("[data-col=top1]").innerText,
    probs: [...r.querySelectorAll("[data-col=system_prob]")].map((c) => c.innerText),
    rank: r.querySelector("[data-col=rank]").innerText,
  })));
}

test("analysis: every figure on the Provo data in ../shared, the numbers equal to the CLI's", { timeout: 3 * TIMEOUT }, async (t) => {
  if (!existsSync(PROVO)) {
    if (process.env.CLOZELAB_REQUIRE_SHARED === "1") assert.fail(`${PROVO} is missing`);
    t.skip("../shared/provo absent");
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), "clozelab-provo-export-"));
  // Two participants of a study on Provo text 1: one names the original word, one says "the".
  const norms = (await readFile(PROVO_FILES[0], "utf8")).trim().split("\n").map((l) => JSON.parse(l)).filter((c) => c.text_id === 1).slice(0, 8);
  const exportCsv = join(dir, "study-export.csv");
  await writeFile(exportCsv, ["participant,passage,position,response,response_time_ms,timestamp",
    ...norms.flatMap((c) => [`p1,1,${c.word_num},${c.original.replace(/[",]/g, "")},1000,2026-11-22T10:00:00Z`, `p2,1,${c.word_num},the,1000,2026-11-22T10:00:00Z`])].join("\n") + "\n");
  const files = [...PROVO_FILES, exportCsv];
  await withPage("analysis-provo", {}, async (page) => {
    await page.goto(`${served.base}/analysis?model=models/test/`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("analysis-files").setInputFiles(files);
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length === 6, null, { timeout: TIMEOUT });
    await page.getByTestId("analyse").click();
    await page.waitForFunction(() => {
      const all = [...document.querySelectorAll("[data-testid=figure]")];
      return all.length === 13 && all.every((f) => f.dataset.drawn === "true");
    }, null, { timeout: 2 * TIMEOUT });
    // The norms' precision: every Provo context, most meeting the default target.
    assert.match(await page.locator('[data-figure="norming_precision"]').innerText(), /Norming precision: \d+ of 2687 contexts \(9\d%\) meet 90% of the contexts/);
    const systems = ["Oracle", "GPT-2", "GPT-2 (T=0.5)", "BLOOM", "ChatGPT", "ChatGPT (list)"];
    await assertSameAsCli(page, await cliTable(files, "10"), systems);
    assert.equal((await page.locator('[data-testid=table1] tr[data-system="Human"] td').first().innerText()).trim(), "2687");
    await screenshot(page, "analysis-provo.png");
    // The participant panel and the token level on the same data.
    // p1 against all five systems at once, a probability column each.
    const p1 = await shownParticipant(page, "p1");
    assert.deepEqual(p1, await cliParticipant(files, "p1"));
    assert.equal(p1[0].probs.length, 5, JSON.stringify(p1));
    assert.deepEqual(p1.map((r) => r.name).slice(1, -1), ["GPT-2", "GPT-2 (T=0.5)", "BLOOM", "ChatGPT", "ChatGPT (list)"]);
    await page.getByTestId("participant-panel").scrollIntoViewIfNeeded();
    await screenshot(page, "analysis-provo-participant.png");
    await page.getByTestId("token-level-run").click();
    await page.waitForFunction(() => document.querySelector('[data-figure="token-level-density"]')?.dataset.drawn === "true", null, { timeout: 3 * TIMEOUT });
    const shown = await page.getByTestId("token-level-row").locator("td").allInnerTexts();
    const cli = JSON.parse(execFileSync(cliBinary(), ["token-level", "--model", join(ROOT, "public/models/test"), ...files.flatMap((f) => ["--file", f]), "--resamples", "1", "--json"], { encoding: "utf8" }).trim().split("\n").pop()).token_level;
    assert.deepEqual(shown.map((c) => c.trim()), ["token", String(cli.contexts), cli.tvd.toFixed(3), cli.ece_original.toFixed(3), cli.ece_majority.toFixed(3), cli.top1_accuracy.toFixed(3)]);
    await page.getByTestId("token-level").scrollIntoViewIfNeeded();
    await screenshot(page, "analysis-provo-token-level.png");
  });
  await rm(dir, { recursive: true, force: true });
});

test("analysis: syntactic and semantic TVD as the CLI computes them, and the production probes per strategy", { timeout: 4 * TIMEOUT }, () =>
  withPage("analysis-beyond-words", {}, async (page) => {
    await page.goto(`${served.base}/analysis?model=models/test/`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("analysis-files").setInputFiles(FILES.slice(0, 2));
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length === 2, null, { timeout: TIMEOUT });
    await page.getByTestId("analysis-resamples").fill("3");
    await page.getByTestId("analyse").click();
    await page.getByTestId("class-tvd-syntactic").click();
    const cell = (system, level) => page.locator(`[data-testid=class-tvd-table] tr[data-system="${system}"][data-level=${level}] td[data-col=tvd]`);
    await cell("samples_small_model", "syntactic").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("class-tvd-semantic").click();
    await cell("samples_small_model", "semantic").waitFor({ timeout: 2 * TIMEOUT });
    // The CLI on the same files, model and options.
    const out = await mkdtemp(join(tmpdir(), "clozelab-classes-"));
    try {
      execFileSync(cliBinary(), ["figures", "--resamples", "3", "--syntactic", "--semantic", "--model", join(ROOT, "public/models/test"),
        "--lexicon", join(ROOT, "node_modules/pos/lexicon.js"), "--out", out, ...FILES.slice(0, 2).flatMap((f) => ["--file", f])], { stdio: "pipe" });
      const [, ...lines] = (await readFile(join(out, "class_tvd.csv"), "utf8")).trim().split(/\r?\n/);
      assert.equal(lines.length, 4);
      for (const line of lines) {
        const [system, level, , tvd] = line.split(",");
        assert.equal((await cell(system, level).innerText()).trim(), Number(tvd).toFixed(3), `${system} ${level}`);
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
    for (const id of ["syntactic-tvd-samples-small-model", "semantic-tvd-samples-small-model"]) {
      await page.waitForFunction((id) => document.querySelector(`[data-figure="${id}"]`)?.dataset.drawn === "true", id, { timeout: TIMEOUT });
    }
    await page.locator('[data-testid=class-tvd-table]').scrollIntoViewIfNeeded();
    await screenshot(page, "analysis-class-tvd.png");

    // Probes: two strategies on three contexts.
    for (const name of ["temperature=0.7", "top-p=0.9", "typical=0.95"]) {
      await page.locator(`[data-testid=probes] input[data-strategy="${name}"]`).uncheck();
    }
    await page.getByTestId("probes-contexts").fill("3");
    await page.getByTestId("probes-samples").fill("6");
    await page.getByTestId("probes-run").click();
    await page.getByTestId("probes-summary").waitFor({ timeout: 2 * TIMEOUT });
    const rows = await page.locator("[data-testid=probes-summary] tbody tr").evaluateAll((trs) =>
      trs.map((tr) => [tr.dataset.strategy, tr.dataset.probe, Number(tr.querySelector("td[data-col=w1]").innerText)]));
    assert.deepEqual([...new Set(rows.map((r) => r[0]))], ["ancestral", "top-k=40"]);
    for (const probe of ["lexical 1-gram", "syntactic 1-gram", "semantic"]) {
      assert.ok(rows.some((r) => r[1] === probe), probe);
    }
    for (const [, , w1] of rows) assert.ok(w1 >= 0 && w1 <= 1, String(w1));
    await page.waitForFunction(() => document.querySelector('[data-figure="probes-summary-w1"]')?.dataset.drawn === "true", null, { timeout: TIMEOUT });
    await page.locator('[data-figure="probes-summary-w1"]').scrollIntoViewIfNeeded();
    await screenshot(page, "analysis-probes.png");
  }));

test("analysis: production probes on multi-reference data, the model's continuations as long as people's", { timeout: 2 * TIMEOUT }, () =>
  withPage("analysis-probes-references", {}, async (page) => {
    await page.goto(`${served.base}/analysis?model=models/test/`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    const dir = await mkdtemp(join(tmpdir(), "clozelab-refs-"));
    try {
      const refs = join(dir, "stories.jsonl");
      await writeFile(refs, [
        { context: "The cat", references: ["sat on the mat", "ran away", "was hungry", "slept all day"] },
        { context: "She opened the", references: ["door slowly", "box", "window and looked", "letter"] },
      ].map((l) => JSON.stringify(l)).join("\n") + "\n");
      // No norms analysed: the probes panel works on the references alone.
      await page.getByTestId("probes-references").setInputFiles(refs);
      await page.getByTestId("probes-references-name").waitFor({ timeout: TIMEOUT });
      for (const name of ["temperature=0.7", "top-k=40", "top-p=0.9", "typical=0.95"]) {
        await page.locator(`[data-testid=probes] input[data-strategy="${name}"]`).uncheck();
      }
      await page.getByTestId("probes-samples").fill("4");
      await page.getByTestId("probes-run").click();
      await page.getByTestId("probes-summary").waitFor({ timeout: TIMEOUT });
      const probes = await page.locator("[data-testid=probes-summary] tbody tr").evaluateAll((trs) => trs.map((tr) => tr.dataset.probe));
      // Multi-word productions: bigram probes are defined too.
      assert.ok(probes.includes("lexical 2-gram") && probes.includes("syntactic 2-gram"), probes.join(", "));
      const contexts = await page.locator("[data-testid=probes-per-context] tbody tr td:nth-child(2)").allTextContents();
      assert.deepEqual([...new Set(contexts)], ["line 1", "line 2"]);
      // A bad file is named, not a crash.
      const bad = join(dir, "bad.jsonl");
      await writeFile(bad, "{\"context\": \"A\", \"references\": [\"b\", \"c\"]}\nnot json\n");
      await page.getByTestId("probes-references").setInputFiles(bad);
      await page.getByTestId("probes-references-name").filter({ hasText: "bad.jsonl" }).waitFor({ timeout: TIMEOUT });
      await page.getByTestId("probes-run").click();
      await page.locator("[data-testid=probes] .error", { hasText: "bad.jsonl: line 2" }).waitFor({ timeout: TIMEOUT });
      await screenshot(page, "analysis-probes-references.png");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }));
