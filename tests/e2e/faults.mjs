// Fault injection: participant sessions of a next-word study in headless
// Chromium, each interrupted once at a seeded random moment — a reload mid-typing, right after
// an answer was accepted, between the save and the next screen; the tab closed while the
// results are on their way; the network cut at submission; IndexedDB refusing a write or over
// quota — then resumed to the end. Counts per session what the participant typed and saw
// accepted, what the browser stored and what the server received; 0 lost and 0 duplicated is
// the target. Used by faults.test.mjs (a short run) and scripts/fault_injection.mjs (100).
import { writeFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { DIST, answerTwoToken, finalAttempts, isFinalKey, rng } from "./harness.mjs";

export const KILL_POINTS = ["reload mid-typing", "reload after accept", "reload between save and render", "tab closed during submission", "network cut at submission", "IndexedDB write fails", "IndexedDB over quota", "participant leaves mid-study", "WebGPU device lost mid-computation"];
/** The kill point whose sessions are two-token studies: the next-word study never uses the GPU. */
export const GPU_LOST = "WebGPU device lost mid-computation";
/** The one kill point after which the session is never completed. */
export const LEAVES = "participant leaves mid-study";
const WORDS = ["two", "three", "four", "five", "six"];
const STUDY = { title: "Fault study", texts: [{ id: "f", title: "F", text: "One two three four five six" }], passages: ["f"], submit_url: "/submit", send_each_response: true };
const ROUNDS = 4;
const TOKEN_STUDY = { title: "Fault token study", game: "two_token", texts: [{ id: "t", title: "T", text: "The cat sat on the mat, and then it slept in the sun all afternoon." }], passages: ["t"], positions_per_passage: 2, rounds_per_position: 2, seed: 5, model: "models/test/", submit_url: "/submit", send_each_response: true };

async function stored(page, base, pid) {
  await page.goto(`${base}/index.html?PROLIFIC_PID=reader`);
  return storedHere(page, pid);
}

/** The participant's records in IndexedDB store `store`, read from the page as it is. */
export function storedRecords(page, store, pid) {
  return page.evaluate(([store, pid]) => new Promise((resolve, reject) => {
    const open = indexedDB.open("clozelab");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const req = open.result.transaction(store).objectStore(store).getAll();
      req.onsuccess = () => { resolve(req.result.map((s) => JSON.parse(s)).filter((r) => r.participant === pid)); open.result.close(); };
      req.onerror = () => reject(req.error);
    };
  }), [store, pid]);
}

/** The participant's answers in IndexedDB. */
const storedHere = (page, pid) => storedRecords(page, "responses", pid);

const position = (page) => page.evaluate(() => Number(document.querySelector("[data-testid=passage-context]")?.dataset.position ?? 0));

