// Activations as far out as a trained model's largest, on WebGPU. A test model whose matrices
// have 2.5–5 times the usual spread (`make-test-model --weight-std`) sends many GELU inputs
// above 10, where WGSL's `tanh` in Chromium's engine overflowed to NaN; its next tokens (a prompt's
// forward pass) and a word's probability (decoding steps with the key/value cache) must be the
// CLI's on the CPU. The usual test model's GELU inputs stay within ±4, so nothing else shows this.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DIST, serveDist, launch, webGpuWorkerWithModel, cliNextToken, cliWordProb, cliBinary } from "./harness.mjs";

// Each architecture's activation (GPT-2's tanh GELU, GPT-NeoX's erf GELU, Llama's SiLU gate)
// and norm (layer norm, RMS norm) with its own model.
const MODELS = {
  // Wide enough that `wte` is kept in two chunks (`MAX_TENSOR_BYTES`), which the usual test
  // model's is not: the embedding and the LM head across them.
  "GPT-2": ["models/large-activations/", ["--layers", "1", "--dim", "384", "--heads", "6", "--weight-std", "0.25"]],
  "GPT-NeoX": ["models/large-activations-gpt-neox/", ["--family", "gpt-neox", "--weight-std", "0.5"]],
  Llama: ["models/large-activations-llama/", ["--family", "llama", "--dim", "96", "--heads", "6", "--weight-std", "0.5"]],
};
const CONTEXTS = ["The", "The quick brown fox jumps over"];
const WORD = "the";
const TOP = 15;
const TOLERANCE = 1e-4;
// A word's probability sums its tokenisations' improbable tokens (ln p ≈ −21 here): natively
// wgpu differs from the CPU there by 2e-4, the order of f32's rounding at these magnitudes.
const WORD_TOLERANCE = 1e-3;
const TIMEOUT = 240_000;

let served;
before(async () => {
  for (const [model, shape] of Object.values(MODELS)) {
    const dir = join(DIST, model);
    if (!existsSync(join(dir, "model.safetensors"))) {
      execFileSync(cliBinary(), ["make-test-model", "--out", dir, "--seed", "3", ...shape], { stdio: "ignore" });
    }
  }
  served = await serveDist();
});
after(() => served?.server.close());

for (const [name, [model]] of Object.entries(MODELS)) {
  test(`${name}, large activations on WebGPU: next tokens and a word's probability are the CLI's`, { timeout: TIMEOUT }, () => check(model));
}

async function check(model) {
  const modelDir = join(DIST, model);
  const { browser, page, logs } = await launch({ webgpu: true });
  try {
    const ask = await webGpuWorkerWithModel(page, served, model);
    for (const context of CONTEXTS) {
      const reply = await ask({ NextTokens: { context, k: TOP } });
      const shown = reply.NextTokens;
      assert.ok(shown, JSON.stringify(reply).slice(0, 300));
      const reference = cliNextToken(modelDir, context, TOP).tokens;
      assert.equal(shown.length, TOP);
      for (let i = 0; i < TOP; i++) {
        assert.equal(shown[i].id, reference[i].id, `${context}, rank ${i}: WebGPU id ${shown[i].id} (${shown[i].logprob}), CLI id ${reference[i].id} (${reference[i].logprob})`);
        assert.ok(Math.abs(shown[i].logprob - reference[i].logprob) <= TOLERANCE, `${context}, rank ${i}: ${shown[i].logprob} vs ${reference[i].logprob}`);
      }
    }
    const context = CONTEXTS[1];
    const reply = await ask({ WordProbs: { context, words: [WORD], temperature: 1.0 } });
    const [scored] = reply.WordProbs ?? [];
    assert.ok(scored, JSON.stringify(reply).slice(0, 300));
    const reference = cliWordProb(modelDir, context, WORD);
    assert.ok(scored.logprob !== null && Math.abs(scored.logprob - reference.logprob) <= WORD_TOLERANCE, `${WORD}: WebGPU ${scored.logprob}, CLI ${reference.logprob}`);
    const errors = logs.filter((l) => /^error|pageerror|panicked|unreachable/i.test(l) && !/404/.test(l));
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
}
