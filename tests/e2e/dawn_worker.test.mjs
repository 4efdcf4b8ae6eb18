// The GPU machine's browser-engine stage (`scripts/dawn_worker.mjs` in `scripts/gpu_bench.sh`),
// dry-run where no GPU is: the worker's own wasm, outside a browser, answers the page's own
// requests (an upload of the model folder, a next-token list, the speed check) and its list
// equals the CLI's CPU backend; Dawn loads and says why it offers no GPU, and the worker says
// why it runs on the CPU. On Mesa's OpenGL (where this machine has it) Dawn offers only
// WebGPU's compatibility mode without timestamp queries, which burn's runtime needs in a
// browser: the worker falls back to the CPU with that reason instead of stopping.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { DIST, ROOT, cliBinary } from "./harness.mjs";

const MODEL = join(ROOT, "public", "models", "test");

function runHarness(dir, name, extra, env = {}) {
  const out = join(dir, `${name}.json`);
  const run = spawnSync(process.execPath, [join(ROOT, "scripts", "dawn_worker.mjs"), "--dist", DIST, "--model", MODEL,
    "--dawn", join(ROOT, "node_modules", "webgpu"), "--cli", cliBinary(), "--rounds", "1", "--samples", "10",
    "--out", out, ...extra], { encoding: "utf8", env: { ...process.env, XDG_RUNTIME_DIR: tmpdir(), ...env }, timeout: 120_000 });
  return { run, summary: () => readFile(out, "utf8").then(JSON.parse) };
}

test("the worker's wasm answers the page's requests under Node.js beside Dawn", { timeout: 300_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "clozelab-dawn-"));
  try {
    const { run, summary } = runHarness(dir, "default", []);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    const s = await summary();
    assert.ok(s.dawn.adapter || /offers no adapter/.test(s.dawn.note), `Dawn loads: ${JSON.stringify(s.dawn)}`);
    if (s.backend.kind === "cpu") assert.ok(s.backend.fallback_reason, "the worker says why it is on the CPU");
    assert.equal(s.model.random_test_model, true);
    assert.equal(s.top.length, 15);
    assert.ok(s.worst_logprob_difference <= 2e-3, `list against the CLI: ${s.worst_logprob_difference}`);
    for (const ms of [...s.speed_ms.prefill_ms, s.speed_ms.decode_step_ms, s.speed_ms.word_distribution_ms]) {
      assert.ok(Number.isFinite(ms) && ms >= 0, JSON.stringify(s.speed_ms));
    }
    assert.equal(s.speed_ms.word_samples, 10);

    // The stage's own check: asked for a GPU where the worker has none, it fails and says so.
    if (s.backend.kind === "cpu") {
      const strict = runHarness(dir, "strict", ["--require-gpu"]);
      assert.equal(strict.run.status, 1);
      assert.equal((await strict.summary()).failure, "the worker is not on a GPU");
    }

    // Mesa's OpenGL through EGL without a display, in WebGPU's compatibility mode.
    const gl = runHarness(dir, "opengl", ["--dawn-flag", "backend=opengl", "--compatibility"], { EGL_PLATFORM: "surfaceless" });
    assert.equal(gl.run.status, 0, gl.run.stdout + gl.run.stderr);
    const g = await gl.summary();
    if (!g.dawn.adapter) {
      t.diagnostic(`Dawn found no OpenGL adapter here: ${g.dawn.note}`);
    } else if (!g.dawn.timestamp_query) {
      assert.equal(g.backend.kind, "cpu");
      assert.match(g.backend.fallback_reason, /does not offer timestamp-query/);
      assert.ok(g.worst_logprob_difference <= 2e-3);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
