// clozelab inside JATOS: `clozelab jatos-package` builds the archive, the JATOS stand-in
// (jatos_fake.mjs, written from JATOS's source: no registry ships JATOS) imports it with
// JATOS's checks, and a Prolific participant plays the study through JATOS's study link — each
// answer lands in JATOS's result data as it is saved, a reload resumes, failed and
// unacknowledged sends are retried without duplicating anything, and JATOS's end call marks the
// run finished and redirects to Prolific.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir, availableParallelism } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { DIST, ROOT, answerTwoToken, serveDist, screenshot, withPage, cliBinary, documentLoads } from "./harness.mjs";
import { startJatos } from "./jatos_fake.mjs";

const TIMEOUT = 240_000;
const WORDS = ["two", "three", "four", "five"];

function jatosPackage(study) {
  return mkdtemp(join(tmpdir(), "clozelab-jatos-")).then(async (dir) => {
    const studyFile = join(dir, "study.json");
    await writeFile(studyFile, JSON.stringify(study));
    const out = join(dir, "study.jzip");
    const bin = cliBinary();
    execFileSync(bin, ["jatos-package", "--study", studyFile, "--dist", DIST, "--out", out, "--allow-development-build"], { stdio: ["ignore", "ignore", "pipe"] });
    return out;
  });
}

// JATOS's result data as the app writes it: one bundle per line, appended (`POST resultData`).
const bundles = (data) => (data ?? "").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
// Everything a run holds, over its component results (a reload opens a new one).
const allData = (run) => run.componentResults.map((c) => c.data ?? "").join("");
const positions = (data) => [...new Set(bundles(data).flatMap((b) => b.responses.map((r) => r.position)))].sort((a, b) => a - b);

