// The short fault-injection run of the test command: 18 participant sessions, each interrupted
// once (every kill point twice), must lose and duplicate nothing; the ones who leave mid-study
// must have left every answer they saw accepted on the server. Then one session of every kind
// where runs could mix or storage fails (the long one after 30 answers instead of 200): nothing
// lost, duplicated or in another run's data. The full run is scripts/fault_injection.mjs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { serveDist } from "./harness.mjs";
import { startJatos } from "./jatos_fake.mjs";
import { faultTable, runFaultSessions, KILL_POINTS, LEAVES, GPU_LOST } from "./faults.mjs";
import { RUN_KINDS, badRunRows, runFaultTable, runRunSessions } from "./run_faults.mjs";

let served;
before(async () => { served = await serveDist(); });
after(() => served?.server.close());

test("faults: sessions killed at every kind of moment lose nothing and duplicate nothing", { timeout: 600_000 }, async () => {
  const rows = await runFaultSessions(served, 2 * KILL_POINTS.length, 7);
  console.log(faultTable(rows));
  for (const r of rows) {
    assert.equal(r.lost, 0, `${r.session} (${r.kill} at ${r.at}) lost ${r.lost}`);
    assert.equal(r.duplicated, 0, `${r.session} (${r.kill}) duplicated ${r.duplicated}`);
    if (r.kill === LEAVES) {
      assert.ok(!r.complete && r.accepted === r.at - 1, `${r.session}: ${JSON.stringify(r)}`);
      assert.equal(r.server, r.accepted, `${r.session}: every accepted answer reached the server`);
      continue;
    }
    assert.ok(r.complete, `${r.session} (${r.kill}) is not complete on the server`);
    if (r.kill === GPU_LOST) {
      // A two-token study of 4 rounds, the GPU lost during one: on the CPU to the end.
      assert.ok(r.fellBack, `${r.session}: the page still says WebGPU`);
      assert.equal(r.stored, 4, `${r.session} stored ${r.stored} of 4 rounds`);
      assert.equal(r.server, 4, `${r.session} has ${r.server} of 4 rounds on the server`);
      continue;
    }
    assert.equal(r.stored, 5, `${r.session} (${r.kill}) stored ${r.stored} of 5`);
    assert.equal(r.server, 5, `${r.session} (${r.kill}) has ${r.server} of 5 on the server`);
    assert.ok(r.accepted >= 4, `${r.session}: ${r.accepted} accepted`);
  }
});

test("faults: shared browsers, missing or full storage and JATOS's ways keep every answer in its own run", { timeout: 600_000 }, async () => {
  const jatos = await startJatos();
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox"] });
  try {
    const rows = await runRunSessions({ browser, served, jatos }, RUN_KINDS.length, 7, { answersBeforeClose: 30 });
    console.log(runFaultTable(rows));
    assert.deepEqual(badRunRows(rows), [], "nothing lost, duplicated or in another run; every run complete (or withdrawn) as expected; told where they must be");
    assert.ok(rows.every((r) => r.accepted > 0), "every session answered");
  } finally {
    await browser.close();
    jatos.server.close();
  }
});
