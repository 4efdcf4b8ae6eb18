// Runs that cannot mix, in headless Chromium: the same Prolific id in two studies, a JATOS
// study link (General Multiple) played twice in one browser, and participants taking turns on
// one computer each get a run of their own — their own consent screen, their own answers, and
// nothing of anyone else's sent; a browser without IndexedDB still delivers every answer to the
// study's server before the redirect.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFile, rm, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { DIST, ROOT, isFinalKey, serveDist, screenshot, withPage, cliBinary } from "./harness.mjs";
import { startJatos } from "./jatos_fake.mjs";

const TIMEOUT = 240_000;
const PASSAGE = { id: "short", title: "Short", text: "One two three four five" };

let served;
before(async () => { served = await serveDist(); });
after(() => served?.server.close());

async function guess(page, word, position) {
  const input = page.getByTestId("guess");
  await input.waitFor({ timeout: TIMEOUT });
  await input.fill(word);
  await input.press("Enter");
  if (position === undefined) return;
  await page.waitForFunction((p) => {
    const c = document.querySelector("[data-testid=passage-context]");
    return document.querySelector("[data-testid=complete]") || (c && Number(c.dataset.position) > p);
  }, position, { timeout: TIMEOUT });
}

/** Consent, then `words` answered from position 2 on. */
async function playAll(page, words) {
  await page.getByTestId("consent").waitFor({ timeout: TIMEOUT });
  await page.getByTestId("consent-accept").click();
  for (const [i, w] of words.entries()) await guess(page, w, i < words.length - 1 ? i + 2 : undefined);
}

/** What the server holds of `participant`, by run: the distinct (position → answer) of each. */
function runsOnServer(participant) {
  const runs = new Map();
  for (const b of served.submissions.filter((b) => b.manifest?.participant === participant)) {
    const run = b.manifest.run;
    if (!runs.has(run)) runs.set(run, new Map());
    for (const r of b.responses) {
      const seen = runs.get(run).get(r.position);
      assert.ok(seen === undefined || seen === r.response, `two answers at ${run}/${r.position}`);
      runs.get(run).set(r.position, r.response);
    }
  }
  return runs;
}

const answersOf = (positions) => [...positions.entries()].sort((a, b) => a[0] - b[0]).map(([, w]) => w);

test("runs: one Prolific id in two studies gets two runs, each with its own consent and answers", { timeout: 2 * TIMEOUT }, async () => {
  const files = [];
  const study = (id, consent) => ({ title: `Study ${id}`, study_id: `study-${id}`, texts: [PASSAGE], passages: ["short"], consent, submit_url: "/submit", send_each_response: true, redirect_url: `${served.base}/done-runs.html` });
  for (const id of ["a", "b"]) {
    const file = join(DIST, `study-runs-${id}.json`);
    await writeFile(file, JSON.stringify(study(id, `Consent of study ${id}.`)));
    files.push(file);
  }
  await writeFile(join(DIST, "done-runs.html"), "<!DOCTYPE html><title>done</title><p>done</p>");
  try {
    await withPage("runs-two-studies", {}, async (page) => {
      await page.goto(`${served.base}/?study=study-runs-a.json&PROLIFIC_PID=P1`);
      await playAll(page, ["two", "three", "four", "five"]);
      await page.waitForURL(/done-runs/, { timeout: TIMEOUT });
      // The same person, the same browser, another study over the same passage.
      await page.goto(`${served.base}/?study=study-runs-b.json&PROLIFIC_PID=P1`);
      await page.getByTestId("consent").waitFor({ timeout: TIMEOUT });
      assert.match(await page.getByTestId("consent").innerText(), /Consent of study b/);
      assert.equal(await page.locator("[data-testid=passage-context]").count(), 0, "study B starts at its consent, not at study A's place");
      await playAll(page, ["eins", "zwei", "drei", "vier"]);
      await page.waitForURL(/done-runs/, { timeout: TIMEOUT });
    });
    const runs = runsOnServer("P1");
    assert.equal(runs.size, 2, `two runs: ${[...runs.keys()]}`);
    const byStudy = new Map(served.submissions.filter((b) => b.manifest?.participant === "P1").map((b) => [b.manifest.run, b.manifest.study_id]));
    for (const [run, positions] of runs) {
      const words = byStudy.get(run) === "study-a" ? ["two", "three", "four", "five"] : ["eins", "zwei", "drei", "vier"];
      assert.deepEqual(answersOf(positions), words, `run ${run} holds only its own answers`);
    }
    // Each run was completed once, under its own final key.
    const finals = served.submissions.filter((b) => isFinalKey(b.key, "P1"));
    assert.equal(finals.length, 2);
    assert.deepEqual(finals.map((b) => b.responses.length), [4, 4]);
  } finally {
    for (const f of files) await rm(f, { force: true });
  }
});

