// A pilot and a main study merged, as a researcher merges them: both studies have a passage
// `p1`, with different texts, in two lists; each is packaged by `clozelab jatos-package`, run on its own JATOS
// stand-in by two participants (the main study also by a JATOS test run), and both exports go
// onto the Analysis page together. trials.csv, runs.csv, norms.csv and flow.csv are read back
// column by column: every row has its own study's context, target word and text id, the test
// run takes no list place and is left out, and the flow adds up. `clozelab results` on the same
// two exports and a samples file naming both texts gives the page's tables, each row its own
// study's model columns; with `--model`, and on the page with the loaded model, each row gets
// its own text's surprisal of the target word, as `clozelab surprisal` gives it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { DIST, cliBinary, download, parseCsv, serveDist, screenshot, withPage } from "./harness.mjs";
import { startJatos } from "./jatos_fake.mjs";

const TIMEOUT = 120_000;
const STUDIES = {
  pilot: { text: "The baker sold fresh bread", answers: ["baker", "Sold", "cakes", "bread"], people: ["A1", "A2"] },
  main: { text: "The river ran very dry", answers: ["river", "ran", "very", "Wet"], people: ["B1", "B2", "TEST"] },
};

/** A passage's own text id, as clozelab makes it: SHA-256 of its id, a zero byte and its
 * words, the first 31 bits, from 2^31 up. */
function ownTextId(passage, text) {
  const digest = createHash("sha256").update(passage).update(Buffer.from([0])).update(text.split(/\s+/).join(" ")).digest();
  return (0x80000000 | (digest.readUInt32BE(0) >>> 1)) >>> 0;
}

/** Plays a one-passage study to its end (JATOS's end redirects to `done`). */
async function play(page, answers, done) {
  await page.getByTestId("consent-accept").click({ timeout: TIMEOUT });
  for (const word of answers) {
    const input = page.getByTestId("guess");
    await input.waitFor({ timeout: TIMEOUT });
    const before = await page.evaluate(() => document.querySelector("[data-testid=passage-context]")?.dataset.position);
    await input.fill(word);
    await input.press("Enter");
    await page.waitForFunction((b) => document.querySelector("[data-testid=passage-context]")?.dataset.position !== b || !document.querySelector("section.game"), before, { timeout: TIMEOUT });
  }
  await page.waitForURL(done, { timeout: TIMEOUT });
}