async function until(what, check, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("JATOS: the package imports, a Prolific participant's every answer reaches JATOS once, the end call redirects to Prolific", { timeout: 2 * TIMEOUT }, async () => {
  const jatos = await startJatos();
  // JATOS fills `[PARAM]` in the end redirect URL from the study link's parameters.
  const PROLIFIC_TEMPLATE = `${jatos.base}/prolific/submissions/complete?cc=C0DEJ&pid=[PROLIFIC_PID]`;
  const PROLIFIC = `${jatos.base}/prolific/submissions/complete?cc=C0DEJ&pid=PJ1`;
  const study = {
    title: "Cloze in JATOS",
    texts: [{ id: "short", title: "Short", text: "One two three four five" }],
    passages: ["short"],
    consent: "I agree to take part.",
    completion_code: "C0DEJ",
    redirect_url: PROLIFIC_TEMPLATE,
  };
  try {
    await jatos.importStudy(await jatosPackage(study));
    assert.equal(jatos.study.endRedirectUrl, PROLIFIC_TEMPLATE);
    await withPage("jatos-study", {}, async (page) => {
      await page.goto(`${jatos.studyLink}?PROLIFIC_PID=PJ1&STUDY_ID=S9&SESSION_ID=X9`);
      await page.getByTestId("consent").waitFor({ timeout: TIMEOUT });
      assert.match(page.url(), /\/publix\/[0-9a-f-]+\/[0-9a-f-]+\/start$/);
      const [run] = jatos.runs.values();
      await page.getByTestId("consent-accept").click();
      const guess = async (word, position, last = false) => {
        const input = page.getByTestId("guess");
        await input.waitFor({ timeout: TIMEOUT });
        await input.fill(word);
        await input.press("Enter");
        // The last answer leads on to JATOS's end and Prolific, possibly before a check here.
        if (last) return;
        await page.waitForFunction((p) => {
          const c = document.querySelector("[data-testid=passage-context]");
          return document.querySelector("[data-testid=complete]") || (c && Number(c.dataset.position) > p);
        }, position, { timeout: TIMEOUT });
      };
      // Each answer is in JATOS's result data as soon as it is saved.
      await guess(WORDS[0], 2);
      await until("the first answer in JATOS", () => positions(allData(run)).length === 1);
      assert.equal(bundles(allData(run))[0].responses.length, 1, "each send is a bundle of one");
      await screenshot(page, "jatos-study.png");
      // At phone width the study page fits without sideways scrolling.
      await page.setViewportSize({ width: 390, height: 844 });
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), "no sideways scrolling at 390 px");
      await screenshot(page, "jatos-study-phone.png");
      await page.setViewportSize({ width: 1100, height: 900 });
      // Two sends fail and one acknowledgement is lost: retried, and still each answer once.
      jatos.faults.failWrites = 2;
      jatos.faults.lostAcks = 1;
      await guess(WORDS[1], 3);
      await until("the second answer through the faults", () => positions(allData(run)).length === 2 && jatos.faults.lostAcks === 0);
      // A reload (JATOS serves the same component page again) resumes where it was.
      await page.reload();
      await page.getByTestId("guess").waitFor({ timeout: TIMEOUT });
      assert.equal(await page.locator("[data-testid=passage-context]").getAttribute("data-position"), "4");
      assert.equal(run.componentResults.length, 2, "JATOS opened a new component result for the reload");
      await guess(WORDS[2], 4);
      await guess(WORDS[3], 5, true);
      await page.waitForURL(PROLIFIC, { timeout: TIMEOUT });
      assert.equal(run.state, "FINISHED", "JATOS's end call finished the run");
      assert.equal(run.successful, true);
      // The last line is the final bundle: every answer, each under its run's key.
      const bundle = bundles(run.resultData).at(-1);
      assert.deepEqual(bundle.responses.map((r) => r.response), WORDS);
      assert.deepEqual(bundle.responses.map((r) => r.position), [2, 3, 4, 5]);
      assert.deepEqual(bundle.responses.map((r) => r.idempotency_key), [2, 3, 4, 5].map((p) => `PJ1/jatos-${run.id}/short/${p}`));
      assert.equal(bundle.manifest.participant, "PJ1");
      assert.equal(bundle.manifest.run, `jatos-${run.id}`);
      assert.equal(bundle.manifest.url_ids.STUDY_ID, "S9");
      assert.deepEqual(positions(allData(run)), [2, 3, 4, 5]);
      assert.equal(run.puts, 0, "nothing replaced: every send was appended");
      assert.ok(run.posts >= 4 + 3, `each answer, the retries and the final bundle were appended (${run.posts})`);
      // Every per-answer send was small: one answer each.
      assert.ok(bundles(allData(run)).slice(0, -1).every((b) => b.responses.length === 1));
      assert.ok(run.heartbeats >= 1, "JATOS heard the heartbeat");
      // The run is over: JATOS takes no more data for it.
      assert.ok(jatos.log.includes(`GET /publix/${run.uuid}/end`));
      // JATOS's results archive goes back into the Analysis page: the participant is there,
      // complete, each answer once (the reload's component result repeats the first two).
      const archive = await jatos.exportResults();
      const served = await serveDist();
      try {
        await page.goto(`${served.base}/analysis`);
        await page.getByTestId("analysis-files").setInputFiles([join(ROOT, "tests/fixtures/analysis/norms.jsonl"), archive]);
        await page.getByTestId("analysis-resamples").fill("1");
        await page.getByTestId("analyse").click();
        const row = page.locator("[data-testid=participant-runs] tr[data-participant=PJ1]");
        await row.waitFor({ timeout: TIMEOUT });
        assert.equal(await row.getAttribute("data-state"), "complete");
        assert.match(await row.innerText(), /4 of 4/);
        assert.match(await page.getByTestId("analysis-notes").innerText(), /1 run \(1 complete, 0 incomplete, 0 withdrawn\): 4 answers from \d+ bundles, \d+ repeats counted once/);
        assert.doesNotMatch(await page.getByTestId("analysis-notes").innerText(), /flagged/);
        await screenshot(page, "jatos-results-analysis.png");
      } finally {
        served.server.close();
      }
    });
  } finally {
    jatos.server.close();
  }
});

