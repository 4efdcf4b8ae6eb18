// The inference worker's side of starting its product helpers (see helper_pool.rs).
export function spawn_helpers(count, name, sab, timeoutMs) {
  const url = globalThis.location.href;
  const workers = [];
  const ready = [];
  for (let h = 0; h < count; h++) {
    const worker = new Worker(url, { type: "module", name });
    workers.push(worker);
    ready.push(new Promise((resolve, reject) => {
      worker.onmessage = (e) => { if (e.data === "ready") resolve(); };
      worker.onerror = (e) => reject(new Error(e.message || "a product helper failed to start"));
    }));
  }
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no product helper was ready within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([Promise.all(ready), late]).then(
    () => {
      clearTimeout(timer);
      workers.forEach((worker, helper) => worker.postMessage({ kind: "join", sab, helper }));
      return workers;
    },
    (e) => {
      clearTimeout(timer);
      workers.forEach((worker) => worker.terminate());
      throw e;
    });
}
export function share_part(worker, weight, nIn, nOut, panels, bias) {
  const moved = bias ? [panels.buffer, bias.buffer] : [panels.buffer];
  worker.postMessage({ kind: "share", weight, nIn, nOut, panels, bias }, moved);
}
export function serve(worker) {
  worker.postMessage({ kind: "serve" });
}
