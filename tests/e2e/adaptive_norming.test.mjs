// Adaptive norming as a researcher runs it: built on the Study page (refused while the design
// cannot state it), packaged for JATOS, and played by participants through the JATOS stand-in's
// batch session. Every list first gets its 10 runs (the least-used first, as without the
// option); then each new participant gets the list whose contexts are furthest from the target,
// also while a run of it is still playing; participants who leave midway add nothing; once the
// target is met the batch session says so and the next participant is sent to the study's
// "full" address, their JATOS run aborted. Each run's data says why it got its list; the
// batch session's counts equal what the completed runs answered; `clozelab norming-state` and
// the Analysis page say the same of JATOS's export, and the page offers the state file a study
// outside JATOS serves.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { DIST, cliBinary, download, screenshot, serveDist, withPage } from "./harness.mjs";
import { startJatos } from "./jatos_fake.mjs";

const TIMEOUT = 120_000;
const TEXTS = "# a\nThe cat sat\n\n# b\nA dog ran";
// List A's participants all give the passage's words; list B's split between two answers, so
// only B stays short of the target after the first runs.
const ANSWERS = { A: [["cat", "sat"]], B: [["dog", "ran"], ["cow", "barked"]] };
const FIRST_RUNS = 10;

test("adaptive norming through JATOS: the least certain list next, the study full at its target", { timeout: 20 * TIMEOUT }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "clozelab-norming-"));
  const served = await serveDist();
  const jatos = await startJatos();
  const DONE = `${jatos.base}/prolific/submissions/complete?cc=NORM1`;
  const FULL = `${jatos.base}/prolific/submissions/complete?cc=FULL`;
  try {
    let jzip, studyFile;
    await withPage("norming-study-page", {}, async (page) => {
      await page.goto(`${served.base}/study`);
      await page.getByTestId("study-title").fill("Adaptive norms");
      await page.getByTestId("study-own-text").fill(TEXTS);
      await page.getByTestId("study-add-text").click();
      await page.getByTestId("study-redirect").fill(DONE);
      await page.locator(".adaptive-norming summary").click();
      await page.getByTestId("study-norming-enabled").check();
      // One list of passages: nothing to choose among.
      assert.match(await page.getByTestId("study-error").innerText(), /chooses among lists of passages: give the study at least two `lists`/);
      // The page names own passages p1, p2, … (their first lines are their titles).
      await page.getByTestId("study-lists").fill("A: p1\nB: p2");
      await page.getByTestId("study-norming-width").fill("wide");
      await page.locator(".adaptive-norming [role=alert]", { hasText: 'the interval width must be a number, got "wide"' }).waitFor();
      await page.getByTestId("study-norming-width").fill("0.5");
      await page.getByTestId("study-norming-share").fill("100");
      await page.getByTestId("study-norming-full-url").fill(FULL);
      await page.getByTestId("study-valid").waitFor();
      const config = JSON.parse(await page.getByTestId("study-json").textContent());
      assert.deepEqual(config.adaptive_norming, { max_interval_width: 0.5, share: 1, full_url: FULL });
      await page.locator(".adaptive-norming").scrollIntoViewIfNeeded();
      await screenshot(page, "norming-study-page.png");
      await page.setViewportSize({ width: 390, height: 844 });
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), "no sideways scrolling at 390 px");
      await screenshot(page, "norming-study-page-phone.png");
      await page.setViewportSize({ width: 1100, height: 900 });
      jzip = await download(page, "study-download-jatos", dir);
      studyFile = await download(page, "study-download-config", dir);
    });
    await jatos.importStudy(jzip);

    const tally = {}; // context → word → completed answers, counted here independently
    const bundleOf = (pid) => {
      const run = [...jatos.runs.values()].find((r) => r.urlQueryParameters.PROLIFIC_PID === pid);
      const lines = run.componentResults.map((c) => c.data ?? "").join("").trim().split("\n").filter(Boolean);
      return { run, bundle: lines.length ? JSON.parse(lines.at(-1)) : null };
    };
    // One participant: opens the study link, answers (all, or `leaveAfter` words and closes the
    // page), and returns the list they were given.
    const participant = async (pid, { pick = 0, leaveAfter } = {}) => {
      let list;
      await withPage(`norming-${pid}`, {}, async (page) => {
        await page.goto(`${jatos.links.generalMultiple}?PROLIFIC_PID=${pid}`);
        const context = page.getByTestId("passage-context");
        await context.waitFor({ timeout: TIMEOUT });
        list = (await context.innerText()) === "The" ? "A" : "B";
        const words = ANSWERS[list][pick % ANSWERS[list].length];
        for (const [i, word] of words.entries()) {
          if (i === leaveAfter) return;
          const input = page.getByTestId("guess");
          await input.waitFor({ timeout: TIMEOUT });
          await input.fill(word);
          await input.press("Enter");
          if (i === 0) await page.waitForFunction(() => Number(document.querySelector("[data-testid=passage-context]")?.dataset.position) === 3, null, { timeout: TIMEOUT });
        }
        await page.waitForURL(DONE, { timeout: TIMEOUT });
        const passage = list === "A" ? "p1" : "p2";
        words.forEach((w, i) => { const k = `${passage}:${i + 2}`; tally[k] ??= {}; tally[k][w] = (tally[k][w] ?? 0) + 1; });
      });
      return list;
    };

    // The first runs: the lists alternate, whatever the answers; one participant of each list
    // leaves midway, holding a place but adding no answers.
    const first = { A: 0, B: 0 };
    for (let i = 0; first.A + first.B < 2 * FIRST_RUNS; i++) {
      // The lists alternate A, B, …: F3 and F5 are both B's.
      const leaves = i === 3 || i === 5;
      const list = await participant(`F${i}`, { pick: first.B, leaveAfter: leaves ? 1 : undefined });
      first[list]++;
      if (!leaves) {
        const { bundle } = bundleOf(`F${i}`);
        assert.equal(bundle.manifest.list.how, "adaptive_norming");
        assert.match(bundle.manifest.list.reason, /runs every list gets before the answers steer/);
      }
    }
    assert.deepEqual(first, { A: FIRST_RUNS, B: FIRST_RUNS }, "every list's first places, the abandoned ones among them");
    const ledger = jatos.batch.data.clozelabLists;
    assert.deepEqual([ledger.F3.list, ledger.F3.state, ledger.F5.state], ["B", "playing", "playing"]);
    assert.deepEqual(jatos.batch.data.clozelabNorming, tally, "the batch session holds exactly the completed runs' answers");
    assert.equal(jatos.batch.data.clozelabNormingMet, undefined);

    // Now the answers steer: B, the list whose contexts are furthest from the target; one
    // participant leaves, the next gets B all the same.
    const steered = [];
    for (let i = 0; !jatos.batch.data.clozelabNormingMet; i++) {
      assert.ok(i < 8, "the target is met within a few runs of B");
      const list = await participant(`S${i}`, { leaveAfter: i === 0 ? 1 : undefined });
      steered.push(list);
      if (i > 0) {
        const { bundle } = bundleOf(`S${i}`);
        assert.equal(bundle.manifest.list.how, "adaptive_norming");
        assert.match(bundle.manifest.list.reason, /^list B: its contexts are furthest from the target/);
        // F3, F5 and S0 left B midway and still hold their places.
        if (i === 1) assert.match(bundle.manifest.list.reason, /3 runs still playing/);
      }
    }
    assert.ok(steered.every((l) => l === "B"), `all to B: ${steered}`);
    assert.deepEqual(jatos.batch.data.clozelabNorming, tally);
    const met = jatos.batch.data.clozelabNormingMet;
    assert.equal(met.contexts, 4);
    assert.equal(met.met, 4);

    // Full: the next participant goes to the study's "full" address, their run aborted.
    await withPage("norming-full", {}, async (page) => {
      await page.goto(`${jatos.links.generalMultiple}?PROLIFIC_PID=LATE`);
      await page.waitForURL(FULL, { timeout: TIMEOUT });
    });
    const late = bundleOf("LATE").run;
    assert.equal(late.state, "ABORTED");
    assert.match(late.abortMsg, /The study was full: 4 of 4 contexts meet the target/);
    assert.equal(jatos.batch.data.clozelabLists.LATE, undefined, "a participant turned away takes no place");

    // The results say the same: the CLI on JATOS's export, and the Analysis page.
    const archive = await jatos.exportResults();
    const state = JSON.parse(execFileSync(cliBinary(), ["norming-state", "--study", studyFile, "--file", archive,
      "--out", join(dir, "norming-state.json"), "--json"]).toString());
    assert.deepEqual([state.contexts, state.met, state.done], [4, 4, true], JSON.stringify(state));
    assert.deepEqual(JSON.parse(await readFile(join(dir, "norming-state.json"), "utf8")).counts, tally);
    const refused = spawnSync(cliBinary(), ["norming-state", "--study", studyFile.replace(/study\.json$/, "missing.json"), "--file", archive]);
    assert.notEqual(refused.status, 0);
    for (const width of [1100, 390]) {
      await withPage(`norming-analysis-${width}`, { viewport: { width, height: 900 } }, async (page) => {
        await page.goto(`${served.base}/analysis`);
        await page.getByTestId("analysis-files").setInputFiles([archive]);
        await page.getByTestId("analysis-resamples").fill("1");
        await page.getByTestId("analyse").click();
        const panel = page.getByTestId("norming-progress");
        await panel.waitFor({ timeout: TIMEOUT });
        assert.equal(await panel.getAttribute("data-done"), "true");
        // Each run's list, with why adaptive norming chose it.
        assert.match(await page.locator("tr[data-participant=S1] small[title]").getAttribute("title"), /^list B: its contexts are furthest from the target/);
        // The precision figure is drawn against the study's own target.
        assert.match(await page.locator("[data-figure=norming_precision]").innerText(), /meet all of the contexts with the target word's 95% interval at most 0\.5 wide/);
        assert.match(await page.getByTestId("norming-sentence").innerText(), /4 of 4 contexts meet the target .* on the completed runs: met, so new participants are told the study is full\./);
        if (width === 1100) {
          const file = await download(page, "download-norming-state", dir);
          assert.deepEqual(JSON.parse(await readFile(file, "utf8")).counts, tally);
        }
        await panel.scrollIntoViewIfNeeded();
        await screenshot(page, `norming-analysis-${width}.png`);
      });
    }
  } finally {
    served.server.close();
    jatos.server.close();
    await rm(dir, { recursive: true, force: true });
  }
});

