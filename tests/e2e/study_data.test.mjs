// A study's data for the paper, as a researcher gets it: a two-condition Latin-square study with
// a native-speaker screening question, a native-language question and a question after the
// passages, built on the Study page (its mistakes refused with the loader's words), previewed
// list by list, packaged for JATOS; six participants through the JATOS stand-in (one screened
// out, one failing the attention check, one a JATOS test run), their lists balanced by completed
// runs; JATOS's export on the Analysis page, GPT-2 (the test model) sampled there, and the
// trial table, codebook.csv and exclusions.csv downloaded and read back column by column against
// what was played; the docs' Python snippet gives the page's Table 1 TVD from the trial table.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { ROOT, download, parseCsv, parseTable1, serveDist, screenshot, withPage } from "./harness.mjs";
import { startJatos } from "./jatos_fake.mjs";

const TIMEOUT = 120_000;
const TEXTS = {
  p1: "The baker sold fresh bread",
  p2: "The person saw some bread",
  p3: "She poured milk into cups",
  p4: "She put something into boxes",
};
const PLACE = { p1: ["1", "high"], p2: ["1", "low"], p3: ["2", "high"], p4: ["2", "low"] };
const LISTS = { A: ["p1", "p4"], B: ["p2", "p3"] };
const ANSWERS = ["bread", "Milk", "the", "cups"];
const CHECK = "Type the word purple.";

/** Plays the study from its consent screen: the questions before, the passages (answering the
 * attention check with `attention`), the question after; stops where a screening answer ends it. */
async function play(page, { native = "Yes", language = "English", attention = "purple", shot, reloadAfter } = {}) {
  await page.getByTestId("consent").waitFor({ timeout: TIMEOUT });
  await page.getByTestId("consent-accept").click();
  await page.getByTestId("questions").waitFor({ timeout: TIMEOUT });
  // Required questions are asked again until answered.
  await page.getByTestId("questions-continue").click();
  assert.equal(await page.getByTestId("question-native_speaker-error").innerText(), "Please answer this question.");
  await page.locator("[data-testid=question-native_speaker-option][value=" + native + "]").check();
  await page.getByTestId("question-native_language-input").fill(language);
  if (shot) await screenshot(page, `${shot}-questions.png`);
  await page.getByTestId("questions-continue").click();
  if (native === "No") return;
  for (let i = 0; i < 8; i++) {
    await page.waitForFunction(() => document.querySelector("[data-testid=attention-check]") || document.querySelector("[data-testid=guess]"), null, { timeout: TIMEOUT });
    if (await page.getByTestId("attention-check").count()) {
      await page.getByTestId("attention-answer").fill(attention);
      await page.getByTestId("attention-submit").click();
    }
    const input = page.getByTestId("guess");
    await input.waitFor({ timeout: TIMEOUT });
    const before = await page.evaluate(() => document.querySelector("[data-testid=passage-context]")?.innerText);
    await input.pressSequentially(ANSWERS[i % 4]);
    await input.press("Enter");
    if (i < 7) await page.waitForFunction((b) => document.querySelector("[data-testid=passage-context]")?.innerText !== b || document.querySelector("[data-testid=attention-check]"), before, { timeout: TIMEOUT });
    if (i === reloadAfter) {
      // The questions and the answers so far are kept: the study resumes at the next word.
      await page.reload();
      await page.waitForFunction(() => document.querySelector("[data-testid=guess]") || document.querySelector("[data-testid=attention-check]"), null, { timeout: TIMEOUT });
      assert.equal(await page.getByTestId("questions").count(), 0, "the questions are not asked again");
      assert.equal(await page.getByTestId("consent").count(), 0, "nor the consent");
    }
  }
  await page.getByTestId("question-looked_up").waitFor({ timeout: TIMEOUT });
  await page.locator("[data-testid=question-looked_up-option][value=No]").check();
  await page.getByTestId("questions-continue").click();
}

