// The next-word cloze game in headless Chromium: play mode with feedback, reload mid-passage
// (nothing lost or doubled), CSV export, hostile imports kept verbatim and inert, a study
// with URL parameters whose redirect happens only after the responses are saved, and GPT-2's
// feedback sampled on WebGPU against the CPU backend's.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFile, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { DIST, finalAttempts, serveDist, screenshot, withPage } from "./harness.mjs";

const TIMEOUT = 240_000;
const HOSTILE = "<img src=x onerror=alert(1)>";

let served;
before(async () => { served = await serveDist(); });
after(() => served?.server.close());

/** Every response in the app's IndexedDB (read in the page, as the app stores them). */
async function storedResponses(page) {
  return page.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open("clozelab");
    open.onerror = () => reject(open.error);
    open.onupgradeneeded = () => open.result.createObjectStore("responses");
    open.onsuccess = () => {
      const req = open.result.transaction("responses").objectStore("responses").getAll();
      req.onsuccess = () => { const out = req.result.map((s) => JSON.parse(s)); open.result.close(); resolve(out); };
      req.onerror = () => reject(req.error);
    };
  }));
}

async function guess(page, word) {
  const input = page.getByTestId("guess");
  await input.waitFor({ timeout: TIMEOUT });
  await input.fill(word);
  await input.press("Enter");
}

/** Opens a passage from the passage list ("/"). */
async function openPassage(page, id) {
  await page.locator(`[data-testid=passage-list] li[data-passage="${id}"] a`).click({ timeout: TIMEOUT });
  await page.getByTestId("passage-context").waitFor({ timeout: TIMEOUT });
}

test("play mode: feedback with GPT-2's words, reload resumes exactly, CSV export", { timeout: 3 * TIMEOUT }, () =>
  withPage("play", {}, async (page) => {
    await page.goto(`${served.base}/?model=models/test/&PROLIFIC_PID=e2e-play`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await screenshot(page, "passages-desktop.png");
    await openPassage(page, "kitchen");
    const context = page.getByTestId("passage-context");
    assert.equal(await context.getAttribute("data-passage"), "kitchen");
    assert.equal(await context.getAttribute("data-position"), "2");
    assert.equal((await context.innerText()).trim(), "Every");
    // The input is focused: typing goes straight in (keyboard-only play).
    await page.keyboard.type("sunday");
    await page.keyboard.press("Enter");
    const verdict = page.getByTestId("verdict");
    await verdict.waitFor({ timeout: TIMEOUT });
    assert.equal(await verdict.getAttribute("data-correct"), "true");
    const modelBars = page.getByTestId("model-bars");
    await modelBars.waitFor({ timeout: TIMEOUT });
    const words = await modelBars.locator("li").evaluateAll((li) => li.map((x) => Number(x.dataset.prob)));
    assert.ok(words.length > 0 && words.length <= 15 && words.every((p) => p > 0 && p <= 1), `${words}`);
    assert.match(await page.getByTestId("score").innerText(), /you: 100%/);
    await screenshot(page, "game-feedback-desktop.png");
    await page.keyboard.press("Enter"); // next context
    await guess(page, "Wrong-word");
    await page.getByTestId("verdict").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("next-context").click();
    await guess(page, "don't");
    await page.getByTestId("verdict").waitFor({ timeout: TIMEOUT });
    // A rejected entry stores nothing and says why.
    await page.getByTestId("next-context").click();
    await guess(page, "two words");
    assert.match(await page.getByTestId("entry-error").innerText(), /^One word only/);
    await screenshot(page, "game-desktop.png");

    // Reload mid-passage: same place, three responses, none doubled.
    await page.reload();
    await page.getByTestId("passage-context").waitFor({ timeout: TIMEOUT });
    assert.equal(await page.getByTestId("passage-context").getAttribute("data-position"), "5");
    // The passage list shows how far this player got.
    await page.getByRole("link", { name: "Play" }).click();
    await page.waitForFunction(() => /3 of 48 answered/.test(document.querySelector('[data-passage="kitchen"]')?.innerText ?? ""), null, { timeout: TIMEOUT });
    await openPassage(page, "kitchen");
    const stored = await storedResponses(page);
    const mine = stored.filter((r) => r.participant === "e2e-play");
    assert.deepEqual(mine.map((r) => r.position).sort(), [2, 3, 4]);
    assert.deepEqual(mine.map((r) => r.response).sort(), ["Wrong-word", "don't", "sunday"]);
    assert.ok(mine.every((r) => r.response_time_ms > 0 && r.timestamp.endsWith("Z")));

    // Export: the long CSV has exactly the stored rows.
    await page.locator("details.data-panel summary").click();
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("download-long").click()]);
    const csv = await readFile(await download.path(), "utf8");
    const lines = csv.trim().split(/\r?\n/);
    assert.equal(lines[0], "participant,passage,position,response,response_time_ms,timestamp,normalized,first_keystroke_ms,practice,run");
    assert.equal(lines.length, 4, csv);
    assert.ok(lines.some((l) => l.startsWith("e2e-play,kitchen,4,don't,") && l.includes(",dont,")), csv);
    // Every answer of play mode is in the browser's one run of it.
    const runs = new Set(lines.slice(1).map((l) => l.split(",").at(-1)));
    assert.equal(runs.size, 1, csv);
    assert.match([...runs][0], /^local-[0-9a-f]{16}$/);
  }));