// Outside JATOS no browser hears of another: the researcher serves the state file (what
// `clozelab norming-state` or the Analysis page writes) beside study.json, and each
// participant's page reads it at the start. The study goes out as `clozelab site-package`
// makes it, unpacked on a static host that answers unknown paths with the app's page (as its
// README asks, so a missing state file comes back as HTML), with the participants' link from
// that README. A settled list is not drawn; without a state file every list is equally needed
// (and the run says so); a state that meets the target sends the participant to the study's
// "full" address.
test("adaptive norming outside JATOS: the served state file decides, and says so in the run's data", { timeout: 5 * TIMEOUT }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "clozelab-norming-site-"));
  const FULL = "https://example.org/full";
  const study = {
    title: "Adaptive norms outside JATOS",
    texts: [{ id: "p1", title: "a", text: "The cat sat" }, { id: "p2", title: "b", text: "A dog ran" }],
    lists: [{ name: "A", passages: ["p1"] }, { name: "B", passages: ["p2"] }],
    adaptive_norming: { max_interval_width: 0.5, full_url: FULL },
    submit_url: "/submit",
  };
  await writeFile(join(dir, "study.json"), JSON.stringify(study));
  const zip = join(dir, "site.zip");
  execFileSync(cliBinary(), ["site-package", "--study", join(dir, "study.json"), "--dist", DIST, "--out", zip, "--allow-development-build"], { stdio: ["ignore", "ignore", "pipe"] });
  const site = join(dir, "site");
  execFileSync("python3", ["-m", "zipfile", "-e", zip, site]);
  const readme = await readFile(join(site, "README-host.txt"), "utf8");
  assert.match(readme, /Adaptive norming: each participant's list is drawn by the norming-state\.json served beside\nstudy\.json/);
  const link = readme.match(/https:\/\/your\.host(\/\?study=study\.json&[^\s]+)/)[1];
  const served = await serveDist(site, { pageForMissing: true });
  const state = (b2, b3) => ({
    written_at: "2026-11-28T07:00:00Z",
    runs: { A: 10, B: 10 },
    counts: { "p1:2": { cat: 12 }, "p1:3": { sat: 12 }, "p2:2": b2, "p2:3": b3 },
  });
  const open = (page, pid) => page.goto(`${served.base}${link.replace("{{%PROLIFIC_PID%}}", pid)}`);
  const manifestOf = async (pid) => {
    for (let i = 0; i < 600; i++) {
      const bundle = served.submissions.find((s) => s.manifest?.participant === pid);
      if (bundle) return bundle.manifest;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no final bundle of ${pid}`);
  };
  const play = async (page, words) => {
    for (const [i, word] of words.entries()) {
      const input = page.getByTestId("guess");
      await input.waitFor({ timeout: TIMEOUT });
      await input.fill(word);
      await input.press("Enter");
      if (i === 0) await page.waitForFunction(() => Number(document.querySelector("[data-testid=passage-context]")?.dataset.position) === 3, null, { timeout: TIMEOUT });
    }
  };
  try {
    // List A settled, B split: everyone to B.
    await writeFile(join(site, "norming-state.json"), JSON.stringify(state({ dog: 5, cow: 5 }, { ran: 5, barked: 5 })));
    for (const pid of ["O1", "O2"]) {
      let manifest;
      await withPage(`norming-outside-${pid}`, {}, async (page) => {
        await open(page, pid);
        await page.getByTestId("passage-context").waitFor({ timeout: TIMEOUT });
        assert.equal(await page.getByTestId("passage-context").innerText(), "A", `${pid} gets list B`);
        await play(page, ["dog", "ran"]);
        // The final bundle goes out from the page: wait for it before the page closes.
        manifest = await manifestOf(pid);
      });
      assert.equal(manifest.list.name, "B");
      assert.equal(manifest.list.how, "adaptive_norming");
      assert.match(manifest.list.reason, /^list B drawn in proportion to its contexts' summed shortfall .* by the state written 2026-11-28T07:00:00Z; 2 of 4 contexts met the target then$/);
    }
    // No state served (the host answers with the app's page): every list equally needed, said
    // in the run's reason.
    await rm(join(site, "norming-state.json"));
    await withPage("norming-outside-O3", {}, async (page) => {
      await open(page, "O3");
      await page.getByTestId("passage-context").waitFor({ timeout: TIMEOUT });
      await play(page, (await page.getByTestId("passage-context").innerText()) === "The" ? ["cat", "sat"] : ["dog", "ran"]);
      assert.match((await manifestOf("O3")).list.reason, /never \(no norming-state\.json served yet\)/);
    });
    // The target met by the state: to the "full" address, nothing asked.
    await writeFile(join(site, "norming-state.json"), JSON.stringify(state({ dog: 20 }, { ran: 20 })));
    await withPage("norming-outside-full", {}, async (page) => {
      await page.route(`${FULL}**`, (route) => route.fulfill({ status: 200, contentType: "text/html", body: "<p>full</p>" }));
      await open(page, "O4");
      await page.waitForURL(FULL, { timeout: TIMEOUT });
    });
    assert.equal(served.submissions.some((s) => s.manifest?.participant === "O4"), false);
  } finally {
    served.server.close();
    await rm(dir, { recursive: true, force: true });
  }
});
