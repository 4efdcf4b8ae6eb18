// The full fault-injection run: `node scripts/fault_injection.mjs [N] [SEED]`
// plays N (default 120) sessions against local servers, half of them participant sessions of a
// next-word study (a two-token study for the kill point "WebGPU device lost", the game that
// computes on the GPU) each interrupted once at a seeded random moment, half of them sessions
// where runs could mix or storage fails (a second study with the same Prolific id, JATOS's test
// run repeated, participants taking turns, two tabs, memory-only and full storage, a tab closed
// after 200 answers, a run ended by the server, a withdrawal whose abort fails once; the JATOS
// ones on the JATOS stand-in). Prints both tables: what was typed, accepted, stored, sent,
// duplicated, lost, and put in another run's data. Build the app first (`trunk build --locked`).
import { chromium } from "playwright-core";
import { serveDist } from "../tests/e2e/harness.mjs";
import { startJatos } from "../tests/e2e/jatos_fake.mjs";
import { faultTable, runFaultSessions, LEAVES, GPU_LOST } from "../tests/e2e/faults.mjs";
import { badRunRows, runFaultTable, runRunSessions } from "../tests/e2e/run_faults.mjs";

const sessions = Number(process.argv[2] ?? 120);
const seed = Number(process.argv[3] ?? 1);
const served = await serveDist();
const jatos = await startJatos();
const started = Date.now();
try {
  const killed = Math.ceil(sessions / 2);
  const rows = await runFaultSessions(served, killed, seed);
  console.log(faultTable(rows));
  // Who leaves mid-study never completes; everyone else must.
  const bad = rows.filter((r) => r.lost || r.duplicated || (!r.complete && r.kill !== LEAVES) || (r.kill === GPU_LOST && !r.fellBack));
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox"] });
  let runRows;
  try {
    runRows = await runRunSessions({ browser, served, jatos }, sessions - killed, seed);
  } finally {
    await browser.close();
  }
  console.log(`\n${runFaultTable(runRows)}`);
  const badRuns = badRunRows(runRows);
  console.log(`\n${rows.length + runRows.length} sessions in ${((Date.now() - started) / 1000).toFixed(0)} s, seed ${seed}; ${bad.length + badRuns.length} with data lost, duplicated, in another run, or (but for those who left) incomplete`);
  for (const r of [...bad, ...badRuns]) console.log(JSON.stringify(r));
  process.exitCode = bad.length + badRuns.length ? 1 : 0;
} finally {
  served.server.close();
  jatos.server.close();
}