test("runs: participants taking turns on one computer each get their own id and run; the last one's data stays apart", { timeout: 2 * TIMEOUT }, async () => {
  const file = join(DIST, "study-runs-lab.json");
  await writeFile(file, JSON.stringify({ title: "Lab study", study_id: "study-lab", texts: [PASSAGE], passages: ["short"], consent: "Lab consent.", submit_url: "/submit", send_each_response: true }));
  try {
    await withPage("runs-lab-computer", {}, async (page) => {
      const link = `${served.base}/?study=study-runs-lab.json`;
      // The first person answers two words and walks away.
      await page.goto(link);
      await page.getByTestId("consent-accept").click();
      await guess(page, "two", 2);
      await guess(page, "three", 3);
      // The next person is started by the lab's link: a fresh participant at the consent.
      await page.goto(`${link}&new_participant`);
      await page.getByTestId("consent").waitFor({ timeout: TIMEOUT });
      assert.doesNotMatch(page.url(), /new_participant/, "a reload continues this participant");
      await playAll(page, ["a", "b", "c", "d"]);
      await page.getByTestId("complete").waitFor({ timeout: TIMEOUT });
      // The end screen offers the next person a run of their own.
      await page.getByTestId("next-participant").waitFor({ timeout: TIMEOUT });
      await screenshot(page, "lab-next-participant.png");
      await page.getByTestId("next-participant").click();
      await playAll(page, ["x", "y", "z", "w"]);
      await page.getByTestId("complete").waitFor({ timeout: TIMEOUT });
      // The end screen shows before the final bundle's POST is answered: the page stays open
      // until both people's final bundles have arrived (a tab closed earlier would leave the
      // last one to the outbox's next visit, which this test does not make).
      const finalsIn = () => served.submissions.filter((b) => b.manifest?.study_id === "study-lab" && b.key.endsWith("/complete")).length;
      const deadline = Date.now() + TIMEOUT;
      while (finalsIn() < 2 && Date.now() < deadline) await page.waitForTimeout(100);
    });
    const people = [...new Set(served.submissions.filter((b) => b.manifest?.study_id === "study-lab").map((b) => b.manifest.participant))];
    assert.equal(people.length, 3, `three participants: ${people}`);
    const answers = people.map((p) => [...runsOnServer(p).values()].map(answersOf));
    assert.deepEqual(answers.map((runs) => runs.length), [1, 1, 1], "one run each");
    assert.deepEqual(answers.map(([words]) => words.join(" ")).sort(), ["a b c d", "two three", "x y z w"]);
    const finals = served.submissions.filter((b) => b.manifest?.study_id === "study-lab" && b.key.endsWith("/complete"));
    assert.deepEqual(finals.map((b) => b.responses.map((r) => r.response).join(" ")).sort(), ["a b c d", "x y z w"], "each final bundle holds its own person's answers only");
  } finally {
    await rm(file, { force: true });
  }
});

