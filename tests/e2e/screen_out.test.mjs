// A participant a question screens out reaches the study's screened-out URL even when nothing
// can be saved or sent: the browser's storage is full and the study's server refuses every
// send. Prolific pays screening by that link, so the participant must never be left on the page.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { DIST, serveDist, withPage } from "./harness.mjs";

const TIMEOUT = 60_000;

test("screened out with full storage and a server that says no: the screened-out URL all the same", { timeout: 3 * TIMEOUT }, async () => {
  const served = await serveDist();
  const file = join(DIST, "study-screen-out.json");
  try {
    await writeFile(file, JSON.stringify({
      title: "Screening", study_id: "screen-out-1", consent: "Agree?", submit_url: "/submit", send_each_response: true,
      texts: [{ id: "p1", title: "One", text: "The baker sold fresh bread" }], passages: ["p1"],
      questions_before: [{ id: "native", text: "Native speaker?", kind: "single_choice", options: ["Yes", "No"], screen_out: ["No"] }],
      screened_out_url: `${served.base}/screened-out-here`,
    }));
    // The server refuses every send for good (422), and the disk is full.
    served.submit.refuseNext = 1000;
    await withPage("screen-out-failing", {}, async (page) => {
      await page.context().addInitScript(() => {
        IDBObjectStore.prototype.put = function () { throw new DOMException("injected: the disk is full", "QuotaExceededError"); };
      });
      await page.goto(`${served.base}/?study=study-screen-out.json&PROLIFIC_PID=S1`);
      await page.getByTestId("consent-accept").click({ timeout: TIMEOUT });
      await page.locator("[data-testid=question-native-option][value=No]").check({ timeout: TIMEOUT });
      await page.getByTestId("questions-continue").click();
      await page.waitForURL(/screened-out-here/, { timeout: TIMEOUT });
    });
    assert.ok([...served.submit.attempts.keys()].some((k) => k.startsWith("S1/")), "the answer was offered to the server");
  } finally {
    served.server.close();
    await rm(file, { force: true });
  }
});
