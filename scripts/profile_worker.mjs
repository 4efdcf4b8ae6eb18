// Where the inference worker spends its time during the Model page's speed check: Chromium's
// sampling profiler on the worker (DevTools protocol), self time per function, the top 25.
// Function names need a wasm build that keeps its name section: wasm-opt drops it, so build the
// release worker with `data-wasm-opt="0"` on its link in index.html (speed unchanged: the
// docs/performance.md has the figures) into its own folder, and point CLOZELAB_DIST there.
//
// `--isolated` serves the page cross-origin isolated, so the worker shares its products with
// helpers (their own time is not sampled: the worker's waits for them show as its self time).
//
// Usage: CLOZELAB_DIST=dist-noopt node scripts/profile_worker.mjs [--model big|test] [--isolated] [--out F.cpuprofile]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { serveDist, ensureGpt2SmallShape } from "../tests/e2e/harness.mjs";

const { values: args } = parseArgs({ options: { model: { type: "string", default: "big" }, out: { type: "string" }, isolated: { type: "boolean", default: false } } });
const models = { big: ensureGpt2SmallShape, test: () => "models/test/" };
if (!models[args.model]) throw new Error(`--model is big or test, not ${args.model}`);
const dir = models[args.model]();
const TIMEOUT = 30 * 60 * 1000;

const app = await serveDist(undefined, { isolated: args.isolated });
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-webgpu"] });
try {
  const context = await browser.newContext({ serviceWorkers: "block" });
  await context.addInitScript(() => { delete Navigator.prototype.gpu; });
  const page = await context.newPage();
  // The worker is reached through the page's session: attached (unflattened) as it starts.
  const cdp = await context.newCDPSession(page);
  let worker = null;
  let nextId = 1;
  const pending = new Map();
  cdp.on("Target.attachedToTarget", (e) => { if (e.targetInfo.type === "worker") worker = e.sessionId; });
  cdp.on("Target.receivedMessageFromTarget", (e) => {
    const reply = JSON.parse(e.message);
    pending.get(reply.id)?.(reply);
    pending.delete(reply.id);
  });
  const send = (method, params = {}) => new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    cdp.send("Target.sendMessageToTarget", { sessionId: worker, message: JSON.stringify({ id, method, params }) });
  });
  await cdp.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });
  await page.goto(`${app.base}/model?model=${dir}&backend=cpu`);
  await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
  if (!worker) throw new Error("the inference worker did not attach");
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 200 });
  await send("Profiler.start");
  await page.getByTestId("speed-run").click();
  await page.getByTestId("speed-table").waitFor({ timeout: TIMEOUT });
  const { result } = await send("Profiler.stop");
  const profile = result.profile;
  if (args.out) writeFileSync(args.out, JSON.stringify(profile));
  const names = new Map(profile.nodes.map((n) => [n.id, n.callFrame.functionName || "(anonymous)"]));
  const self = new Map();
  let total = 0;
  profile.samples.forEach((node, i) => {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    self.set(names.get(node), (self.get(names.get(node)) ?? 0) + dt);
    total += dt;
  });
  console.log((await page.getByTestId("speed-table").innerText()).trim());
  console.log(`\nworker self time over the speed check: ${(total / 1e6).toFixed(1)} s`);
  for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`${(us / 1e3).toFixed(0).padStart(8)} ms ${(100 * us / total).toFixed(1).padStart(5)}%  ${name.slice(0, 110)}`);
  }
} finally {
  await browser.close();
  app.server.close();
}
