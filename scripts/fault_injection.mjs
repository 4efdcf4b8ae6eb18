// The full fault-injection run: `node scripts/fault_injection.mjs [N] [SEED]`
// plays N (default 100) participant sessions of a next-word study (a two-token study for the
// kill point "WebGPU device lost", the game that computes on the GPU) against a local server, each
// interrupted once at a seeded random moment, and prints the table of what was typed,
// accepted, stored, sent, duplicated and lost. Build the app first (`trunk build --locked`).
import { serveDist } from "../tests/e2e/harness.mjs";
import { faultTable, runFaultSessions, LEAVES, GPU_LOST } from "../tests/e2e/faults.mjs";

const sessions = Number(process.argv[2] ?? 100);
const seed = Number(process.argv[3] ?? 1);
const served = await serveDist();
const started = Date.now();
try {
  const rows = await runFaultSessions(served, sessions, seed);
  console.log(faultTable(rows));
  // Who leaves mid-study never completes; everyone else must.
  const bad = rows.filter((r) => r.lost || r.duplicated || (!r.complete && r.kill !== LEAVES) || (r.kill === GPU_LOST && !r.fellBack));
  console.log(`\n${rows.length} sessions in ${((Date.now() - started) / 1000).toFixed(0)} s, seed ${seed}; ${bad.length} with data lost, duplicated or (but for those who left) incomplete`);
  for (const r of bad) console.log(JSON.stringify(r));
  process.exitCode = bad.length ? 1 : 0;
} finally {
  served.server.close();
}
