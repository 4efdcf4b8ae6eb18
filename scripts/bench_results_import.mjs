// A study's results at scale in the page: JATOS's results archive of PARTICIPANTS runs ×
// ANSWERS answers each (on the Provo contexts of ../shared/provo), given to the Analysis page
// with the Provo norms; times reading the files and Table 1 with its participants, beside the
// same page on the norms alone (the baseline, in the same run), median of RUNS.
//
//   node scripts/bench_results_import.mjs [PARTICIPANTS=500] [ANSWERS=250] [RUNS=3]
//
// Needs `trunk build` (dist/) and ../shared/provo/provo_cloze.jsonl.
import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, readFile, writeFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, launch, serveDist } from "../tests/e2e/harness.mjs";

const [PARTICIPANTS = 500, ANSWERS = 250, RUNS = 3] = process.argv.slice(2).map(Number);
const NORMS = join(ROOT, "..", "shared", "provo", "provo_cloze.jsonl");
const TIMEOUT = 600_000;

/** mulberry32: the archive is the same on every run. */
function rng(seed) {
  return () => {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function archive() {
  const contexts = (await readFile(NORMS, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
  const random = rng(7);
  const dir = await mkdtemp(join(tmpdir(), "clozelab-results-bench-"));
  const runs = [];
  for (let p = 0; p < PARTICIPANTS; p++) {
    const participant = `P${String(p).padStart(4, "0")}`;
    const start = Math.floor(random() * contexts.length);
    const responses = [];
    for (let i = 0; i < ANSWERS; i++) {
      const c = contexts[(start + i) % contexts.length];
      const words = Object.entries(c.human).flatMap(([w, n]) => Array(n).fill(w));
      const word = words[Math.floor(random() * words.length)];
      responses.push({ participant, passage: String(c.text_id), position: c.word_num, response: word, response_time_ms: 1500, timestamp: "2026-11-24T10:00:00Z", normalized: word, first_keystroke_ms: 400, practice: false, idempotency_key: `${participant}/${c.text_id}/${c.word_num}` });
    }
    const manifest = { app: "clozelab", app_version: "bench", model_name: "", weight_sha256: "", tokenizer: "", backend: "", adapter: "", participant, order_seed: p, sampling_seed: 0, study: { title: "Bench study", passages: ["storm"] }, url_ids: { PROLIFIC_PID: participant }, exported_at: "2026-11-24T10:00:00Z", planned_answers: ANSWERS };
    const path = join(dir, `study_result_${p + 1}`, `comp-result_${p + 1}`);
    await mkdir(path, { recursive: true });
    await writeFile(join(path, "data.txt"), JSON.stringify({ manifest, responses }));
    runs.push({ id: p + 1, studyState: "FINISHED", urlQueryParameters: { PROLIFIC_PID: participant }, componentResults: [] });
  }
  await writeFile(join(dir, "metadata.json"), JSON.stringify({ data: [{ studyId: 1, studyTitle: "Bench study", studyResults: runs }] }));
  const out = join(await mkdtemp(join(tmpdir(), "clozelab-results-zip-")), "jatos_results.zip");
  const entries = execFileSync("ls", [dir], { encoding: "utf8" }).trim().split("\n");
  execFileSync("python3", ["-m", "zipfile", "-c", out, ...entries], { cwd: dir });
  return out;
}

/** Seconds from choosing the files to Table 1 (and the participants' table, with results). */
async function timeAnalysis(served, files, withResults) {
  const { browser, page } = await launch({ webgpu: false });
  try {
    await page.goto(`${served.base}/analysis`);
    const t0 = Date.now();
    await page.getByTestId("analysis-files").setInputFiles(files);
    await page.waitForFunction((n) => document.querySelectorAll("[data-testid=analysis-file-list] li").length >= n, files.length, { timeout: TIMEOUT });
    const read = (Date.now() - t0) / 1000;
    await page.getByTestId("analyse").click();
    await page.getByTestId("table1").waitFor({ timeout: TIMEOUT });
    if (withResults) {
      const rows = await page.locator("[data-testid=participant-runs] tr[data-state=complete]").count();
      if (rows !== PARTICIPANTS) throw new Error(`${rows} complete participants shown, not ${PARTICIPANTS}`);
    }
    return { read, total: (Date.now() - t0) / 1000 };
  } finally {
    await browser.close();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const zip = await archive();
console.log(`archive: ${PARTICIPANTS} participants × ${ANSWERS} answers, ${((await stat(zip)).size / 1e6).toFixed(1)} MB zipped`);
const served = await serveDist();
try {
  const base = [], results = [], reads = [];
  for (let i = 0; i < RUNS; i++) {
    base.push((await timeAnalysis(served, [NORMS], false)).total);
    const r = await timeAnalysis(served, [NORMS, zip], true);
    results.push(r.total);
    reads.push(r.read);
  }
  const [b, r, read] = [median(base), median(results), median(reads)];
  console.log(`norms alone (baseline): ${b.toFixed(1)} s to Table 1`);
  console.log(`norms + JATOS results: ${r.toFixed(1)} s to Table 1 and the participants (files read in ${read.toFixed(1)} s)`);
  console.log(`ratio: ${(r / b).toFixed(2)}× the baseline; target under 10 s: ${r < 10 ? "met" : "missed"}`);
} finally {
  served.server.close();
}
