// The Study page as a researcher without a toolchain uses it: a config built in the form and
// checked as they type (the config loader's own errors) — two lists, an attention check in each
// passage, German texts with one replaced — previewed, then the JATOS archive and the website
// made in the page — byte for byte what `clozelab jatos-package`/`site-package` make from the
// same study.json — then the archive imported into the JATOS stand-in (lists from the link or
// from JATOS's batch session, the least used; one participant reloads and completes, one fails
// the attention check, one withdraws; JATOS's results archive then read
// by the Analysis page, its Table 1 equal to the CLI's, with and without those who failed the
// check) and the website unpacked on a static host (participants completing, declining and
// withdrawing) hosted by `clozelab serve`, whose export the Analysis page reads back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { DIST, ROOT, cliTable, parseTable1, serveDist, screenshot, withPage, cliBinary, documentLoads, startClozelabServe } from "./harness.mjs";
import { startJatos } from "./jatos_fake.mjs";

// The run's final bundle: JATOS's result data holds one bundle per line, the last the whole run.
const lastBundle = (run) => JSON.parse(run.resultData.trim().split("\n").at(-1));
// JATOS's batch ledger as "list state" by participant (each run marks how it ended).
const ledger = (jatos) => Object.fromEntries(Object.entries(jatos.batch.data.clozelabLists).map(([who, e]) => [who, `${e.list} ${e.state}`]));

const TIMEOUT = 120_000;
const WORDS = ["two", "three", "four", "five"];
const CHECK = "Um zu zeigen, dass Sie aufmerksam lesen, tippen Sie hier das Wort lila.";
const bin = cliBinary();

/** A CSV file's rows as objects by its header (quoted fields with commas, quotes and line breaks). */
function parseCsv(text) {
  const rows = [[]];
  let field = "", quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { rows.at(-1).push(field); field = ""; }
    else if (c === "\n") { rows.at(-1).push(field.replace(/\r$/, "")); field = ""; rows.push([]); }
    else field += c;
  }
  if (field || rows.at(-1).length) rows.at(-1).push(field);
  const [header, ...body] = rows.filter((r) => r.length > 1);
  return body.map((r) => Object.fromEntries(header.map((h, i) => [h.replace(/^\ufeff/, ""), r[i]])));
}

async function download(page, testid, dir) {
  const [file] = await Promise.all([page.waitForEvent("download", { timeout: TIMEOUT }), page.getByTestId(testid).click()]);
  const path = join(dir, file.suggestedFilename());
  await file.saveAs(path);
  return path;
}

/** Plays the one-passage study on `page` from its consent screen to the end, answering the
 * attention check with `attention`, reloading after `reloadAfter` answers, or withdrawing after
 * `withdrawAfter`; returns the positions the attention check came before. */
async function playToTheEnd(page, { reloadAfter, withdrawAfter, shot, attention = "lila" } = {}) {
  const checked = [];
  await page.getByTestId("consent").waitFor({ timeout: TIMEOUT });
  await page.getByTestId("consent-accept").click();
  for (const [i, word] of WORDS.entries()) {
    const input = page.getByTestId("guess");
    const atPosition = (p) => Number(document.querySelector("[data-testid=passage-context]")?.dataset.position) === p;
    if (i === reloadAfter) {
      // The page shows the next word only once the last answer is stored; a reload before that
      // would lose an answer the participant never saw taken (and type again).
      await page.waitForFunction(atPosition, i + 2, { timeout: TIMEOUT });
      await page.reload();
    }
    await page.waitForFunction(
      (p) => document.querySelector("[data-testid=attention-check]") || Number(document.querySelector("[data-testid=passage-context]")?.dataset.position) === p,
      i + 2, { timeout: TIMEOUT });
    if (await page.getByTestId("attention-check").count()) {
      assert.equal(await page.getByTestId("attention-instruction").innerText(), CHECK);
      assert.equal(await page.getByTestId("attention-answer").getAttribute("aria-label"), CHECK, "the answer box is named by the instruction");
      checked.push(i + 2);
      if (shot) await screenshot(page, `${shot}-attention.png`);
      await page.getByTestId("attention-answer").fill(attention);
      await page.getByTestId("attention-submit").click();
    }
    await input.waitFor({ timeout: TIMEOUT });
    await page.waitForFunction(atPosition, i + 2, { timeout: TIMEOUT });
    if (shot && i === 1) {
      // What a participant sees, in the study's language: the passage, the progress bar, the
      // way out.
      assert.equal(await page.evaluate(() => document.documentElement.lang), "de");
      assert.match(await page.getByTestId("progress-bar").innerText(), /1 von 4 Wörtern beantwortet/);
      assert.equal(await page.getByTestId("withdraw").innerText(), "Von der Studie zurücktreten");
      await screenshot(page, `${shot}.png`);
      await page.setViewportSize({ width: 390, height: 844 });
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), "no sideways scrolling at 390 px");
      await screenshot(page, `${shot}-phone.png`);
      await page.setViewportSize({ width: 1100, height: 900 });
    }
    if (i === withdrawAfter) {
      await page.getByTestId("withdraw").click();
      await page.getByTestId("withdraw-confirm").click();
      return checked;
    }
    await input.fill(word);
    await input.press("Enter");
  }
  return checked;
}

