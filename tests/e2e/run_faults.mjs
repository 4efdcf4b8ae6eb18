// Fault injection for runs: sessions in which a browser is shared, storage is missing or full,
// or the server behaves as JATOS does — a second study with the same Prolific id, JATOS's test
// run repeated, two participants taking turns on one computer, two tabs of one run,
// memory-only and full storage, a tab closed after many answers, a run ended by the server
// mid-study, a withdrawal whose abort fails once. Each session counts what was typed and
// accepted, what each run's data on the server holds, and what is lost, duplicated, or in
// another run's data (the target: 0, 0, 0). Used by faults.test.mjs (each kind once, short) and
// scripts/fault_injection.mjs.
import { writeFile, rm, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { DIST, ROOT, isFinalKey, rng, cliBinary } from "./harness.mjs";
import { storedRecords } from "./faults.mjs";

export const SECOND_STUDY = "second study, same Prolific id";
export const JATOS_TEST_RUNS = "JATOS test run repeated";
export const TAKING_TURNS = "two participants taking turns";
export const TWO_TABS = "two tabs";
export const MEMORY_ONLY = "memory-only storage";
export const FULL_STORAGE = "full storage (quota)";
export const LONG_TAB_CLOSED = "tab closed after many answers";
export const SERVER_ENDED = "run ended by the server mid-study";
export const ABORT_FAILS = "withdrawal whose abort fails once";
export const RUN_KINDS = [SECOND_STUDY, JATOS_TEST_RUNS, TAKING_TURNS, TWO_TABS, MEMORY_ONLY, FULL_STORAGE, LONG_TAB_CLOSED, SERVER_ENDED, ABORT_FAILS];

const TIMEOUT = 60_000;
const TEXT = "One two three four five six";
const ANSWERS = 5;

/** Words no other run types: `tag` and the position. */
const wordsOf = (tag, from, to) => Array.from({ length: to - from + 1 }, (_, i) => `${tag}${from + i}`);

const position = (page) => page.evaluate(() => Number(document.querySelector("[data-testid=passage-context]")?.dataset.position ?? 0));

/** Answers the context on screen with `word`; resolves once the next one (or the end) shows,
 * or the page says the answer was not saved. */
async function answer(page, word) {
  const pos = await position(page);
  const problem = () => document.querySelector("[data-testid=storage-problem]")?.innerText ?? "";
  const before = await page.evaluate(problem);
  const input = page.getByTestId("guess");
  await input.fill(word);
  await input.press("Enter");
  await page.waitForFunction(([p, said]) => {
    const c = document.querySelector("[data-testid=passage-context]");
    const now = document.querySelector("[data-testid=storage-problem]")?.innerText ?? "";
    // Left the game: the study's end redirected (JATOS's end, Prolific).
    const gone = !document.querySelector("section.game");
    return gone || document.querySelector("[data-testid=complete], [data-testid=game-error]") || (c && Number(c.dataset.position) > p) || now !== said;
  }, [pos, before], { timeout: TIMEOUT });
  // The storage message can show before the page moves on with the same answer: whether the
  // answer was taken is what the page does next (moves on, or stays and says why), not which
  // of the two came first.
  await page.waitForFunction((p) => {
    const c = document.querySelector("[data-testid=passage-context]");
    return !document.querySelector("section.game") || document.querySelector("[data-testid=complete], [data-testid=game-error]") || !c || Number(c.dataset.position) > p;
  }, pos, { timeout: SETTLE_MS }).catch(() => {});
  return pos;
}

/** How long an answer may take to move the page on after the storage message showed. */
const SETTLE_MS = 5_000;

/** Plays from the current context on, word `tag<position>` each, at most `limit` answers;
 * returns the positions accepted. */
async function play(page, tag, limit = Infinity, row = null) {
  const accepted = [];
  await page.waitForSelector("[data-testid=guess], [data-testid=consent-accept], [data-testid=complete], [data-testid=game-error]", { timeout: TIMEOUT });
  if (await page.getByTestId("consent-accept").count()) await page.getByTestId("consent-accept").click();
  while (accepted.length < limit) {
    try {
      await page.waitForSelector("[data-testid=guess], [data-testid=complete], [data-testid=game-error]", { timeout: TIMEOUT });
    } catch (e) {
      const shown = await page.locator("body").innerText().catch(() => "");
      throw new Error(`${e.message}\nat ${page.url()} after ${accepted.length} answers, the page shows: ${shown.slice(0, 400)}`);
    }
    if (!(await page.getByTestId("guess").count())) break;
    const pos = await position(page);
    if (row) row.typed++;
    await answer(page, `${tag}${pos}`);
    // No context on screen any more: the end screen, the redirect after it, or the game
    // stopped; the answer was saved (and sent) before any of them.
    const now = await position(page).catch(() => 0);
    if (now === 0 || (await finished(page))) {
      accepted.push(pos);
      break;
    }
    if (now !== pos) accepted.push(pos);
  }
  return accepted;
}

/** Whether the game is over on this page: the end screen, or the page already redirected
 * (JATOS's end, Prolific), or on its way there. */
async function finished(page) {
  try {
    return !(await page.locator("section.game").count()) || (await page.getByTestId("complete").count()) > 0;
  } catch {
    return true;
  }
}

/** What a plain study server holds, by (participant, study id): its run ids, the answers of
 * each position, and its final bundles. */
function onPlainServer(served, participant, studyId) {
  const mine = served.submissions.filter((b) => b.manifest?.participant === participant && b.manifest?.study_id === studyId);
  const answers = new Map();
  for (const b of mine) for (const r of b.responses ?? []) {
    if (!answers.has(r.position)) answers.set(r.position, new Set());
    answers.get(r.position).add(r.response);
  }
  const finals = mine.filter((b) => isFinalKey(b.key, participant));
  return { runs: new Set(mine.map((b) => b.manifest.run)), answers, finals };
}

/** What a JATOS run holds: the answers of each position over its component results. */
function onJatos(run) {
  const answers = new Map();
  const lines = run.componentResults.map((c) => c.data ?? "").join("").split("\n").filter((l) => l.trim());
  const runs = new Set();
  for (const line of lines) {
    const b = JSON.parse(line);
    runs.add(b.manifest.run);
    for (const r of b.responses ?? []) {
      if (!answers.has(r.position)) answers.set(r.position, new Set());
      answers.get(r.position).add(r.response);
    }
  }
  return { runs, answers };
}

/** Counts `held` against what was accepted in that run (`tag<position>` at each position). */
function tally(row, held, tag, accepted) {
  row.accepted += accepted.length;
  for (const [pos, words] of held.answers) {
    for (const w of words) {
      if (w === `${tag}${pos}` && accepted.includes(pos)) row.server++;
      else row.foreign++;
    }
  }
  row.lost += accepted.filter((p) => !held.answers.get(p)?.has(`${tag}${p}`)).length;
  // One run id per run: more means a run was split (its answers under two keys).
  row.duplicated += Math.max(0, held.runs.size - 1);
  if (held.finals) {
    row.duplicated += Math.max(0, held.finals.length - 1);
    for (const f of held.finals) row.duplicated += f.responses.length - new Set(f.responses.map((r) => r.position)).size;
  }
}

const newRow = (session, kind) => ({ session, kind, typed: 0, accepted: 0, server: 0, lost: 0, duplicated: 0, foreign: 0, complete: 0, expectedComplete: 0, told: 0 });

/** The studies the sessions run; `answersBeforeClose` sizes the long passage. */
async function writeStudies(answersBeforeClose) {
  const passage = (text) => [{ id: "p", title: "P", text }];
  const long = Array.from({ length: answersBeforeClose + 6 }, (_, i) => `w${i}`).join(" ");
  const studies = {
    "fi-a": { title: "Fault runs A", study_id: "fi-a", texts: passage(TEXT), passages: ["p"], consent: "A.", submit_url: "/submit", send_each_response: true },
    "fi-b": { title: "Fault runs B", study_id: "fi-b", texts: passage(TEXT), passages: ["p"], consent: "B.", submit_url: "/submit", send_each_response: true },
    "fi-long": { title: "Fault runs long", study_id: "fi-long", texts: passage(long), passages: ["p"], submit_url: "/submit", send_each_response: true },
  };
  const files = [];
  for (const [id, study] of Object.entries(studies)) {
    const file = join(DIST, `study-${id}.json`);
    await writeFile(file, JSON.stringify(study));
    files.push(file);
  }
  return files;
}

async function jatosPackage(jatos) {
  const dir = await mkdtemp(join(tmpdir(), "clozelab-run-faults-"));
  const studyFile = join(dir, "study.json");
  await writeFile(studyFile, JSON.stringify({ title: "Fault runs in JATOS", study_id: "fi-jatos", texts: [{ id: "p", title: "P", text: TEXT }], passages: ["p"], redirect_url: `${jatos.base}/prolific/done` }));
  const out = join(dir, "study.jzip");
  execFileSync(cliBinary(), ["jatos-package", "--study", studyFile, "--dist", DIST, "--out", out, "--allow-development-build"], { stdio: ["ignore", "ignore", "pipe"] });
  await jatos.importStudy(out);
  await rm(dir, { recursive: true, force: true });
}

/** IndexedDB refusing every write (a full disk) or every open (a private mode). */
const BREAK_STORAGE = {
  full: () => {
    IDBObjectStore.prototype.put = function () { throw new DOMException("injected: the disk is full", "QuotaExceededError"); };
  },
  missing: () => {
    IDBFactory.prototype.open = function () { throw new DOMException("injected: storage is blocked", "SecurityError"); };
  },
};

/** Runs `sessions` sessions of the run kinds (`kinds`, all by default, in turn) in `browser`;
 * one row each. */
export async function runRunSessions({ browser, served, jatos }, sessions, seed = 1, { answersBeforeClose = 200, kinds = RUN_KINDS } = {}) {
  const random = rng(seed);
  const files = await writeStudies(answersBeforeClose);
  await jatosPackage(jatos);
  const link = (study, query) => `${served.base}/?study=study-${study}.json${query ? `&${query}` : ""}`;
  const rows = [];
  try {
    for (let s = 0; s < sessions; s++) {
      const kind = kinds[s % kinds.length];
      const sid = `R${seed}-${s}`;
      const row = newRow(sid, kind);
      const context = await browser.newContext({ serviceWorkers: "block" });
      try {
        if (kind === SECOND_STUDY) {
          const page = await context.newPage();
          await page.goto(link("fi-a", `PROLIFIC_PID=${sid}`));
          const a = await play(page, "a", Infinity, row);
          await page.getByTestId("complete").waitFor({ timeout: TIMEOUT });
          await page.goto(link("fi-b", `PROLIFIC_PID=${sid}`));
          const b = await play(page, "b", Infinity, row);
          await page.getByTestId("complete").waitFor({ timeout: TIMEOUT });
          await completedRun(row, served, sid, "fi-a", "a", a);
          await completedRun(row, served, sid, "fi-b", "b", b);
        } else if (kind === TAKING_TURNS) {
          const page = await context.newPage();
          // The first person answers some words and walks away; the lab's link starts the next.
          const leaveAfter = 1 + Math.floor(random() * (ANSWERS - 1));
          await page.goto(link("fi-a"));
          const first = await play(page, "x", leaveAfter, row);
          const firstId = await browserParticipant(page);
          await page.goto(link("fi-a", "new_participant"));
          const second = await play(page, "y", Infinity, row);
          await page.getByTestId("complete").waitFor({ timeout: TIMEOUT });
          const secondId = await browserParticipant(page);
          if (secondId === firstId) row.foreign += second.length;
          await settle(() => onPlainServer(served, firstId, "fi-a").answers.size >= first.length);
          tally(row, onPlainServer(served, firstId, "fi-a"), "x", first);
          await completedRun(row, served, secondId, "fi-a", "y", second);
        } else if (kind === TWO_TABS) {
          const first = await context.newPage();
          await first.goto(link("fi-a", `PROLIFIC_PID=${sid}`));
          const before = await play(first, "t", 2, row);
          // The same run in a second tab: it says so and writes nothing while the first is open.
          const second = await context.newPage();
          await second.goto(link("fi-a", `PROLIFIC_PID=${sid}`));
          await second.getByTestId("game-error").waitFor({ timeout: TIMEOUT });
          row.told += /open in another tab/.test(await second.getByTestId("game-error").innerText()) ? 1 : 0;
          const after = await play(first, "t", Infinity, row);
          await first.getByTestId("complete").waitFor({ timeout: TIMEOUT });
          await first.close();
          // Once the first is closed, the second shows the run as it stands: finished.
          await second.getByTestId("complete").waitFor({ timeout: TIMEOUT });
          await completedRun(row, served, sid, "fi-a", "t", [...before, ...after]);
        } else if (kind === MEMORY_ONLY || kind === FULL_STORAGE) {
          await context.addInitScript(kind === MEMORY_ONLY ? BREAK_STORAGE.missing : BREAK_STORAGE.full);
          const page = await context.newPage();
          await page.goto(link("fi-a", `PROLIFIC_PID=${sid}`));
          const accepted = await play(page, "m", Infinity, row);
          await page.getByTestId("complete").waitFor({ timeout: TIMEOUT });
          row.told += (await page.getByTestId("storage-problem").count()) ? 1 : 0;
          await completedRun(row, served, sid, "fi-a", "m", accepted);
        } else if (kind === LONG_TAB_CLOSED) {
          let page = await context.newPage();
          await page.goto(link("fi-long", `PROLIFIC_PID=${sid}`));
          const before = await play(page, "l", answersBeforeClose, row);
          await page.close();
          page = await context.newPage();
          await page.goto(link("fi-long", `PROLIFIC_PID=${sid}`));
          const after = await play(page, "l", Infinity, row);
          await page.getByTestId("complete").waitFor({ timeout: TIMEOUT });
          await completedRun(row, served, sid, "fi-long", "l", [...before, ...after]);
        } else {
          // The JATOS kinds.
          const page = await context.newPage();
          const started = new Set(jatos.runs.keys());
          const newRun = () => [...jatos.runs.values()].find((r) => !started.has(r.uuid));
          if (kind === JATOS_TEST_RUNS) {
            for (const tag of ["j", "k"]) {
              await page.goto(jatos.links.testRun);
              const run = newRun();
              started.add(run.uuid);
              const accepted = await play(page, tag, Infinity, row);
              await page.waitForURL(/prolific\/done/, { timeout: TIMEOUT });
              tally(row, onJatos(run), tag, accepted);
              row.expectedComplete++;
              row.complete += run.state === "FINISHED" ? 1 : 0;
            }
          } else if (kind === SERVER_ENDED) {
            await page.goto(`${jatos.links.generalMultiple}?PROLIFIC_PID=${sid}`);
            const run = newRun();
            const endAfter = 1 + Math.floor(random() * (ANSWERS - 2));
            const before = await play(page, "e", endAfter, row);
            await settle(() => onJatos(run).answers.size >= before.length);
            jatos.endRun(run);
            // The next answer is refused by JATOS: the game stops and says so.
            await play(page, "e", 1, row);
            await page.getByTestId("game-error").waitFor({ timeout: TIMEOUT });
            row.told += /did not accept/.test(await page.getByTestId("game-error").innerText()) ? 1 : 0;
            tally(row, onJatos(run), "e", before);
          } else if (kind === ABORT_FAILS) {
            await page.goto(`${jatos.links.generalMultiple}?PROLIFIC_PID=${sid}`);
            const run = newRun();
            const accepted = await play(page, "w", 2, row);
            await settle(() => onJatos(run).answers.size >= accepted.length);
            jatos.faults.failAborts = 1;
            await page.getByTestId("withdraw").click();
            await page.getByTestId("withdraw-confirm").click();
            await page.getByTestId("left-study").waitFor({ timeout: TIMEOUT });
            // Withdrawn: JATOS holds nothing of the run, the browser nothing either.
            row.accepted += accepted.length;
            row.expectedComplete++;
            const kept = onJatos(run).answers.size + (await storedRecords(page, "responses", sid)).length;
            row.complete += run.state === "ABORTED" && kept === 0 ? 1 : 0;
            row.foreign += onJatos(run).answers.size;
          }
        }
      } finally {
        await context.close();
      }
      rows.push(row);
    }
  } finally {
    for (const f of files) await rm(f, { force: true });
  }
  return rows;
}

/** Counts a run that must have completed: its final bundle on the server, once. */
async function completedRun(row, served, participant, study, tag, accepted) {
  await settle(() => served.submissions.some((x) => isFinalKey(x.key, participant) && x.manifest?.study_id === study));
  const held = onPlainServer(served, participant, study);
  tally(row, held, tag, accepted);
  row.expectedComplete++;
  row.complete += held.finals.length === 1 ? 1 : 0;
}

/** Waits (at most 30 s) until `done()`; what is still unsent then counts as lost. */
async function settle(done) {
  const deadline = Date.now() + 30_000;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 300));
}