test("JATOS: a two-token study with its model in the package; a participant who leaves has left every round in JATOS", { timeout: 2 * TIMEOUT }, async () => {
  const jatos = await startJatos();
  const study = {
    title: "Tokens in JATOS",
    game: "two_token",
    texts: [{ id: "tok", title: "Tokens", text: "The cat sat on the mat, and then it slept in the sun all afternoon." }],
    passages: ["tok"],
    positions_per_passage: 2,
    rounds_per_position: 1,
    seed: 3,
    model: "models/test/",
    redirect_url: `${jatos.base}/prolific/done`,
    // Two lists, and a proxy before JATOS that refuses WebSockets: no batch session, so the
    // list comes from the participant's id, and the study goes on.
    lists: [{ name: "L1", passages: ["tok"] }, { name: "L2", passages: ["tok"] }],
  };
  jatos.faults.noWebSockets = true;
  try {
    await jatos.importStudy(await jatosPackage(study));
    await withPage("jatos-tokens", {}, async (page) => {
      await page.goto(`${jatos.studyLink}?PROLIFIC_PID=PT1`);
      const [run] = jatos.runs.values();
      // The model loads from the study's assets in JATOS, beside the page.
      await answerTwoToken(page, TIMEOUT, 1);
      await until("the first round in JATOS", () => bundles(allData(run)).length === 1);
      const records = bundles(allData(run))[0].records;
      assert.equal(records[0].participant, "PT1");
      assert.ok(jatos.log.some((l) => l.startsWith("WS ") && l.endsWith("/batch/open")), "the batch channel was tried");
      assert.deepEqual(jatos.batch.data, {}, "and nothing reached the batch session");
      assert.equal(records[0].idempotency_key, `PT1/jatos-${run.id}/tok/${records[0].position}/0`);
      assert.ok(jatos.log.some((l) => l.endsWith("/models/test/model.safetensors")));
      // They close the tab here: the round they answered is on the server, the run unfinished.
      await page.close();
      assert.equal(run.state, "STARTED");
      const sent = bundles(allData(run))[0];
      assert.equal(sent.game, "two_token");
      assert.equal(sent.manifest.list.how, "participant_hash");
    });
  } finally {
    jatos.server.close();
  }
});

const THREADED_STUDY = {
  game: "two_token",
  texts: [{ id: "tok", title: "Tokens", text: "The cat sat on the mat, and then it slept in the sun all afternoon." }],
  passages: ["tok"],
  // Two rounds: with one, the study ends (and leaves for Prolific) as the round is answered.
  positions_per_passage: 2,
  rounds_per_position: 1,
  seed: 5,
  model: "models/test/",
};

/** Answers the study's first round and checks that its manifest says GPT-2 ran on every core. */
async function firstRoundOnEveryCore(page, firstBundle) {
  await answerTwoToken(page, TIMEOUT, 1);
  assert.equal(await page.evaluate(() => self.crossOriginIsolated), true);
  let manifest;
  await until("the first round's bundle", () => (manifest = firstBundle()?.manifest));
  const threads = Math.min(availableParallelism(), 8);
  assert.equal(manifest.backend, "cpu");
  assert.match(manifest.adapter, threads > 1 ? new RegExp(`, ${threads} threads`) : /one thread/);
}

// A two-token study with its model in JATOS, run to its second round on the CPU. `proxyHeaders`:
// a proxy in front of JATOS adds COOP/COEP; without, JATOS answers as it does out of the box and
// the isolation service worker adds them (one reload of the component's page).
async function threadedJatosRun(name, { proxyHeaders }) {
  const jatos = await startJatos({ isolated: proxyHeaders });
  const study = { ...THREADED_STUDY, title: "Tokens in isolated JATOS", redirect_url: `${jatos.base}/prolific/done` };
  try {
    await jatos.importStudy(await jatosPackage(study));
    await withPage(name, { serviceWorkers: proxyHeaders ? "block" : "allow" }, async (page) => {
      await page.goto(`${jatos.studyLink}?PROLIFIC_PID=PI1`);
      const [run] = jatos.runs.values();
      await firstRoundOnEveryCore(page, () => bundles(allData(run))[0]);
      const asked = (what) => jatos.log.filter((l) => l.startsWith(`GET /publix/${run.uuid}/`) && l.endsWith(`/${what}`)).length;
      if (proxyHeaders) {
        assert.equal(run.componentResults.length, 1);
      } else {
        // The load the service worker threw away opened a component result (JATOS does so on
        // every start) but never started the app: no data, and JATOS was asked once.
        assert.deepEqual(run.componentResults.map((c) => c.state), ["RELOADED", "STARTED"]);
        assert.equal(run.componentResults[0].data, null);
        assert.ok(await page.evaluate(() => Boolean(navigator.serviceWorker.controller)));
      }
      assert.equal(asked("initData"), 1, jatos.log.join("\n"));
    });
  } finally {
    jatos.server.close();
  }
}

