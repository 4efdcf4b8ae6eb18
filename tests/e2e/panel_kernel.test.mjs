// The browser's CPU products (the wasm SIMD panel kernel of `model/ops/panel_product.rs`: tiles
// of 4 rows × 12 columns, the sum unrolled four times, a loop of its own for one row) on shapes
// that fit none of that evenly, against the native CPU path (`clozelab`, gemm): a one-layer
// model 18 wide with 3 heads (projections 18→54, 18→18, 18→72 and 72→18, so every width leaves
// a partial panel and the inputs a remainder after the unrolled sums; the LM head 18→50257),
// run on prompts of 1, 2, 3, 5 and 7 tokens (the one-row loop, partial tiles, a tile and more)
// and on a word's exact probability (decoding steps of several rows).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT, DIST, serveDist, launch, cliNextToken, cliWordProb, screenshot, shownNextTokens, shownWordProb, cliBinary } from "./harness.mjs";

const MODEL = "models/odd-shape/";
const TOP = 15;
const TOLERANCE = 1e-4;
const TIMEOUT = 240_000;
// 1, 2, 3, 5 and 7 tokens with GPT-2's vocabulary.
const CONTEXTS = ["The", "The quick", "The quick brown", "The quick brown fox jumps", "The quick brown fox jumps over the"];

let served;
before(async () => {
  const dir = join(DIST, MODEL);
  if (!existsSync(join(dir, "model.safetensors"))) {
    const bin = cliBinary();
    execFileSync(bin, ["make-test-model", "--out", dir, "--layers", "1", "--dim", "18", "--heads", "3", "--seed", "11"], { stdio: "ignore" });
  }
  served = await serveDist();
});
after(() => served?.server.close());

test("the wasm SIMD panel kernel on odd shapes gives the native CPU path's numbers", { timeout: 2 * TIMEOUT }, async () => {
  const { browser, page, logs } = await launch({ webgpu: false });
  const modelDir = join(DIST, MODEL);
  try {
    await page.goto(`${served.base}/next-token?model=${MODEL}`);
    const status = page.getByTestId("backend-status").locator("[data-backend]");
    await status.waitFor({ timeout: TIMEOUT });
    assert.equal(await status.getAttribute("data-backend"), "cpu");
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    for (const context of CONTEXTS) {
      const shown = await shownNextTokens(page, context, TIMEOUT);
      const reference = cliNextToken(modelDir, context, TOP).tokens;
      assert.equal(shown.length, TOP);
      for (let i = 0; i < TOP; i++) {
        assert.ok(Math.abs(shown[i].logprob - reference[i].logprob) <= TOLERANCE, `${context}, rank ${i}: ${shown[i].logprob} vs ${reference[i].logprob}`);
      }
      // Ranks may swap only between near-ties.
      const ids = new Set(shown.map((t) => t.id));
      const missing = reference.filter((t) => !ids.has(t.id));
      assert.ok(missing.every((t) => Math.abs(t.logprob - reference[TOP - 1].logprob) <= TOLERANCE), `${context}: ${JSON.stringify(missing)}`);
    }
    const context = CONTEXTS[4];
    await shownNextTokens(page, context, TIMEOUT);
    for (const word of ["the", "unhappiness"]) {
      const shown = await shownWordProb(page, word, TIMEOUT);
      const reference = cliWordProb(modelDir, context, word);
      assert.ok(shown > 0 && Math.abs(Math.log(shown) - reference.logprob) <= TOLERANCE, `${word}: browser ${shown}, CLI ${reference.prob}`);
    }
  } catch (e) {
    await screenshot(page, "FAILED-panel-kernel.png").catch(() => {});
    console.error(logs.join("\n"));
    throw e;
  } finally {
    await browser.close();
  }
});