/** The participant id the page made for this browser (kept in localStorage as JSON). */
const browserParticipant = (page) => page.evaluate(() => JSON.parse(localStorage.getItem("clozelab-participant")));

/** The table per kind, and in all. */
export function runFaultTable(rows) {
  const sum = (rs, k) => rs.reduce((n, r) => n + Number(r[k]), 0);
  const line = (name, rs) => `| ${name} | ${rs.length} | ${sum(rs, "typed")} | ${sum(rs, "accepted")} | ${sum(rs, "server")} | ${sum(rs, "lost")} | ${sum(rs, "duplicated")} | ${sum(rs, "foreign")} | ${sum(rs, "complete")} of ${sum(rs, "expectedComplete")} | ${sum(rs, "told")} |`;
  return [
    "| kind | sessions | answers typed | accepted | on the server, in their run | lost | duplicated | in another run's data | runs complete (or withdrawn) as expected | told on screen |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...RUN_KINDS.filter((k) => rows.some((r) => r.kind === k)).map((k) => line(k, rows.filter((r) => r.kind === k))),
    line("**all**", rows),
  ].join("\n");
}

/** Rows that miss the target: anything lost, duplicated or foreign, a run not complete (or
 * not withdrawn) as expected, or a participant not told where the kind must tell them. */
export function badRunRows(rows) {
  const mustTell = [TWO_TABS, MEMORY_ONLY, FULL_STORAGE, SERVER_ENDED];
  return rows.filter((r) => r.lost || r.duplicated || r.foreign || r.complete !== r.expectedComplete || (mustTell.includes(r.kind) && !r.told));
}