/** Runs `sessions` sessions against `served` (serveDist()); returns one row per session. */
export async function runFaultSessions(served, sessions, seed = 1) {
  const random = rng(seed);
  const file = join(DIST, "study-faults.json");
  const tokenFile = join(DIST, "study-faults-tokens.json");
  await writeFile(file, JSON.stringify(STUDY));
  await writeFile(tokenFile, JSON.stringify(TOKEN_STUDY));
  // WebGPU on (SwiftShader): the device-lost sessions need a GPU to lose.
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--enable-unsafe-webgpu"] });
  const rows = [];
  try {
    for (let s = 0; s < sessions; s++) {
      const kind = KILL_POINTS[s % KILL_POINTS.length];
      if (kind === GPU_LOST) {
        rows.push(await deviceLostSession(browser, served, `F${seed}-${s}`, Math.floor(random() * (ROUNDS - 1)) + 1));
        continue;
      }
      // Who leaves does so before the last answer (after it, they have finished).
      const at = Math.floor(random() * (kind === LEAVES ? WORDS.length - 1 : WORDS.length));
      const pid = `F${seed}-${s}`;
      const context = await browser.newContext({ serviceWorkers: "block" });
      // IndexedDB refusing writes on demand: `__failPuts` puts throw as a full disk would.
      await context.addInitScript(() => {
        const put = IDBObjectStore.prototype.put;
        IDBObjectStore.prototype.put = function (...args) {
          if (window.__failPuts > 0) {
            window.__failPuts--;
            throw new DOMException("injected fault", window.__failName ?? "UnknownError");
          }
          return put.apply(this, args);
        };
      });
      let page = await context.newPage();
      const url = `${served.base}/?study=study-faults.json&PROLIFIC_PID=${pid}`;
      const row = { session: pid, kill: kind, at: at + 2, typed: 0, accepted: new Set(), stored: 0, server: 0, sends: 0, duplicated: 0, lost: 0, complete: false };
      let killed = false;
      let left = null;
      await page.goto(url);
      for (;;) {
        await page.waitForSelector("[data-testid=guess], [data-testid=complete]", { timeout: 60_000 });
        if (await page.getByTestId("complete").count()) break;
        if (killed && kind === LEAVES) {
          // They read the next context for a second, then close the tab for good.
          await page.waitForTimeout(1000);
          left = await storedHere(page, pid);
          break;
        }
        const pos = await position(page);
        const i = pos - 2;
        const input = page.getByTestId("guess");
        const due = !killed && i === at;
        if (due && kind === "reload mid-typing") {
          killed = true;
          row.typed++;
          await input.pressSequentially(WORDS[i].slice(0, 2));
          await page.reload();
          continue;
        }
        if (due && (kind === "IndexedDB write fails" || kind === "IndexedDB over quota")) {
          killed = true;
          await page.evaluate((name) => { window.__failPuts = 1; window.__failName = name; }, kind.endsWith("quota") ? "QuotaExceededError" : "UnknownError");
          row.typed++;
          await input.fill(WORDS[i]);
          await input.press("Enter");
          await page.getByTestId("storage-problem").waitFor({ timeout: 30_000 });
          if ((await position(page)) !== pos) row.accepted.add(pos); // must not happen
          continue; // the same context again: type it again
        }
        if (i === WORDS.length - 1 && !killed && kind === "network cut at submission") {
          killed = true;
          await context.setOffline(true);
        }
        if (i === WORDS.length - 1 && !killed && kind === "tab closed during submission") {
          killed = true;
          served.submit.holdMs.set(pid, 2000);
        }
        row.typed++;
        await input.fill(WORDS[i]);
        await input.press("Enter");
        if (due && kind === "reload between save and render") {
          killed = true;
          await page.reload();
          continue;
        }
        // Accepted: the next context (or the end) is on screen.
        await page.waitForFunction((p) => {
          const c = document.querySelector("[data-testid=passage-context]");
          return document.querySelector("[data-testid=complete]") || (c && Number(c.dataset.position) > p);
        }, pos, { timeout: 30_000 });
        row.accepted.add(pos);
        if (due && kind === "reload after accept") {
          killed = true;
          await page.reload();
        }
        if (due && kind === LEAVES) killed = true;
      }
      // The end: the server confirms, or the participant leaves and comes back later.
      if (kind === "network cut at submission") {
        await page.getByTestId("unconfirmed").waitFor({ timeout: 60_000 });
        await context.setOffline(false);
        await page.close();
        page = await context.newPage();
        await page.goto(`${served.base}/?PROLIFIC_PID=back-later`);
      } else if (kind === "tab closed during submission") {
        const deadline = Date.now() + 30_000;
        while (!finalAttempts(served, pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        await page.close();
        page = await context.newPage();
        await page.goto(`${served.base}/?PROLIFIC_PID=back-later`);
      }
      const deadline = Date.now() + 60_000;
      const mine = () => served.submissions.filter((b) => b.manifest?.participant === pid);
      const finals = () => mine().filter((b) => isFinalKey(b.key, pid));
      if (kind === LEAVES) {
        // Nobody comes back: only what was sent as it was answered can be there.
        await page.close();
        await new Promise((r) => setTimeout(r, 300));
      } else {
        while (finals().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        await new Promise((r) => setTimeout(r, 300));
      }
      const saved = left ?? await stored(page, served.base, pid);
      const bundles = finals();
      // On the server a response is known by its idempotency key, whichever POST brought it.
      const onServer = new Set(mine().flatMap((b) => b.responses.map((r) => r.position)));
      const inFinal = bundles.flatMap((b) => b.responses.map((r) => r.position));
      const inBrowser = saved.map((r) => r.position);
      row.stored = new Set(inBrowser).size;
      row.server = onServer.size;
      row.duplicated = (inBrowser.length - new Set(inBrowser).size) + (inFinal.length - new Set(inFinal).size) + Math.max(0, bundles.length - 1);
      row.lost = [...row.accepted].filter((p) => !inBrowser.includes(p) || !onServer.has(p)).length;
      row.complete = bundles.length === 1;
      row.sends = [...served.submit.attempts].filter(([k]) => k.startsWith(`${pid}/`)).reduce((n, [, c]) => n + c, 0);
      row.accepted = row.accepted.size;
      rows.push(row);
      served.submit.holdMs.delete(pid);
      await context.close();
    }
  } finally {
    await browser.close();
    await rm(file, { force: true });
    await rm(tokenFile, { force: true });
  }
  return rows;
}

/** The participant's two-token rounds in IndexedDB (`position/round`). */
const storedRounds = async (page, pid) => (await storedRecords(page, "token_records", pid)).map((r) => `${r.position}/${r.round}`);

/**
 * A two-token study session (GPT-2 computes every round on WebGPU) whose GPU device is destroyed
 * right after round `at` is answered, while the next round is being computed: the app must move
 * to the CPU and the session go on to the end, every round stored and sent once.
 */
async function deviceLostSession(browser, served, pid, at) {
  const context = await browser.newContext({ serviceWorkers: "block" });
  const page = await context.newPage();
  const row = { session: pid, kill: GPU_LOST, at, typed: 0, accepted: 0, stored: 0, server: 0, sends: 0, duplicated: 0, lost: 0, complete: false };
  await page.goto(`${served.base}/?study=study-faults-tokens.json&PROLIFIC_PID=${pid}`);
  for (let i = 1; i <= ROUNDS; i++) {
    row.typed++;
    await answerTwoToken(page, 120_000, i);
    row.accepted++;
    if (i === at) {
      const [worker] = page.workers();
      await worker.evaluate(() => globalThis.__clozelabGpu?.device.destroy());
    }
  }
  const deadline = Date.now() + 60_000;
  const mine = () => served.submissions.filter((b) => b.manifest?.participant === pid);
  const finals = () => mine().filter((b) => isFinalKey(b.key, pid));
  while (finals().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 300));
  const inBrowser = await storedRounds(page, pid);
  const onServer = new Set(mine().flatMap((b) => b.records.map((r) => `${r.position}/${r.round}`)));
  const inFinal = finals().flatMap((b) => b.records.map((r) => `${r.position}/${r.round}`));
  row.stored = new Set(inBrowser).size;
  row.server = onServer.size;
  row.duplicated = (inBrowser.length - row.stored) + (inFinal.length - new Set(inFinal).size) + Math.max(0, finals().length - 1);
  row.lost = Math.max(0, row.accepted - Math.min(row.stored, row.server));
  row.complete = finals().length === 1 && inFinal.length === ROUNDS;
  row.sends = [...served.submit.attempts].filter(([k]) => k.startsWith(`${pid}/`)).reduce((n, [, c]) => n + c, 0);
  // The page must say it moved to the CPU (the worker heard the device go).
  row.fellBack = await page.evaluate(() => !document.querySelector("[data-backend=wgpu]"));
  await context.close();
  return row;
}

/** The table the issue asks for: per kill point and in all. */
export function faultTable(rows) {
  const sum = (rs, k) => rs.reduce((n, r) => n + Number(r[k]), 0);
  const line = (name, rs) => `| ${name} | ${rs.length} | ${sum(rs, "typed")} | ${sum(rs, "accepted")} | ${sum(rs, "stored")} | ${sum(rs, "server")} | ${sum(rs, "sends")} | ${sum(rs, "duplicated")} | ${sum(rs, "lost")} | ${sum(rs, "complete")} |`;
  return [
    "| kill point | sessions | responses typed | accepted (seen) | stored (browser) | on the server | POSTs (with retries) | duplicated | lost | complete on the server |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...KILL_POINTS.filter((k) => rows.some((r) => r.kill === k)).map((k) => line(k, rows.filter((r) => r.kill === k))),
    line("**all**", rows),
  ].join("\n");
}