test("runs: without IndexedDB every answer still reaches the study's server, and then the redirect", { timeout: 2 * TIMEOUT }, async () => {
  const file = join(DIST, "study-runs-memory.json");
  await writeFile(file, JSON.stringify({ title: "Memory study", study_id: "study-memory", texts: [PASSAGE], passages: ["short"], consent: "Consent.", submit_url: "/submit", send_each_response: true, redirect_url: `${served.base}/done-memory.html` }));
  await writeFile(join(DIST, "done-memory.html"), "<!DOCTYPE html><title>done</title><p>done</p>");
  try {
    await withPage("runs-memory-only", {}, async (page) => {
      // A private mode that refuses IndexedDB (the open throws, as Firefox's did).
      await page.addInitScript(() => {
        IDBFactory.prototype.open = function () { throw new DOMException("The operation is insecure.", "SecurityError"); };
      });
      await page.goto(`${served.base}/?study=study-runs-memory.json&PROLIFIC_PID=M1`);
      await page.getByTestId("consent-accept").click();
      assert.match(await page.getByTestId("storage-problem").innerText(), /cannot store your answers.*sent to the study's server/);
      for (const [i, w] of ["two", "three", "four", "five"].entries()) await guess(page, w, i < 3 ? i + 2 : undefined);
      await page.waitForURL(/done-memory/, { timeout: TIMEOUT });
    });
    const [run, ...others] = runsOnServer("M1").values();
    assert.equal(others.length, 0);
    assert.deepEqual(answersOf(run), ["two", "three", "four", "five"]);
    assert.equal(served.submissions.filter((b) => isFinalKey(b.key, "M1")).length, 1);
  } finally {
    await rm(file, { force: true });
  }
});

test("runs: a JATOS General Multiple link played twice in one browser with one Prolific id makes two runs with their own answers", { timeout: 3 * TIMEOUT }, async () => {
  const jatos = await startJatos();
  const dir = await mkdtemp(join(tmpdir(), "clozelab-runs-"));
  const PROLIFIC = `${jatos.base}/prolific/complete?cc=RUNS`;
  try {
    const studyFile = join(dir, "study.json");
    await writeFile(studyFile, JSON.stringify({ title: "Runs in JATOS", texts: [PASSAGE], passages: ["short"], consent: "JATOS consent.", redirect_url: PROLIFIC }));
    const jzip = join(dir, "study.jzip");
    execFileSync(cliBinary(), ["jatos-package", "--study", studyFile, "--dist", DIST, "--out", jzip, "--allow-development-build"], { stdio: ["ignore", "ignore", "pipe"] });
    await jatos.importStudy(jzip);
    await withPage("runs-jatos-twice", {}, async (page) => {
      for (const words of [["two", "three", "four", "five"], ["uno", "dós", "tres", "cuatro"]]) {
        await page.goto(`${jatos.links.generalMultiple}?PROLIFIC_PID=PM1`);
        // The second run starts at the consent too: nothing of the first is loaded.
        await playAll(page, words);
        await page.waitForURL(PROLIFIC, { timeout: TIMEOUT });
      }
      // A General Single link opened again in this browser is refused by JATOS itself.
      await page.goto(`${jatos.links.generalSingle}?PROLIFIC_PID=PM1`);
      await page.goto(`${jatos.links.generalSingle}?PROLIFIC_PID=PM1`);
      assert.match(await page.locator("body").innerText(), /run in this browser already/);
    });
    const runs = [...jatos.runs.values()].filter((r) => r.workerType === "GeneralMultiple");
    assert.equal(runs.length, 2);
    for (const [run, words] of [[runs[0], ["two", "three", "four", "five"]], [runs[1], ["uno", "dós", "tres", "cuatro"]]]) {
      assert.equal(run.state, "FINISHED");
      const sent = run.componentResults.map((c) => c.data ?? "").join("").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
      assert.ok(sent.every((b) => b.manifest.run === `jatos-${run.id}`));
      const got = [...new Set(sent.flatMap((b) => b.responses.map((r) => `${r.position}:${r.response}`)))].sort();
      assert.deepEqual(got, words.map((w, i) => `${i + 2}:${w}`).sort(), `run ${run.id} holds only its own answers`);
    }
    // Back in the Analysis page: PM1 twice, one row per run, each complete, none flagged —
    // from the archive as JATOS 3.8–3.9.1 named it, written in Latin-1 by a server whose
    // default charset is not UTF-8 ("dós" then is not UTF-8).
    const archive = await jatos.exportResults({ name: "jatos_results.jrzip", charset: "latin1" });
    await withPage("runs-jatos-analysis", {}, async (page) => {
      await page.goto(`${served.base}/analysis`);
      await page.getByTestId("analysis-files").setInputFiles([join(ROOT, "tests/fixtures/analysis/norms.jsonl"), archive]);
      await page.getByTestId("analysis-resamples").fill("1");
      await page.getByTestId("analyse").click();
      const rows = page.locator("[data-testid=participant-runs] tr[data-participant=PM1]");
      await rows.first().waitFor({ timeout: TIMEOUT });
      assert.equal(await rows.count(), 2);
      assert.deepEqual((await rows.evaluateAll((rs) => rs.map((r) => [r.dataset.run, r.dataset.state, r.dataset.flagged]))).sort(), [["jatos-1", "complete", "false"], ["jatos-2", "complete", "false"]]);
      assert.match(await page.getByTestId("analysis-notes").innerText(), /2 runs \(2 complete, 0 incomplete, 0 withdrawn\): 8 answers/);
      assert.match(await page.locator("[role=alert]").first().innerText(), /Read as Latin-1.*data\.txt/s);
      await screenshot(page, "runs-analysis.png");
    });
  } finally {
    jatos.server.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("runs: a second tab of a run says so and writes nothing until the first is closed — with Web Locks and without (BroadcastChannel)", { timeout: 2 * TIMEOUT }, async () => {
  const file = join(DIST, "study-runs-tabs.json");
  await writeFile(file, JSON.stringify({ title: "Tabs study", study_id: "study-tabs", texts: [PASSAGE], passages: ["short"], submit_url: "/submit", send_each_response: true }));
  try {
    for (const [pid, locks] of [["TT1", true], ["TT2", false]]) {
      await withPage(`runs-two-tabs-${locks ? "locks" : "broadcast"}`, {}, async (page) => {
        const context = page.context();
        if (!locks) await context.addInitScript(() => Object.defineProperty(Navigator.prototype, "locks", { get: () => undefined }));
        const link = `${served.base}/?study=study-runs-tabs.json&PROLIFIC_PID=${pid}`;
        await page.goto(link);
        // After the first answer: the page may have reloaded once on its way to cross-origin
        // isolation (the service worker, where a test allows it).
        await guess(page, "two", 2);
        assert.equal(await page.evaluate(() => "locks" in navigator && navigator.locks !== undefined), locks);
        const second = await context.newPage();
        await second.goto(link);
        await second.getByTestId("game-error").waitFor({ timeout: TIMEOUT });
        assert.match(await second.getByTestId("game-error").innerText(), /already open in another tab/);
        assert.equal(await second.getByTestId("guess").count(), 0, "the second tab asks nothing");
        if (locks) await screenshot(second, "open-elsewhere.png");
        await guess(page, "three", 3);
        await page.close();
        // Once the first tab is gone, the second carries on where the run stands.
        await second.getByTestId("guess").waitFor({ timeout: TIMEOUT });
        assert.equal(await second.locator("[data-testid=passage-context]").getAttribute("data-position"), "4");
        await second.close();
      });
    }
    for (const pid of ["TT1", "TT2"]) {
      const [run, ...others] = runsOnServer(pid).values();
      assert.equal(others.length, 0, `${pid}: one run`);
      assert.deepEqual(answersOf(run), ["two", "three"]);
    }
  } finally {
    await rm(file, { force: true });
  }
});