test("a pilot and a main study with a passage p1 of different texts, merged: every row its own study's", { timeout: 12 * TIMEOUT }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "clozelab-pilot-main-"));
  const served = await serveDist();
  const exports = {};
  try {
    for (const [name, study] of Object.entries(STUDIES)) {
      const jatos = await startJatos();
      try {
        const done = `${jatos.base}/prolific/submissions/complete?cc=${name.toUpperCase()}`;
        // Both studies have lists, so that the batch session counterbalances them.
        const config = {
          title: `Cloze ${name}`, study_id: `cloze-${name}`, consent: "Agree?", redirect_url: done,
          texts: [{ id: "p1", title: "One", text: study.text }],
          lists: [{ name: "A", passages: ["p1"] }, { name: "B", passages: ["p1"] }],
        };
        const file = join(dir, `${name}.json`);
        await writeFile(file, JSON.stringify(config));
        const jzip = join(dir, `${name}.jzip`);
        execFileSync(cliBinary(), ["jatos-package", "--study", file, "--dist", DIST, "--out", jzip, "--allow-development-build"], { stdio: ["ignore", "ignore", "pipe"] });
        await jatos.importStudy(jzip);
        for (const pid of study.people) {
          await withPage(`pilot-main-${name}-${pid}`, {}, async (page) => {
            await page.goto(pid === "TEST" ? jatos.links.testRun : `${jatos.links.generalMultiple}?PROLIFIC_PID=${pid}&STUDY_ID=prolific-${name}&SESSION_ID=s-${pid}`);
            await play(page, study.answers, done);
          });
        }
        // The test run took no place: the two participants have one list each.
        const ledger = Object.fromEntries(Object.entries(jatos.batch.data.clozelabLists).map(([who, e]) => [who, `${e.list} ${e.state}`]));
        assert.deepEqual(Object.keys(ledger).sort(), study.people.filter((p) => p !== "TEST").sort(), `${name}: ${JSON.stringify(ledger)}`);
        assert.deepEqual(Object.values(ledger).map((e) => e.split(" ")[0]).sort(), ["A", "B"]);
        exports[name] = await jatos.exportResults({ name: `${name}.zip` });
      } finally {
        jatos.server.close();
      }
    }
    // Model samples naming each study's p1 by its own text id: the pilot's model likes
    // "bread", the main study's "dry".
    const samples = join(dir, "samples_model.jsonl");
    const lines = [];
    for (const [word, study] of [["bread", STUDIES.pilot], ["dry", STUDIES.main]]) {
      for (let position = 2; position <= 5; position++) {
        lines.push(JSON.stringify({ text_id: ownTextId("p1", study.text), passage: "p1", word_num: position, samples: { [word]: 3, the: 1 } }));
      }
    }
    await writeFile(samples, lines.join("\n"));
    const got = {};
    await withPage("pilot-main-analysis", {}, async (page) => {
      await page.goto(`${served.base}/analysis`);
      await page.getByTestId("analysis-files").setInputFiles([exports.pilot, exports.main, samples]);
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length >= 3, null, { timeout: TIMEOUT });
      await page.getByTestId("analysis-resamples").fill("1");
      await page.getByTestId("analyse").click();
      await page.getByTestId("study-tables").waitFor({ timeout: TIMEOUT });
      assert.match(await page.getByTestId("analysis-notes").innerText(), /passage "p1" has 2 different texts, kept apart/);
      await page.getByTestId("participant-flow").locator("canvas").waitFor({ timeout: TIMEOUT });
      await screenshot(page, "pilot-main-analysis.png");
      for (const table of ["trials", "runs", "norms", "flow"]) {
        got[table] = parseCsv(await readFile(await download(page, `download-${table}`, dir), "utf8"));
      }
      const safe = await readFile(await download(page, "download-trials-spreadsheet", dir), "utf8");
      assert.ok(safe.startsWith("\ufeff"), "the spreadsheet variant has a byte-order mark");
      // The loaded model's surprisal of every target word joins the trial table.
      await page.goto(`${served.base}/analysis?model=models/test/`);
      await page.getByTestId("analysis-files").setInputFiles([exports.pilot, exports.main, samples]);
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length >= 3, null, { timeout: TIMEOUT });
      await page.getByTestId("analysis-resamples").fill("1");
      await page.getByTestId("analyse").click();
      await page.getByTestId("model-surprisal-run").click({ timeout: TIMEOUT });
      await page.getByTestId("model-surprisal-summary").locator("li").waitFor({ timeout: TIMEOUT });
      assert.match(await page.getByTestId("model-surprisal-summary").innerText(), /8 target words in trials\.csv/);
      await page.getByTestId("study-tables").waitFor({ timeout: TIMEOUT });
      await screenshot(page, "pilot-main-surprisal.png");
      got.trialsWithSurprisal = parseCsv(await readFile(await download(page, "download-trials", dir), "utf8"));
    });
    // trials.csv: every answer of every run, each with its own study's text.
    const textOf = (studyId) => STUDIES[studyId.replace("cloze-", "")].text;
    const rowsOf = (pid) => got.trials.rows.filter((r) => r.participant === (pid === "TEST" ? "jatos-worker-1" : pid));
    for (const [name, study] of Object.entries(STUDIES)) {
      for (const pid of study.people) {
        const rows = rowsOf(pid);
        assert.equal(rows.length, 4, `${pid}'s rows`);
        for (const r of rows) {
          assert.equal(r.passage, "p1");
          const words = textOf(r.study_id).split(" ");
          const position = Number(r.position);
          assert.equal(r.study_id, `cloze-${name}`, `${pid}'s rows are ${name}'s`);
          assert.equal(r.context, words.slice(0, position - 1).join(" "), `${pid} ${r.passage} ${position} context`);
          assert.equal(r.target_word, words[position - 1], `${pid} ${r.passage} ${position} target`);
          assert.equal(r.text_id, String(ownTextId("p1", study.text)), `${pid} text_id`);
          assert.equal(r.response, study.answers[position - 2]);
          assert.equal(r.excluded, String(pid === "TEST"));
          // The model's probability from this study's own samples of p1.
          const word = name === "pilot" ? "bread" : "dry";
          assert.equal(r.model_samples, "4");
          assert.equal(Number(r.model_probability), r.response_normalized === word ? 0.75 : 0, `${pid} word ${position} model_probability`);
        }
        const ids = rowsOf(pid).map((r) => r.trial_index);
        assert.deepEqual(ids, ids.map((_, i) => String(i + 1)), `${pid}'s trial_index`);
      }
    }
    assert.notEqual(ownTextId("p1", STUDIES.pilot.text), ownTextId("p1", STUDIES.main.text));
    // runs.csv: one row per run, the Prolific ids from the link.
    assert.equal(got.runs.rows.length, 5);
    for (const r of got.runs.rows) {
      const test = r.worker_type === "Jatos";
      assert.equal(r.run_state, "complete");
      assert.equal(r.excluded, String(test));
      assert.equal(r.prolific_study_id, test ? "" : `prolific-${r.study_id.replace("cloze-", "")}`);
      assert.equal(r.prolific_session_id, test ? "" : `s-${r.participant}`);
      assert.equal(r.list_chosen_by, test ? "id hash" : "JATOS batch");
    }
    // norms.csv: the analysed answers (the test run's left out) per text, Provo's columns.
    for (const [name, study] of Object.entries(STUDIES)) {
      const textId = String(ownTextId("p1", study.text));
      const mine = got.norms.rows.filter((r) => r.Text_ID === textId);
      assert.deepEqual([...new Set(mine.map((r) => r.Text))], [study.text]);
      for (let position = 2; position <= 5; position++) {
        const at = mine.filter((r) => r.Word_Number === String(position));
        assert.equal(at[0].Word, study.text.split(" ")[position - 1]);
        assert.deepEqual(at.map((r) => [r.Response, r.Response_Count, r.Total_Response_Count]), [[study.answers[position - 2].toLowerCase(), "2", "2"]], `${name} word ${position}`);
      }
    }
    // flow.csv: 5 started = 0 withdrew + 1 left out + 4 analysed.
    assert.deepEqual(got.flow.rows.map((r) => [r.stage, r.detail, r.runs]), [
      ["started", "", "5"], ["withdrew", "", "0"], ["left_out", "jatos_test_run", "1"], ["analysed", "complete", "4"],
    ]);
    // The command line gives the page's tables.
    const out = join(dir, "cli");
    execFileSync(cliBinary(), ["results", "--file", exports.pilot, "--file", exports.main, "--file", samples, "--out", out], { stdio: ["ignore", "ignore", "pipe"] });
    for (const table of ["trials", "runs", "norms", "flow"]) {
      assert.deepEqual(parseCsv(await readFile(join(out, `${table}.csv`), "utf8")), got[table], `clozelab results' ${table}.csv`);
    }
    assert.match(await readFile(join(out, "flow.svg"), "utf8"), /<svg/);
    // Entropy of the samples {word: 3, the: 1}: 0.811 bits, plus Miller–Madow's 1/(2·4·ln 2).
    for (const r of got.trials.rows) assert.ok(Math.abs(Number(r.model_entropy_bits) - (0.8112781 + 1 / (8 * Math.LN2))) < 1e-6, r.model_entropy_bits);
    // Surprisal: `clozelab results --model` and the page give each row its own study's text's
    // value, the one `clozelab surprisal` gives that word of that text.
    const cliModel = join(dir, "cli-model");
    execFileSync(cliBinary(), ["results", "--file", exports.pilot, "--file", exports.main, "--file", samples, "--model", "public/models/test", "--out", cliModel], { stdio: ["ignore", "ignore", "pipe"] });
    const withModel = parseCsv(await readFile(join(cliModel, "trials.csv"), "utf8"));
    const perWord = {};
    for (const study of Object.values(STUDIES)) {
      const out = execFileSync(cliBinary(), ["surprisal", "--model", "public/models/test", "--text", study.text, "--samples", "0", "--json"], { stdio: ["ignore", "pipe", "pipe"] }).toString();
      perWord[study.text] = out.trim().split("\n").map((line) => JSON.parse(line));
    }
    const surprisalColumns = ["surprisal_model", "surprisal_bits", "surprisal_all_segmentations_bits"];
    assert.deepEqual(withModel.header, got.trials.header);
    assert.equal(withModel.rows.length, got.trialsWithSurprisal.rows.length);
    const near = (a, b, what) => assert.ok(Math.abs(Number(a) - Number(b)) < 1e-3, `${what}: ${a} against ${b}`);
    withModel.rows.forEach((r, i) => {
      const page = got.trialsWithSurprisal.rows[i];
      for (const column of withModel.header.filter((c) => !surprisalColumns.includes(c))) assert.equal(page[column], r[column], column);
      assert.equal(r.surprisal_model, "test");
      assert.equal(page.surprisal_model, r.surprisal_model, "the page names a folder model as the CLI does");
      const word = perWord[textOf(r.study_id)][Number(r.position) - 1];
      assert.equal(word.word, r.target_word);
      assert.equal(Number(r.surprisal_bits), word.surprisal_bits, `${r.study_id} ${r.position}`);
      assert.equal(Number(r.surprisal_all_segmentations_bits), word.surprisal_all_segmentations_bits);
      near(page.surprisal_bits, r.surprisal_bits, "the page's surprisal");
      near(page.surprisal_all_segmentations_bits, r.surprisal_all_segmentations_bits, "the page's all-segmentations surprisal");
    });
    // The pilot's and the main study's position 2 are different words of different texts.
    const second = (name) => withModel.rows.find((r) => r.study_id === `cloze-${name}` && r.position === "2").surprisal_bits;
    assert.notEqual(second("pilot"), second("main"));
    // Several models: each its own column group (numbered from 2), each value the one
    // `clozelab surprisal` gives with that model; the first group as with one model.
    const models = ["public/models/test", "public/models/test-gpt-neox", "public/models/test-llama"];
    const cliModels = join(dir, "cli-models");
    execFileSync(cliBinary(), ["results", "--file", exports.pilot, "--file", exports.main, "--file", samples, ...models.flatMap((m) => ["--model", m]), "--out", cliModels], { stdio: ["ignore", "ignore", "pipe"] });
    const withModels = parseCsv(await readFile(join(cliModels, "trials.csv"), "utf8"));
    const numbered = [2, 3].flatMap((n) => surprisalColumns.map((c) => `${c}_${n}`));
    assert.deepEqual(withModels.header.filter((c) => !withModel.header.includes(c)), numbered);
    const codebook = parseCsv(await readFile(join(cliModels, "codebook.csv"), "utf8"));
    for (const column of numbered) assert.ok(codebook.rows.some((r) => r.table === "trials.csv" && r.column === column), `codebook: ${column}`);
    const scored = new Map();
    const wordsOf = (model, text) => {
      if (!scored.has(model + text)) {
        const out = execFileSync(cliBinary(), ["surprisal", "--model", model, "--text", text, "--samples", "0", "--json"], { stdio: ["ignore", "pipe", "pipe"] });
        scored.set(model + text, out.toString().trim().split("\n").map((line) => JSON.parse(line)));
      }
      return scored.get(model + text);
    };
    withModels.rows.forEach((r, i) => {
      for (const column of withModel.header) assert.equal(r[column], withModel.rows[i][column], column);
      [2, 3].forEach((n) => {
        assert.equal(r[`surprisal_model_${n}`], models[n - 1].split("/").pop());
        const word = wordsOf(models[n - 1], textOf(r.study_id))[Number(r.position) - 1];
        assert.equal(Number(r[`surprisal_bits_${n}`]), word.surprisal_bits, `model ${n}, ${r.study_id} ${r.position}`);
      });
    });
    assert.notEqual(withModels.rows[0].surprisal_bits_2, withModels.rows[0].surprisal_bits_3);
  } finally {
    served.server.close();
  }
});