/** The keys of every store of the app's IndexedDB that mention `text`. */
function storedKeys(page, text) {
  return page.evaluate((text) => new Promise((resolve, reject) => {
    const open = indexedDB.open("clozelab");
    open.onsuccess = () => {
      const db = open.result;
      const names = [...db.objectStoreNames];
      const tx = db.transaction(names);
      const all = names.map((n) => new Promise((r) => { const q = tx.objectStore(n).getAllKeys(); q.onsuccess = () => r(q.result.map(String)); }));
      Promise.all(all).then((keys) => resolve(keys.flat().filter((k) => k.includes(text))));
    };
    open.onerror = () => reject(open.error);
  }), text);
}

test("Study page: a study built and packaged in the page runs in JATOS and on `clozelab serve`", { timeout: 6 * TIMEOUT }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "clozelab-study-page-"));
  const served = await serveDist();
  const jatos = await startJatos();
  const PROLIFIC = `${jatos.base}/prolific/submissions/complete?cc=C0DES`;
  const DECLINED = `${jatos.base}/prolific/submissions/complete?cc=NOCONSENT`;
  // How long each of the researcher's steps took here (machine time, printed at the end).
  let since = Date.now();
  const took = [];
  const step = (name) => { took.push(`${name}: ${((Date.now() - since) / 1000).toFixed(1)} s`); since = Date.now(); };
  let files;
  try {
    await withPage("study-page", {}, async (page) => {
      await page.goto(`${served.base}/`);
      await page.getByRole("link", { name: "Study", exact: true }).click();
      await page.getByTestId("study-title").fill("Lesestudie");
      await page.getByTestId("study-own-text").fill("# Kurz\nOne two three four five\n\n# Lang\nSix seven eight nine ten");
      await page.getByTestId("study-add-text").click();
      // Two counterbalanced lists, one passage each.
      await page.getByTestId("study-lists").fill("A: p1\nB p2");
      assert.match(await page.locator("[role=alert]").first().innerText(), /line 2: write it as "name: id, id, …"/);
      await page.getByTestId("study-lists").fill("A: p1\nB: p2");
      // An attention check in each passage (each list has one), after its first answer.
      await page.getByTestId("study-attention").fill(`p1, eins, lila: ${CHECK}`);
      assert.match(await page.locator("[role=alert]").first().innerText(), /line 1: write it as "passage id, answers before it, answer: instruction"/);
      await page.getByTestId("study-attention").fill(`p1, 1, lila: ${CHECK}\np9, 1, lila: ${CHECK}`);
      assert.match(await page.getByTestId("study-error").innerText(), /attention check "p9@1" is in passage "p9", which the study does not have/);
      await page.getByTestId("study-attention").fill(`p1, 1, lila: ${CHECK}\np2, 1, lila: ${CHECK}`);
      // German texts for participants, one of them worded by the researcher.
      await page.getByTestId("study-language").selectOption("de");
      await page.getByTestId("study-participant-texts").fill("progress_words: {done} Wörter");
      assert.match(await page.getByTestId("study-error").innerText(), /participant_texts\.progress_words must keep the placeholders \{done\}, \{total\}/);
      await page.getByTestId("study-participant-texts").fill("consent_agree: Ja, ich mache mit");
      await page.locator("[data-testid=participant-texts] dd", { hasText: "Ja, ich mache mit" }).waitFor({ state: "attached" });
      await page.locator("[data-testid=participant-texts] dd", { hasText: "Ich stimme nicht zu" }).waitFor({ state: "attached" });
      // Checked as typed, with the loader's own words.
      await page.getByTestId("study-per-participant").fill("3");
      assert.match(await page.getByTestId("study-error").innerText(), /passages_per_participant must be between 1 and 1, got 3/);
      assert.ok(await page.getByTestId("study-download-jatos").isDisabled(), "no package of an invalid config");
      await page.getByTestId("study-per-participant").fill("");
      await page.getByTestId("study-consent").fill("Ich stimme zu.");
      await page.getByTestId("study-completion-code").fill("C0DES");
      // No server and no redirect: a website only where the study says its answers stay in the browser.
      await page.getByTestId("study-valid").waitFor();
      assert.ok(await page.getByTestId("study-download-site").isDisabled());
      assert.match(await page.getByTestId("study-answers-go").innerText(), /answers_in_browser/);
      await page.getByTestId("study-answers-in-browser").check();
      await page.getByTestId("study-answers-go").filter({ hasText: "Answers stay in each participant's browser" }).waitFor();
      assert.ok(!(await page.getByTestId("study-download-site").isDisabled()));
      await page.getByTestId("study-answers-in-browser").uncheck();
      await page.getByTestId("study-redirect").fill("javascript:alert(1)");
      assert.match(await page.getByTestId("study-error").innerText(), /redirect_url must be an http\(s\) address/);
      await page.getByTestId("study-redirect").fill(PROLIFIC);
      await page.getByTestId("study-decline").fill(DECLINED);
      // A valid study that sends participants to Prolific but its answers nowhere: no website,
      // with the reason and the fix; JATOS keeps the answers itself.
      await page.getByTestId("study-valid").waitFor();
      assert.ok(await page.getByTestId("study-download-site").isDisabled(), "no website that would lose its answers");
      assert.ok(!(await page.getByTestId("study-download-jatos").isDisabled()), "the JATOS archive is fine");
      assert.match(await page.getByTestId("study-answers-go").innerText(), /^No website: .*sends their answers\s+nowhere.*clozelab serve/s);
      await page.getByTestId("study-send-each").check();
      assert.match(await page.getByTestId("study-error").innerText(), /send_each_response needs a submit_url/);
      await page.getByTestId("study-submit-url").fill("/submit");
      await page.getByTestId("study-valid").waitFor();
      assert.match(await page.getByTestId("study-answers-go").innerText(), /Answers are POSTed to \/submit: host the website with `clozelab serve`/);
      assert.ok(!(await page.getByTestId("study-download-site").isDisabled()));
      const { study_id: studyId, ...config } = JSON.parse(await page.getByTestId("study-json").textContent());
      // A new study gets its own id, which keeps its answers apart from any other study's.
      assert.match(studyId, /^study-[0-9a-f]{16}$/);
      assert.equal(await page.getByTestId("study-id").inputValue(), studyId);
      assert.deepEqual(config, {
        title: "Lesestudie",
        passages: ["p1", "p2"],
        texts: [
          { id: "p1", title: "Kurz", text: "One two three four five", genre: "your text" },
          { id: "p2", title: "Lang", text: "Six seven eight nine ten", genre: "your text" },
        ],
        lists: [{ name: "A", passages: ["p1"] }, { name: "B", passages: ["p2"] }],
        attention_checks: ["p1", "p2"].map((passage) => ({ passage, after: 1, instruction: CHECK, answer: "lila" })),
        language: "de",
        participant_texts: { consent_agree: "Ja, ich mache mit" },
        consent: "Ich stimme zu.",
        completion_code: "C0DES",
        redirect_url: PROLIFIC,
        decline_url: DECLINED,
        submit_url: "/submit",
        send_each_response: true,
      });
      await screenshot(page, "study-page.png");
      // The preview plays the study as a participant would; nothing is sent, redirected or kept.
      step("the study built on the Study page (form filled as the test types, every check shown)");
      await page.getByTestId("study-preview").click();
      await page.getByTestId("consent").waitFor({ timeout: TIMEOUT });
      assert.equal(await page.getByTestId("consent-accept").innerText(), "Ja, ich mache mit");
      assert.equal(await page.getByTestId("consent-decline").innerText(), "Ich stimme nicht zu");
      assert.deepEqual(await playToTheEnd(page), [3], "the check came after the passage's first answer");
      await page.getByTestId("complete").waitFor({ timeout: TIMEOUT });
      assert.match(await page.getByTestId("complete").innerText(), /Vielen Dank — Sie sind fertig\.\s+Abschlusscode: C0DES/);
      await screenshot(page, "study-preview-complete.png");
      assert.equal(new URL(page.url()).pathname, "/study", "the preview redirects nowhere");
      step("preview played to the completion code");
      await page.getByTestId("study-preview-end").click();
      assert.equal(await page.getByTestId("study-title").inputValue(), "Lesestudie", "the form is as it was");
      assert.equal(await page.evaluate(() => document.documentElement.lang), "en", "the page around the preview is English again");
      assert.equal(served.submissions.length, 0, "the preview sent nothing");
      assert.deepEqual(await storedKeys(page, "preview"), [], "the preview kept nothing in the browser");
      await page.setViewportSize({ width: 390, height: 844 });
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), "no sideways scrolling at 390 px");
      await screenshot(page, "study-page-phone.png");
      await page.setViewportSize({ width: 1100, height: 900 });
      since = Date.now();
      files = {
        config: await download(page, "study-download-config", dir),
        jzip: await download(page, "study-download-jatos", dir),
        site: await download(page, "study-download-site", dir),
      };
      step("study.json, the JATOS archive and the website ZIP made in the page and downloaded");
      assert.match(await page.getByTestId("study-package-progress").innerText(), /_site\.zip: [\d.]+ MB/);
    });
    assert.deepEqual(JSON.parse(await readFile(files.config, "utf8")).title, "Lesestudie");
    // One core function behind the page and the CLI: the same bytes.
    for (const [command, made] of [["jatos-package", files.jzip], ["site-package", files.site]]) {
      const out = join(dir, `cli-${command}.zip`);
      execFileSync(bin, [command, "--study", files.config, "--dist", DIST, "--out", out, "--allow-development-build"], { stdio: ["ignore", "ignore", "pipe"] });
      assert.ok((await readFile(made)).equals(await readFile(out)), `the page's ${command} is the CLI's`);
    }
    // The archive in JATOS: one participant sent to list A by their link fails the check; one
    // given list B by JATOS's batch session (the least used) plays to Prolific, reloading on the
    // way; another withdraws after one answer (JATOS's abort deletes what it had) and goes to the
    // decline URL.
    since = Date.now();
    await jatos.importStudy(files.jzip);
    step("the archive imported into JATOS (the stand-in)");
    // A participant who types something else at the check completes too, and is recorded as failing it.
    await withPage("study-page-jatos-inattentive", {}, async (page) => {
      await page.goto(`${jatos.studyLink}?PROLIFIC_PID=PS3&list=A`);
      await playToTheEnd(page, { attention: "blau" });
      await page.waitForURL(PROLIFIC, { timeout: TIMEOUT });
      const run = [...jatos.runs.values()].find((r) => r.urlQueryParameters.PROLIFIC_PID === "PS3");
      const bundle = lastBundle(run);
      assert.deepEqual(bundle.manifest.list, { name: "A", how: "url_parameter" });
      // The link's list counts towards the balance too: it is in JATOS's batch session.
      assert.deepEqual(ledger(jatos), { PS3: "A complete" });
      assert.deepEqual(bundle.manifest.attention_checks.map((c) => [c.check, c.answer, c.passed]), [["p1@1", "blau", false]]);
    });
    await withPage("study-page-jatos", {}, async (page) => {
      // No list in the link: JATOS's batch session gives the least-used one (B), after one
      // write that another run beat (the claim starts over on a new channel).
      jatos.faults.batchRaces = 1;
      await page.goto(`${jatos.studyLink}?PROLIFIC_PID=PS1`);
      // The check, answered before the reload, is not asked again after it.
      assert.deepEqual(await playToTheEnd(page, { reloadAfter: 2 }), [3]);
      await page.waitForURL(PROLIFIC, { timeout: TIMEOUT });
      const run = [...jatos.runs.values()].find((r) => r.urlQueryParameters.PROLIFIC_PID === "PS1");
      assert.equal(run.state, "FINISHED");
      assert.equal(run.componentResults.length, 2, "the reload opened a second component result");
      const bundle = lastBundle(run);
      assert.deepEqual(bundle.responses.map((r) => r.response), WORDS);
      assert.deepEqual(bundle.responses.map((r) => r.passage), ["p2", "p2", "p2", "p2"], "list B's passage");
      assert.deepEqual(bundle.manifest.list, { name: "B", how: "jatos_batch" });
      assert.deepEqual(ledger(jatos), { PS3: "A complete", PS1: "B complete" }, "the reload kept PS1's list");
      assert.equal(jatos.batch.opened, 6, "PS3 twice (its list, its completion), PS1 twice for its list (the race), once more after the reload, once for its completion");
      assert.deepEqual(bundle.manifest.attention_checks.map((c) => [c.check, c.answer, c.passed]), [["p2@1", "lila", true]]);
    });
    await withPage("study-page-jatos-withdraw", {}, async (page) => {
      await page.goto(`${jatos.studyLink}?PROLIFIC_PID=PS2`);
      await playToTheEnd(page, { withdrawAfter: 1 });
      await page.waitForURL(DECLINED, { timeout: TIMEOUT });
      const run = [...jatos.runs.values()].find((r) => r.urlQueryParameters.PROLIFIC_PID === "PS2");
      assert.equal(run.state, "ABORTED");
      assert.match(run.abortMsg, /withdrew/);
      assert.ok(run.componentResults.every((cr) => cr.data === null), "JATOS kept none of PS2's data");
      assert.equal(ledger(jatos).PS2, "A ended", "A and B were even: the first; withdrawing freed its place");
    });
    // JATOS's results archive in the Analysis page: PS1 complete and attentive, PS3 complete
    // but failing the check, PS2 withdrawn with nothing kept; Table 1 the CLI's on the same files.
    step("three participants in JATOS (one reloading, one failing the check, one withdrawing)");
    const archive = await jatos.exportResults();
    step("JATOS's results archive exported");
    // With model samples beside the norms: Table 1 compares a model with people (people's
    // answers alone give no Table 1, only what it needs).
    const analysed = ["norms.jsonl", "samples_small_model.jsonl"].map((f) => join(ROOT, "tests/fixtures/analysis", f)).concat(archive);
    await withPage("study-page-results", {}, async (page) => {
      await page.goto(`${served.base}/analysis`);
      // Every step of reading the files is shown as it happens (an archive of 500 participants
      // takes seconds).
      await page.getByTestId("analysis-reading").waitFor({ state: "attached", timeout: TIMEOUT });
      await page.evaluate(() => {
        window.readingSteps = [];
        const status = document.querySelector("[data-testid=analysis-reading]");
        new MutationObserver(() => window.readingSteps.push(status.innerText)).observe(status, { childList: true, subtree: true, characterData: true });
      });
      await page.getByTestId("analysis-files").setInputFiles(analysed);
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length > 2, null, { timeout: TIMEOUT });
      const steps = await page.evaluate(() => window.readingSteps);
      assert.ok(steps.some((s) => /^Reading file 3 of 3: jatos_results\.zip \(0\.\d MB\)…$/.test(s)), steps.join(" | "));
      assert.ok(steps.some((s) => /^Unpacking jatos_results\.zip/.test(s)), steps.join(" | "));
      assert.equal(await page.getByTestId("analysis-reading").innerText(), "", "nothing left once read");
      await page.getByTestId("analysis-resamples").fill("1");
      await page.getByTestId("analyse").click();
      const row = (id) => page.locator(`[data-testid=participant-runs] tr[data-participant=${id}]`);
      await row("PS1").waitFor({ timeout: TIMEOUT });
      assert.equal(await row("PS1").getAttribute("data-state"), "complete");
      assert.equal(await row("PS1").getAttribute("data-list"), "B");
      assert.equal(await row("PS1").getAttribute("data-list-chosen-by"), "JATOS batch");
      assert.equal(await row("PS3").getAttribute("data-list-chosen-by"), "link");
      assert.match(await row("PS1").innerText(), /4 of 4\s+passed 1 of 1/);
      assert.equal(await row("PS3").getAttribute("data-attention-failed"), "1");
      assert.match(await row("PS3").innerText(), /failed 1 of 1/);
      assert.equal(await row("PS2").getAttribute("data-state"), "withdrawn");
      assert.match(await page.getByTestId("analysis-notes").innerText(), /3 runs \(2 complete, 0 incomplete, 1 withdrawn\): 8 answers/);
      await page.getByTestId("table1").waitFor({ timeout: TIMEOUT });
      const pageTable = async (name) => parseTable1(await readFile(await download(page, "download-table1", join(dir, name)), "utf8"));
      const all = await pageTable("all");
      assert.ok(all.Human, "Table 1 has the humans' row");
      assert.deepEqual(all, await cliTable(analysed, "1"), "the page's Table 1 is the CLI's");
      step("the results archive read in the Analysis page, to Table 1 and the figures, checked against the CLI");
      await screenshot(page, "study-page-results.png");
      await page.setViewportSize({ width: 390, height: 844 });
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), "the results fit a phone: wide tables scroll inside their box");
      await screenshot(page, "study-page-results-phone.png");
      await page.setViewportSize({ width: 1100, height: 900 });
      // Leaving out who failed the check: PS3's answers go, in the page as in the CLI.
      await page.getByTestId("analysis-no-failed-attention").check();
      await page.getByTestId("analyse").click();
      await page.getByTestId("analysis-notes").filter({ hasText: "1 run left out (see exclusions.csv): failed_attention 1" }).waitFor({ timeout: TIMEOUT });
      const attentive = await pageTable("attentive");
      assert.deepEqual(attentive, await cliTable(analysed, "1", ["--exclude-failed-attention"]), "and without PS3, too");
    });
    // The website on its own server, one command: `clozelab serve` hosts the ZIP as it is and
    // keeps the answers in SQLite; the participants' link from its README. One participant
    // reloads mid-way and completes, one declines, one withdraws; the export then goes to the
    // Analysis page, whose trials.csv and runs.csv hold what the participants did.
    const site = join(dir, "site");
    execFileSync("python3", ["-m", "zipfile", "-e", files.site, site]);
    const readme = await readFile(join(site, "README-host.txt"), "utf8");
    assert.match(readme, /clozelab serve --site THIS\.zip --data answers\.sqlite/);
    const link = readme.match(/https:\/\/your\.host(\/\?study=study\.json&[^\s]+)/)[1].replace("{{%PROLIFIC_PID%}}", "PW1");
    const data = join(dir, "answers.sqlite");
    const host = await startClozelabServe(files.site, data);
    let exported;
    try {
      // A study without a model has no use for the CPU's threads: its package leaves the
      // isolation service worker out, so even where service workers may run, the page loads once.
      assert.ok(!existsSync(join(site, "isolation-sw.js")) && !existsSync(join(site, "isolation.js")));
      assert.ok(!(await readFile(join(site, "index.html"), "utf8")).includes("isolation.js\"></script>"));
      await withPage("study-page-site", { serviceWorkers: "allow" }, async (page) => {
        const loads = documentLoads(page);
        await page.goto(`${host.base}${link}`);
        await playToTheEnd(page, { reloadAfter: 2, shot: "study-site-participant" });
        assert.equal(loads.filter((url) => url.startsWith(host.base)).length, 2, `the reload, and only it: ${loads.join(", ")}`);
        await page.waitForURL(PROLIFIC, { timeout: TIMEOUT });
      });
      // Declining stores and sends nothing; withdrawing deletes the answers here and tells the server.
      await withPage("study-page-site-decline", {}, async (page) => {
        await page.goto(`${host.base}${link.replace("PW1", "PW2")}`);
        await page.getByTestId("consent-decline").click();
        await page.waitForURL(DECLINED, { timeout: TIMEOUT });
      });
      await withPage("study-page-site-withdraw", {}, async (page) => {
        await page.goto(`${host.base}${link.replace("PW1", "PW3")}`);
        await playToTheEnd(page, { withdrawAfter: 1 });
        await page.waitForURL(DECLINED, { timeout: TIMEOUT });
        await page.goto(`${host.base}/`);
        assert.deepEqual(await storedKeys(page, "PW3"), [], "the browser kept nothing of PW3");
      });
      // The export over HTTP needs the token the server printed once; the CLI's is the same file.
      assert.equal((await fetch(`${host.base}/clozelab/export`)).status, 401);
      const response = await fetch(`${host.base}/clozelab/export`, { headers: { authorization: `Bearer ${host.token}` } });
      assert.equal(response.status, 200);
      exported = join(dir, "results.zip");
      await writeFile(exported, Buffer.from(await response.arrayBuffer()));
      const cliExport = join(dir, "results-cli.zip");
      execFileSync(bin, ["export", "--data", data, "--out", cliExport], { stdio: ["ignore", "ignore", "pipe"] });
      assert.ok((await readFile(cliExport)).equals(await readFile(exported)), "the CLI exports what the server gives");
    } finally {
      await host.stop();
    }
    const stored = execFileSync("python3", ["-c", `import zipfile, sys, json
z = zipfile.ZipFile(sys.argv[1])
print(json.dumps([json.loads(z.read(n)) for n in z.namelist()]))`, exported], { encoding: "utf8" });
    const bodies = JSON.parse(stored);
    const notice = bodies.find((b) => b.withdrawal);
    assert.equal(notice?.withdrawal.participant, "PW3");
    // The run's own notice: the link's SESSION_ID is Prolific's unfilled placeholder, so the
    // page made the run.
    assert.match(notice.withdrawal.run, /^local-[0-9a-f]{16}$/);
    assert.ok(!bodies.some((b) => b.manifest?.participant === "PW3"), "the server deleted what PW3 had sent");
    assert.ok(!JSON.stringify(bodies).includes("PW2"), "nothing of PW2 was sent");
    await withPage("study-page-site-results", {}, async (page) => {
      await page.goto(`${served.base}/analysis`);
      await page.getByTestId("analysis-files").setInputFiles([exported]);
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length > 0, null, { timeout: TIMEOUT });
      await page.getByTestId("analysis-resamples").fill("1");
      await page.getByTestId("analyse").click();
      const row = (id) => page.locator(`[data-testid=participant-runs] tr[data-participant=${id}]`);
      await row("PW1").waitFor({ timeout: TIMEOUT });
      assert.equal(await row("PW1").getAttribute("data-state"), "complete");
      assert.equal(await row("PW3").getAttribute("data-state"), "withdrawn");
      const table = async (testid) => parseCsv(await readFile(await download(page, testid, dir), "utf8"));
      const rows = await table("download-trials");
      assert.deepEqual(rows.filter((r) => r.participant === "PW1").map((r) => r.response), WORDS, "each of PW1's answers once, the reload's too");
      assert.ok(!rows.some((r) => r.participant === "PW3"), "nothing of PW3 in trials.csv");
      const runs = await table("download-runs");
      const state = (who) => runs.find((r) => r.participant === who)?.run_state;
      assert.equal(state("PW1"), "complete");
      assert.equal(state("PW3"), "withdrawn");
      await screenshot(page, "study-site-results.png");
    });
    console.log(`Study page, step by step:\n  ${took.join("\n  ")}`);
  } finally {
    served.server.close();
    jatos.server.close();
  }
});