test("hostile imports are shown verbatim and never run", { timeout: 2 * TIMEOUT }, () =>
  withPage("hostile", {}, async (page) => {
    // The participant id itself is a formula, as a URL can make it.
    await page.goto(`${served.base}/?PROLIFIC_PID=${encodeURIComponent("=e2e-hostile")}`);
    await page.getByTestId("passage-list").waitFor({ timeout: TIMEOUT });
    await page.locator("details.data-panel summary").click();
    const exportCsv = `participant,passage,position,response,response_time_ms,timestamp\nP9,kitchen,20,later,100,2026-11-22T00:00:02Z\nP9,kitchen,2,"${HOSTILE}",100,2026-11-22T00:00:00Z\nP9,kitchen,3,next,100,2026-11-22T00:00:01Z\n`;
    const passages = `# ${HOSTILE}\n<script>alert(2)</script> ${HOSTILE} then some words\n`;
    await page.getByTestId("import-data").setInputFiles([
      { name: `${HOSTILE}.csv`, mimeType: "text/csv", buffer: Buffer.from(exportCsv) },
      { name: "passages.txt", mimeType: "text/plain", buffer: Buffer.from(passages) },
    ]);
    const table = page.getByTestId("imported-responses");
    await table.waitFor({ timeout: TIMEOUT });
    assert.ok((await table.innerText()).includes(HOSTILE), "the response is shown as typed");
    assert.equal(await table.locator("img").count(), 0, "and is not markup");
    assert.ok((await page.getByTestId("import-status").innerText()).includes(`${HOSTILE}.csv: 3 responses`));
    // Positions in their order as numbers (2, 3, 20), not as text (2, 20, 3).
    const positions = await table.locator("tbody tr td:nth-child(3)").allInnerTexts();
    assert.deepEqual(positions, ["2", "3", "20"]);
    // The imported passage joins the list, its title as text; played, its first word is text.
    const listed = page.locator('[data-testid=passage-list] li[data-passage="p1"]');
    await listed.waitFor({ timeout: TIMEOUT });
    assert.ok((await listed.innerText()).includes(HOSTILE));
    await openPassage(page, "p1");
    const context = page.getByTestId("passage-context");
    assert.equal((await context.innerText()).trim(), "<script>alert(2)</script>");
    // Words are split on whitespace: after three guesses the context holds the whole tag.
    for (let i = 0; i < 3; i++) {
      await guess(page, "next");
      await page.getByTestId("next-context").click();
    }
    assert.equal((await context.innerText()).trim(), `<script>alert(2)</script> ${HOSTILE}`);
    assert.equal(await page.locator("main img, main script").count(), 0);
    // Exports: the exact CSV keeps the id as it is; the spreadsheet variant makes it inert.
    const rows = async () => {
      const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("download-long").click()]);
      return { name: download.suggestedFilename(), lines: (await readFile(await download.path(), "utf8")).trim().split(/\r?\n/).slice(1) };
    };
    await page.locator("details.data-panel").evaluate((d) => { d.open = true; });
    const exact = await rows();
    assert.ok(exact.lines.length === 3 && exact.lines.every((l) => l.startsWith("=e2e-hostile,p1,")), exact.lines.join("\n"));
    await page.getByTestId("spreadsheet-safe").check();
    const safe = await rows();
    assert.match(safe.name, /-spreadsheet\.csv$/);
    assert.ok(safe.lines.length === 3 && safe.lines.every((l) => l.startsWith("'=e2e-hostile,p1,")), safe.lines.join("\n"));
  }));

