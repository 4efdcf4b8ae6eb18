// An adapter that binds fewer storage buffers in a shader stage than clozelab's kernels do would
// fail those kernels' validation, which a browser only logs, leaving their outputs unwritten:
// the worker says so and runs on the CPU instead. The worker's own wasm runs in the page here, so
// that the page can make WebGPU's adapter report WebGPU's default of eight.
import { test } from "node:test";
import assert from "node:assert/strict";
import { directWorker, launch, serveDist } from "./harness.mjs";

test("an adapter with too few storage buffers a stage sends the worker to the CPU, saying why", { timeout: 120_000 }, async () => {
  const served = await serveDist();
  const { browser, page } = await launch({ webgpu: true });
  try {
    await page.goto(`${served.base}/build.json`);
    const ask = await directWorker(page);
    await page.evaluate(() => {
      const real = Object.getOwnPropertyDescriptor(GPUAdapter.prototype, "limits").get;
      Object.defineProperty(GPUAdapter.prototype, "limits", {
        get() {
          const limits = real.call(this);
          return new Proxy(limits, {
            get: (target, key) => (key === "maxStorageBuffersPerShaderStage" ? 8 : Reflect.get(target, key)),
          });
        },
      });
    });
    const reply = await ask({ Init: { force_cpu: false, precision: "F32" } });
    assert.equal(reply.Backend?.kind, "cpu", JSON.stringify(reply));
    assert.match(reply.Backend.fallback_reason, /binds 8 storage buffers in a shader stage; clozelab's kernels bind 10/);
  } finally {
    await browser.close();
    served.server.close();
  }
});