test("study data: a Latin-square study with questions through JATOS, to the trial table, its codebook and the exclusions", { timeout: 10 * TIMEOUT }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "clozelab-study-data-"));
  const served = await serveDist();
  const jatos = await startJatos();
  const PROLIFIC = `${jatos.base}/prolific/submissions/complete?cc=DONE1`;
  const SCREENED = `${jatos.base}/prolific/submissions/complete?cc=SCREENED`;
  try {
    let jzip;
    await withPage("study-data-build", {}, async (page) => {
      await page.goto(`${served.base}/study`);
      await page.getByTestId("study-title").fill("Constraint study");
      await page.getByTestId("study-own-text").fill(Object.entries(TEXTS).map(([id, t]) => `# ${id}\n${t}`).join("\n\n"));
      await page.getByTestId("study-add-text").click();
      // The Latin square: refused while its items do not divide into its conditions.
      await page.locator(".latin-square summary").click();
      await page.getByTestId("study-square-conditions").fill("high, low");
      await page.getByTestId("study-square-items").fill("p1, p2");
      assert.match(await page.getByTestId("study-error").innerText(), /1 items do not divide into 2 conditions/);
      await page.getByTestId("study-square-items").fill("p1, p2\np3, p4");
      assert.deepEqual(await page.getByTestId("study-square-list").allInnerTexts(), ["List A: p1 (high), p4 (low)", "List B: p2 (low), p3 (high)"]);
      await page.getByTestId("study-attention").fill(`p1, 1, purple: ${CHECK}\np2, 1, purple: ${CHECK}`);
      // The questions every cloze study asks, and one of our own with no text: refused.
      for (const name of ["native_speaker", "native_language", "looked_up"]) {
        await page.getByTestId("study-built-in-question").selectOption(name);
        await page.getByTestId("study-add-built-in").click();
      }
      await page.getByTestId("study-add-built-in").click();
      await page.locator("[role=alert]", { hasText: 'already asks a question "looked_up"' }).waitFor();
      await page.locator(".own-question summary").click();
      await page.getByTestId("study-question-id").fill("handedness");
      await page.getByTestId("study-question-kind").selectOption({ label: "single choice" });
      await page.getByTestId("study-question-options").fill("left, right");
      await page.getByTestId("study-add-question").click();
      assert.match(await page.getByTestId("study-error").innerText(), /question "handedness" has no text/);
      await page.locator("[data-testid=study-question][data-question=handedness] button").click();
      assert.match(await page.getByTestId("study-error").innerText(), /questions screen participants out, but the study has no screened_out_url/);
      await page.getByTestId("study-screened-out-url").fill(SCREENED);
      await page.getByTestId("study-consent").fill("I agree to take part.");
      await page.getByTestId("study-completion-code").fill("DONE1");
      await page.getByTestId("study-redirect").fill(PROLIFIC);
      await page.getByTestId("study-valid").waitFor();
      const config = JSON.parse(await page.getByTestId("study-json").textContent());
      assert.deepEqual(config.latin_square, { conditions: ["high", "low"], items: [["p1", "p2"], ["p3", "p4"]] });
      assert.deepEqual(config.lists, [{ name: "A", passages: LISTS.A }, { name: "B", passages: LISTS.B }]);
      assert.deepEqual(config.questions_before.map((q) => q.id), ["native_speaker", "native_language"]);
      assert.deepEqual(config.questions_before[0].screen_out, ["No"]);
      assert.deepEqual(config.questions_after.map((q) => q.id), ["looked_up"]);
      assert.equal(config.screened_out_url, SCREENED);
      await screenshot(page, "study-data-study-page.png");
      await page.setViewportSize({ width: 390, height: 844 });
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), "no sideways scrolling at 390 px");
      await screenshot(page, "study-data-study-page-phone.png");
      await page.setViewportSize({ width: 1100, height: 900 });
      // The preview plays the list the researcher picks, and says which.
      await page.getByTestId("study-preview").click();
      await page.getByTestId("study-preview-list").selectOption("B");
      assert.equal(await page.getByTestId("study-preview-playing").innerText(), "Playing list B: p2, p3");
      await page.getByTestId("consent-accept").click();
      await page.getByTestId("questions").waitFor({ timeout: TIMEOUT });
      assert.equal(await page.getByTestId("withdraw").count(), 1, "a participant can withdraw on the questions too");
      await page.locator("[data-testid=question-native_speaker-option][value=Yes]").check();
      await page.getByTestId("question-native_language-input").fill("English");
      await page.getByTestId("questions-continue").click();
      await page.getByTestId("guess").waitFor({ timeout: TIMEOUT });
      assert.equal(await page.getByTestId("passage-context").innerText(), "The");
      await page.getByTestId("study-preview-end").click();
      jzip = await download(page, "study-download-jatos", dir);
    });
    await jatos.importStudy(jzip);
    const runOf = (pid) => [...jatos.runs.values()].find((r) => r.urlQueryParameters.PROLIFIC_PID === pid);
    const lastBundle = (run) => JSON.parse(run.componentResults.map((c) => c.data ?? "").join("").trim().split("\n").at(-1));
    // Six participants. P3 is not a native speaker: screened out, only that answer kept.
    const people = [
      ["P1", {}], ["P2", {}], ["P3", { native: "No" }], ["P4", { attention: "green" }], ["TEST", {}], ["P6", {}],
    ];
    for (const [pid, how] of people) {
      await withPage(`study-data-${pid}`, {}, async (page) => {
        const link = pid === "TEST" ? jatos.links.testRun : `${jatos.links.generalMultiple}?PROLIFIC_PID=${pid}`;
        await page.goto(link);
        await play(page, { ...how, shot: pid === "P1" ? "study-data-participant" : undefined, reloadAfter: pid === "P1" ? 2 : undefined });
        await page.waitForURL(how.native === "No" ? SCREENED : PROLIFIC, { timeout: TIMEOUT });
      });
    }
    const screened = runOf("P3");
    assert.equal(screened.state, "FAIL", "JATOS ends a screened-out run as failed");
    const screenedBundle = lastBundle(screened);
    assert.equal(screenedBundle.manifest.screened_out, true);
    assert.deepEqual(screenedBundle.responses, []);
    assert.deepEqual(screenedBundle.manifest.questions.map((q) => [q.question, q.answer]), [["native_speaker", "No"]], "only the answer that screened out");
    // Lists balanced by completed runs: P3's place (A) was freed when screened out, so P4 got
    // A again (by assigned places it would have had B). JATOS's test run takes no place: P6
    // gets B, the list with fewer completed runs.
    const lists = Object.fromEntries(Object.entries(jatos.batch.data.clozelabLists).map(([who, e]) => [who, `${e.list} ${e.state}`]));
    assert.deepEqual(lists, {
      P1: "A complete", P2: "B complete", P3: "A ended", P4: "A complete", P6: "B complete",
    });
    // The test run played a list as outside JATOS, chosen by its worker's id.
    const testRunList = lastBundle(runOf(undefined)).manifest.list;
    assert.equal(testRunList.how, "participant_hash");
    const p1 = lastBundle(runOf("P1")).manifest;
    assert.match(p1.consent_at, /^\d{4}-\d\d-\d\dT/);
    assert.match(p1.device.user_agent, /Chrome/);
    assert.equal(p1.worker_type, "GeneralMultiple");
    const archive = await jatos.exportResults();
    // The export on the Analysis page, GPT-2 (the test model) sampled on its contexts.
    await withPage("study-data-analysis", {}, async (page) => {
      await page.goto(`${served.base}/analysis?model=models/test/`);
      await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
      await page.getByTestId("analysis-files").setInputFiles([archive]);
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length > 0, null, { timeout: TIMEOUT });
      await page.getByTestId("analysis-resamples").fill("1");
      assert.ok(await page.getByTestId("analysis-no-test-runs").isChecked(), "JATOS's test runs are left out by default");
      await page.getByTestId("analysis-no-failed-attention").check();
      await page.getByTestId("analysis-no-screened-out").check();
      await page.getByTestId("analyse").click();
      await page.getByTestId("model-samples-run").waitFor({ timeout: TIMEOUT });
      // People's answers only: Table 1 says what it needs instead of numbers that mean nothing.
      assert.match(await page.getByTestId("table1-needs-model").innerText(), /add model samples/);
      await page.getByTestId("model-samples-n").fill("20");
      await page.getByTestId("model-samples-run").click();
      const system = "models/test/ (sampled here)";
      await page.locator(`[data-testid=table1] tr[data-system="${system}"]`).waitFor({ timeout: 3 * TIMEOUT });
      assert.equal(await page.getByTestId("table1-left-out").innerText(), "3 runs left out (see exclusions.csv): jatos_test_run 1, failed_attention 1, screened_out 1");
      assert.equal(await page.getByTestId("backend-status").count(), 1, "the model is in use here");
      await screenshot(page, "study-data-analysis.png");
      await page.setViewportSize({ width: 390, height: 844 });
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), "no sideways scrolling at 390 px");
      await screenshot(page, "study-data-analysis-phone.png");
      await page.setViewportSize({ width: 1100, height: 900 });
      const table1 = parseTable1(await readFile(await download(page, "download-table1", dir), "utf8"));
      const trialsFile = await download(page, "download-trials", dir);
      const trials = parseCsv(await readFile(trialsFile, "utf8"));
      const codebook = parseCsv(await readFile(await download(page, "download-codebook", dir), "utf8"));
      const exclusions = parseCsv(await readFile(await download(page, "download-exclusions", dir), "utf8"));
      // The codebook documents every column, in order.
      assert.deepEqual(trials.header, codebook.rows.filter((r) => r.table.split("; ").includes("trials.csv")).map((r) => r.column));
      assert.deepEqual(exclusions.rows.map((r) => [r.participant, r.reason]), [
        ["P3", "screened_out"], ["P4", "failed_attention"], ["jatos-worker-1", "jatos_test_run"],
      ]);
      // Every answer of every run that played (five of eight), each column what was played.
      assert.equal(trials.rows.length, 5 * 8);
      const listOf = { P1: "A", P2: "B", P4: "A", "jatos-worker-1": testRunList.name, P6: "B" };
      const reasonOf = { P4: "failed_attention", "jatos-worker-1": "jatos_test_run" };
      for (const r of trials.rows) {
        const who = r.participant;
        const run = [...jatos.runs.values()].find((x) => (x.urlQueryParameters.PROLIFIC_PID ?? "jatos-worker-1") === who);
        const words = TEXTS[r.passage].split(" ");
        const position = Number(r.position);
        const index = LISTS[listOf[who]].indexOf(r.passage) * 4 + position - 2;
        const expected = {
          study_id: p1.study_id, run: `jatos-${run.id}`, run_state: "complete",
          worker_type: who === "jatos-worker-1" ? "Jatos" : "GeneralMultiple", pilot: "false",
          list: listOf[who], list_chosen_by: who === "jatos-worker-1" ? "id hash" : "JATOS batch",
          attention_passed: who === "P4" ? "0" : "1", attention_failed: who === "P4" ? "1" : "0",
          touch: "false", excluded: String(who in reasonOf), exclusion_reason: reasonOf[who] ?? "",
          item: PLACE[r.passage][0], condition: PLACE[r.passage][1], practice: "false",
          context: words.slice(0, position - 1).join(" "), target_word: words[position - 1],
          response: ANSWERS[index % 4], response_normalized: ANSWERS[index % 4].toLowerCase(),
          correct: String(ANSWERS[index % 4].toLowerCase() === words[position - 1].toLowerCase()),
          model: system, q_native_speaker: "Yes", q_native_language: "English", q_looked_up: "No",
        };
        for (const [column, value] of Object.entries(expected)) assert.equal(r[column], value, `${who} ${r.passage} ${position} ${column}`);
        assert.ok(LISTS[listOf[who]].includes(r.passage), `${who} played list ${listOf[who]}`);
        for (const column of ["first_keystroke_ms", "response_time_ms", "median_response_ms"]) assert.ok(Number(r[column]) > 0, `${column} ${r[column]}`);
        const p = Number(r.model_probability);
        assert.ok(p >= 0 && p <= 1 && Number(r.model_samples) > 0, `model_probability ${r.model_probability}`);
        assert.match(r.timestamp, /^\d{4}-\d\d-\d\dT/);
        assert.match(r.consent_at, /^\d{4}-\d\d-\d\dT/);
        assert.match(r.user_agent, /Chrome/);
        assert.match(r.screen, /^\d+x\d+$/);
      }
      // The docs' Python snippet on the downloaded table gives the page's Table 1 TVD.
      const docs = await readFile(join(ROOT, "docs/trial-table.md"), "utf8");
      const snippet = docs.match(/```python\n([\s\S]*?)```/)[1];
      await writeFile(join(dir, "tvd.py"), snippet);
      const out = execFileSync("python3", ["tvd.py"], { cwd: dir, encoding: "utf8" });
      const mean = Number(out.match(/mean TVD over (\d+) contexts: ([\d.]+)/)[2]);
      const contexts = Number(out.match(/mean TVD over (\d+) contexts/)[1]);
      assert.equal(String(contexts), table1[system].contexts);
      assert.ok(Math.abs(mean - Number(table1[system].tvd_human)) < 1e-4, `python ${mean} vs the page's ${table1[system].tvd_human}`);
    });
    // The Study page does not use the model: no backend line there; and no page asks for a
    // model folder the app does not have (this build has no models/gpt2/).
    await withPage("study-data-no-backend", {}, async (page, logs) => {
      const missing = [];
      page.on("response", (r) => { if (r.status() === 404) missing.push(r.url()); });
      for (const path of ["/", "/study", "/analysis", "/next-token"]) {
        await page.goto(`${served.base}${path}`);
        await page.waitForLoadState("networkidle");
      }
      assert.equal(await page.getByTestId("backend-status").count(), 1, "the Next token page uses the model");
      await page.goto(`${served.base}/study`);
      await page.getByTestId("study-title").waitFor();
      assert.equal(await page.getByTestId("backend-status").count(), 0);
      assert.deepEqual(missing, [], "no 404");
      assert.deepEqual(logs.filter((l) => /404/.test(l)), []);
    });
  } finally {
    served.server.close();
    jatos.server.close();
  }
});