test("study: URL ids, consent, no feedback, completion code, redirect only after saving", { timeout: 2 * TIMEOUT }, async () => {
  const study = {
    title: "E2E study",
    texts: [{ id: "short", title: "Short", text: "One two three four five" }],
    passages: ["short"],
    consent: "I agree to take part.",
    instructions: "Type the next word.",
    completion_code: "C0DE42",
    redirect_url: `${served.base}/done.html?cc=C0DE42`,
    submit_url: "/submit",
  };
  const file = join(DIST, "study-e2e.json");
  const done = join(DIST, "done.html");
  await writeFile(file, JSON.stringify(study));
  await writeFile(done, "<!DOCTYPE html><title>done</title><p>Study platform page</p>");
  try {
    for (const [name, viewport] of [["desktop", { width: 1100, height: 900 }], ["phone", { width: 390, height: 844 }]]) {
      await withPage(`study-${name}`, { viewport }, async (page) => {
        const pid = `P-${name}`;
        await page.goto(`${served.base}/?study=study-e2e.json&PROLIFIC_PID=${pid}&STUDY_ID=S1&SESSION_ID=X1`);
        await page.getByTestId("consent").waitFor({ timeout: TIMEOUT });
        assert.equal(await page.getByTestId("model-state").count(), 0, "participants see the study only");
        await page.getByTestId("consent-accept").click();
        for (const [i, w] of ["two", "three", "4", "five"].entries()) {
          if (i === 0) await screenshot(page, `study-game-${name}.png`);
          await guess(page, w);
          if (i < 3) {
            await page.waitForFunction((pos) => document.querySelector("[data-testid=passage-context]")?.dataset.position === String(pos), i + 3, { timeout: TIMEOUT });
            assert.equal(await page.getByTestId("feedback").count(), 0, "no feedback in experiment mode");
          }
        }
        await page.waitForURL(/done\.html\?cc=C0DE42/, { timeout: TIMEOUT });
        // The JSON bundle reached the study's submit path before the redirect.
        const sent = served.submissions.filter((b) => b.manifest.participant === pid);
        assert.equal(sent.length, 1);
        assert.deepEqual(sent[0].responses.map((r) => r.response), ["two", "three", "4", "five"]);
        assert.equal(sent[0].manifest.url_ids.STUDY_ID, "S1");
        assert.equal(sent[0].manifest.study.completion_code, "C0DE42");
        // Back on the app's origin: all four responses were saved before the redirect.
        await page.goto(`${served.base}/index.html?PROLIFIC_PID=nobody`);
        const stored = (await storedResponses(page)).filter((r) => r.participant === pid);
        assert.deepEqual(stored.map((r) => r.position).sort(), [2, 3, 4, 5]);
        assert.deepEqual(stored.map((r) => r.normalized), ["two", "three", "4", "five"]);
      });
    }
    // The completion screen itself (without a redirect, so it stays to be photographed).
    await writeFile(file, JSON.stringify({ ...study, redirect_url: null }));
    for (const [name, viewport] of [["desktop", { width: 1100, height: 900 }], ["phone", { width: 390, height: 844 }]]) {
      await withPage(`complete-${name}`, { viewport }, async (page) => {
        await page.goto(`${served.base}/?study=study-e2e.json&PROLIFIC_PID=C-${name}`);
        await page.getByTestId("consent-accept").click();
        for (const w of ["two", "three", "four", "five"]) await guess(page, w);
        await page.getByTestId("complete").waitFor({ timeout: TIMEOUT });
        assert.equal(await page.getByTestId("completion-code").innerText(), "C0DE42");
        await screenshot(page, `completion-${name}.png`);
      });
    }
    // A server that refuses the results for good (4xx) is told once, not retried: the
    // participant is asked to download them.
    served.submit.refuseNext = 1;
    await withPage("complete-refused", {}, async (page) => {
      // Which sends went with keepalive (a closed tab does not cut them).
      await page.addInitScript(() => {
        const fetch = window.fetch;
        window.__keepalive = [];
        window.fetch = function (input, ...rest) {
          if (input instanceof Request && input.method === "POST") window.__keepalive.push(input.keepalive);
          return fetch.call(this, input, ...rest);
        };
      });
      await page.goto(`${served.base}/?study=study-e2e.json&PROLIFIC_PID=R-1`);
      await page.getByTestId("consent-accept").click();
      for (const w of ["two", "three", "four", "five"]) await guess(page, w);
      await page.waitForFunction(() => /refused your responses/.test(document.querySelector("[data-testid=redirect-status]")?.innerText ?? ""), null, { timeout: TIMEOUT });
      await new Promise((r) => setTimeout(r, 3000));
      assert.equal(finalAttempts(served, "R-1"), 1, "a refusal is not retried");
      assert.ok(!served.submissions.some((b) => b.manifest.participant === "R-1"));
      assert.deepEqual(await page.evaluate(() => window.__keepalive), [true], "the last send goes with keepalive");
      await screenshot(page, "completion-refused.png");
    });
  } finally {
    await rm(file, { force: true });
    await rm(done, { force: true });
  }
});