test("JATOS behind a proxy that makes the page cross-origin isolated: the study runs, and GPT-2 on the CPU uses every core", { timeout: 2 * TIMEOUT }, () =>
  threadedJatosRun("jatos-isolated", { proxyHeaders: true }));

test("JATOS as it comes (no COOP/COEP): the service worker isolates the study's page with one reload that records nothing, and GPT-2 on the CPU uses every core", { timeout: 2 * TIMEOUT }, () =>
  threadedJatosRun("jatos-service-worker", { proxyHeaders: false }));

test("the static-site package of a study with its model, on a host that sends no COOP/COEP: isolated by its service worker, every answer sent once", { timeout: 2 * TIMEOUT }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "clozelab-site-"));
  const studyFile = join(dir, "study.json");
  await writeFile(studyFile, JSON.stringify({ ...THREADED_STUDY, title: "Tokens on a static host", submit_url: "/submit", send_each_response: true }));
  execFileSync(cliBinary(), ["site-package", "--study", studyFile, "--dist", DIST, "--out", join(dir, "site.zip"), "--allow-development-build"], { stdio: ["ignore", "ignore", "pipe"] });
  const site = join(dir, "site");
  execFileSync("python3", ["-m", "zipfile", "-e", join(dir, "site.zip"), site]);
  const host = await serveDist(site);
  try {
    await withPage("site-service-worker", { serviceWorkers: "allow" }, async (page) => {
      const loads = documentLoads(page);
      await page.goto(`${host.base}/?study=study.json&PROLIFIC_PID=PS1`);
      await firstRoundOnEveryCore(page, () => host.submissions.find((b) => b.manifest));
      assert.equal(loads.length, 2, `one reload: ${loads.join(", ")}`);
      await answerTwoToken(page, TIMEOUT, 2);
      await until("the final bundle at the server", () => host.submissions.some((b) => b.records?.length === 2));
      const sent = host.submissions.flatMap((b) => b.records ?? []).map((r) => r.idempotency_key);
      assert.equal(new Set(sent).size, 2, `two rounds, each sent under one key: ${sent.join(", ")}`);
      assert.equal(host.submit.duplicates, 0);
    });
  } finally {
    host.server.close();
  }
});

test("JATOS: the network cut at the end; back at the study's page later, the answers go out once and the run ends", { timeout: 2 * TIMEOUT }, async () => {
  const jatos = await startJatos();
  const PROLIFIC = `${jatos.base}/prolific/complete?cc=NET`;
  const study = { title: "Offline in JATOS", texts: [{ id: "short", title: "Short", text: "One two three four five" }], passages: ["short"], redirect_url: PROLIFIC };
  try {
    await jatos.importStudy(await jatosPackage(study));
    await withPage("jatos-offline", {}, async (page) => {
      await page.goto(`${jatos.studyLink}?PROLIFIC_PID=PN1`);
      const [run] = jatos.runs.values();
      const componentPage = page.url();
      for (const [i, word] of WORDS.entries()) {
        const input = page.getByTestId("guess");
        await input.waitFor({ timeout: TIMEOUT });
        if (i === WORDS.length - 1) {
          await until("the third answer in JATOS", () => positions(allData(run)).length === 3);
          await page.context().setOffline(true);
        }
        await input.fill(word);
        await input.press("Enter");
        if (i < WORDS.length - 1) await page.waitForFunction((p) => document.querySelector("[data-testid=passage-context]")?.dataset.position === String(p), i + 3, { timeout: TIMEOUT });
      }
      await page.getByTestId("unconfirmed").waitFor({ timeout: TIMEOUT });
      assert.equal(run.state, "STARTED");
      assert.equal(positions(allData(run)).length, 3, "the last answer has not reached JATOS");
      await page.context().setOffline(false);
      // They come back to the study's page (JATOS lets a reloadable component load again).
      await page.goto(componentPage);
      await page.waitForURL(PROLIFIC, { timeout: TIMEOUT });
      assert.equal(run.state, "FINISHED");
      assert.deepEqual(positions(allData(run)), [2, 3, 4, 5]);
      assert.equal(run.puts, 0);
    });
  } finally {
    jatos.server.close();
  }
});
