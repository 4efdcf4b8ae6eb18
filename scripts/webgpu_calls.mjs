// Counts every call of the WebGPU methods a kernel launch can make, by "Class.method", into
// `globalThis.__webgpuCalls`: wrapped on the prototypes, so objects made before and after alike
// are counted. Self-contained, so that a page can be given its source (Playwright's
// `page.evaluate(countWebGpuCalls)`) as well as Node.js on Dawn (scripts/dawn_worker.mjs).
export function countWebGpuCalls() {
  const calls = (globalThis.__webgpuCalls = {});
  const wrap = (cls, names) => {
    for (const name of names) {
      const proto = globalThis[cls]?.prototype;
      const original = proto?.[name];
      if (typeof original !== "function") continue;
      const key = `${cls}.${name}`;
      calls[key] = 0;
      proto[name] = function (...a) {
        calls[key]++;
        return original.apply(this, a);
      };
    }
  };
  wrap("GPUComputePassEncoder", ["dispatchWorkgroups", "dispatchWorkgroupsIndirect", "setBindGroup", "setPipeline", "end"]);
  wrap("GPUCommandEncoder", ["beginComputePass", "copyBufferToBuffer", "finish"]);
  wrap("GPUQueue", ["submit", "writeBuffer"]);
  wrap("GPUDevice", ["createBindGroup", "createBuffer", "createCommandEncoder", "createComputePipeline",
    "createComputePipelineAsync", "createShaderModule"]);
  wrap("GPUComputePipeline", ["getBindGroupLayout"]);
  wrap("GPUBuffer", ["mapAsync", "getMappedRange", "unmap", "destroy"]);
}

/** The calls made between two snapshots of `__webgpuCalls`, each divided by `per`. */
export function callsBetween(before, after, per = 1) {
  return Object.fromEntries(Object.keys(after).map((k) => [k, (after[k] - (before[k] ?? 0)) / per]));
}

/** Dispatches among counted calls. */
export const dispatchesOf = (calls) =>
  (calls["GPUComputePassEncoder.dispatchWorkgroups"] ?? 0) + (calls["GPUComputePassEncoder.dispatchWorkgroupsIndirect"] ?? 0);

/** "name count, …" of the calls made at least once in 20 (per step). */
export const describeCalls = (calls) =>
  Object.entries(calls).filter(([, n]) => n > 0.05).map(([k, n]) => `${k.split(".")[1]} ${n.toFixed(1)}`).join(", ");