test("study: a failing server gets the results by retries, an unreachable one later — each once", { timeout: 3 * TIMEOUT }, async () => {
  const study = {
    title: "E2E retry study",
    texts: [{ id: "short", title: "Short", text: "One two three four five" }],
    passages: ["short"],
    redirect_url: `${served.base}/done-retry.html`,
    submit_url: "/submit",
  };
  const file = join(DIST, "study-retry.json");
  const done = join(DIST, "done-retry.html");
  await writeFile(file, JSON.stringify(study));
  await writeFile(done, "<!DOCTYPE html><title>done</title><p>Study platform page</p>");
  const play = async (page, pid) => {
    await page.goto(`${served.base}/?study=study-retry.json&PROLIFIC_PID=${pid}`);
    for (const w of ["two", "three", "four", "five"]) await guess(page, w);
  };
  const sentBy = (pid) => served.submissions.filter((b) => b.manifest.participant === pid);
  try {
    await withPage("study-retry", {}, async (page) => {
      // Two failures, then the server answers: the participant only sees it take a moment.
      served.submit.failNext = 2;
      await play(page, "P-flaky");
      await page.waitForURL(/done-retry\.html/, { timeout: TIMEOUT });
      assert.equal(finalAttempts(served, "P-flaky"), 3);
      assert.equal(sentBy("P-flaky").length, 1);
      const run = sentBy("P-flaky")[0].manifest.run;
      assert.match(run, /^local-[0-9a-f]{16}$/, "the page made the run's id");
      assert.deepEqual(sentBy("P-flaky")[0].responses.map((r) => r.idempotency_key), [2, 3, 4, 5].map((p) => `P-flaky/${run}/short/${p}`));

      // The server is down: no redirect; the completion screen says so and offers a retry.
      served.submit.failNext = 1_000_000;
      await play(page, "P-down");
      await page.getByTestId("unconfirmed").waitFor({ timeout: TIMEOUT });
      assert.match(await page.getByTestId("redirect-status").innerText(), /has not confirmed/);
      await screenshot(page, "study-unconfirmed.png");
      assert.ok(finalAttempts(served, "P-down") >= 3, `${finalAttempts(served, "P-down")} tries`);
      served.submit.failNext = 0;
      await page.getByTestId("submit-retry").click();
      await page.waitForURL(/done-retry\.html/, { timeout: TIMEOUT });
      assert.equal(sentBy("P-down").length, 1);

      // Down again, and the participant leaves: the next visit to the site sends it.
      served.submit.failNext = 1_000_000;
      await play(page, "P-later");
      await page.getByTestId("unconfirmed").waitFor({ timeout: TIMEOUT });
      served.submit.failNext = 0;
      await page.goto(`${served.base}/?PROLIFIC_PID=someone-else`);
      const deadline = Date.now() + TIMEOUT;
      while (sentBy("P-later").length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      assert.equal(sentBy("P-later").length, 1, "sent on the next visit");
      // And only once, however often the outbox is drained again, once this page has heard the
      // acknowledgement (a reload before it arrives sends again, which the key makes harmless:
      // seen once in a clean clone's run).
      await page.waitForFunction(() => new Promise((resolve) => {
        const open = indexedDB.open("clozelab");
        open.onsuccess = () => {
          const req = open.result.transaction("outbox").objectStore("outbox").count();
          req.onsuccess = () => { resolve(req.result === 0); open.result.close(); };
          req.onerror = () => resolve(false);
        };
        open.onerror = () => resolve(false);
      }), null, { timeout: TIMEOUT });
      await page.reload();
      await page.waitForTimeout(1500);
      assert.equal(sentBy("P-later").length, 1);
      assert.equal(served.submit.duplicates, 0, "nothing re-sent after an acknowledgement");

      // A browser that cannot keep the submission (the outbox refuses writes) says so plainly,
      // and "Try sending again" still has it to send.
      await page.context().addInitScript(() => {
        const put = IDBObjectStore.prototype.put;
        IDBObjectStore.prototype.put = function (...args) {
          if (this.name === "outbox") throw new DOMException("injected", "QuotaExceededError");
          return put.apply(this, args);
        };
      });
      served.submit.failNext = 1_000_000;
      await play(page, "P-nokeep");
      await page.getByTestId("unconfirmed").waitFor({ timeout: TIMEOUT });
      assert.match(await page.getByTestId("redirect-status").innerText(), /cannot keep them for later.*download them/);
      served.submit.failNext = 0;
      await page.getByTestId("submit-retry").click();
      await page.waitForURL(/done-retry\.html/, { timeout: TIMEOUT });
      assert.equal(sentBy("P-nokeep").length, 1);
    });
  } finally {
    served.submit.failNext = 0;
    await rm(file, { force: true });
    await rm(done, { force: true });
  }
});

test("phone width: the game and its feedback fit", { timeout: 2 * TIMEOUT }, () =>
  withPage("phone", { viewport: { width: 390, height: 844 } }, async (page) => {
    await page.goto(`${served.base}/?model=models/test/&PROLIFIC_PID=e2e-phone`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await openPassage(page, "kitchen");
    await guess(page, "Sunday");
    await page.getByTestId("model-bars").waitFor({ timeout: TIMEOUT });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `page scrolls sideways by ${overflow}px`);
    await screenshot(page, "game-feedback-phone.png");
  }));

test("GPT-2's feedback on WebGPU (its own draw kernel) has the words of the CPU backend for the same seed", { timeout: 2 * TIMEOUT }, async () => {
  const shown = {};
  for (const webgpu of [true, false]) {
    await withPage(`draw-${webgpu ? "webgpu" : "cpu"}`, { webgpu }, async (page) => {
      await page.goto(`${served.base}/?model=models/test/&PROLIFIC_PID=e2e-draw`);
      await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
      const backend = await page.getByTestId("backend-status").locator("[data-backend]").getAttribute("data-backend");
      assert.equal(backend, webgpu ? "wgpu" : "cpu");
      await openPassage(page, "kitchen");
      await guess(page, "Sunday");
      const bars = page.getByTestId("model-bars");
      await bars.waitFor({ timeout: TIMEOUT });
      shown[backend] = Object.fromEntries(await bars.locator("li").evaluateAll((items) => items.map((li) => [li.dataset.word, Number(li.dataset.prob)])));
    });
  }
  // The same seed gives the same uniforms; logits that differ in their last digits move a draw
  // across an edge now and then (2-3 of the 100 samples here, so 12-13 of the 15 words shown in
  // common), while draws that go wrong change every word (none in common with the thresholds
  // halved in the kernel).
  const common = Object.keys(shown.wgpu).filter((w) => w in shown.cpu);
  assert.equal(Object.keys(shown.cpu).length, 15, JSON.stringify(shown.cpu));
  console.log(`draw: ${common.length} of 15 shown words in common`);
  assert.ok(common.length >= 10, `${common.length} of the shown words in common: ${JSON.stringify(shown)}`);
});

test("storage: a tab holding an older database never hangs the study, and the study never blocks a newer one", { timeout: 2 * TIMEOUT }, async () => {
  const study = { title: "IDB study", texts: [{ id: "short", title: "Short", text: "One two three four five" }], passages: ["short"], consent: "I agree." };
  const file = join(DIST, "study-idb.json");
  const holder = join(DIST, "idb-holder.html");
  await writeFile(file, JSON.stringify(study));
  await writeFile(holder, "<!DOCTYPE html><title>holder</title><p>Another tab of the same site</p>");
  const open = (version) => new Promise((resolve, reject) => {
    const request = indexedDB.open("clozelab", version);
    request.onsuccess = () => { window.__db = request.result; resolve("opened"); };
    request.onerror = () => reject(request.error?.message);
    request.onblocked = () => resolve("blocked");
  });
  try {
    await withPage("idb-versions", {}, async (page) => {
      // An old tab holds version 1 open and ignores every request to let go.
      const old = await page.context().newPage();
      await old.goto(`${served.base}/idb-holder.html`);
      assert.equal(await old.evaluate(open, 1), "opened");
      await page.goto(`${served.base}/?study=study-idb.json&PROLIFIC_PID=idb-1`);
      const problem = page.getByTestId("storage-problem");
      await problem.waitFor({ timeout: 20_000 });
      assert.match(await problem.innerText(), /another tab of this site/);
      await page.getByTestId("consent-accept").click();
      await guess(page, "two");
      // Once the old tab is gone the study stores again.
      await old.evaluate(() => window.__db.close());
      await page.reload();
      await page.getByTestId("consent").waitFor({ timeout: TIMEOUT });
      assert.equal(await page.getByTestId("storage-problem").count(), 0);
      // A newer version in the other tab is not blocked by the study's open database.
      assert.equal(await old.evaluate(open, 99), "opened");
      await old.close();
    });
  } finally {
    await rm(file, { force: true });
    await rm(holder, { force: true });
  }
});
