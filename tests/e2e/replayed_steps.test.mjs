// Decode steps recorded once and replayed, in the browser's engine (the worker's wasm: burn with
// fusion on WebGPU, here SwiftShader): each replay's most likely next token is the one the same
// step run one by one gives, step after step, so that every replay reads the inputs written
// before it and the cache the replays before it wrote.
import { test } from "node:test";
import assert from "node:assert/strict";
import { launch, serveDist, webGpuWorkerWithModel } from "./harness.mjs";

const TIMEOUT = 240_000;

test("decode steps replayed from one recording give the steps' own tokens on WebGPU", { timeout: TIMEOUT }, async () => {
  const served = await serveDist();
  const { browser, page, logs } = await launch({ webgpu: true });
  try {
    const ask = await webGpuWorkerWithModel(page, served, "models/test/");
    const steps = async (replayed) => {
      const reply = await ask({ DecodeSteps: { prefill: 16, steps: 12, replayed } });
      assert.ok(reply.DecodeSteps, JSON.stringify(reply).slice(0, 300));
      return reply.DecodeSteps;
    };
    const oneByOne = await steps(false);
    const replayed = await steps(true);
    assert.equal(replayed.eager_reason, null, "the step was recorded");
    assert.equal(oneByOne.tokens.length, 12);
    assert.deepEqual(replayed.tokens, oneByOne.tokens);
    // Tokens that never change would pass whatever the replays read.
    assert.ok(new Set(oneByOne.tokens).size > 1, `the steps' tokens vary: ${oneByOne.tokens}`);
    const errors = logs.filter((l) => /^error|pageerror|panicked|unreachable/i.test(l) && !/404/.test(l));
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    served.server.close();
  }
});
