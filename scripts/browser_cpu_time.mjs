// Where the CPU goes while the browser's CPU backend runs the Model page's speed check on GPT-2
// small's shape: each Chromium thread's CPU time over the run (Linux's /proc/<pid>/task/*/stat),
// the speed check's figures and the backend line. Served plainly (one thread; service workers
// blocked) or, with `isolated`, cross-origin isolated (a product helper per further core).
// Usage: node scripts/browser_cpu_time.mjs [plain|isolated] [DIST, default dist-release]
import { readFileSync, readdirSync } from "node:fs";
import { chromium } from "playwright-core";
import { join, resolve } from "node:path";
import { serveDist, ensureGpt2SmallShape, GPT2_SMALL_SHAPE, ROOT } from "../tests/e2e/harness.mjs";
const root = resolve(process.argv[3] ?? join(ROOT, "dist-release"));
const isolated = process.argv[2] === "isolated";
ensureGpt2SmallShape(root);
const served = await serveDist(root, { isolated });
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-webgpu"] });
const context = await browser.newContext({ serviceWorkers: "block" });
await context.addInitScript(() => { delete Navigator.prototype.gpu; });
const page = await context.newPage();
await page.goto(`${served.base}/model?model=${GPT2_SMALL_SHAPE}&backend=cpu`);
await page.locator("[data-ready=true]").waitFor({ timeout: 600000 });
function snapshot() {
  const out = new Map();
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let cmd; try { cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8"); } catch { continue; }
    if (!cmd.includes("chromium")) continue;
    const type = (cmd.match(/--type=([a-z-]+)/) ?? [, "browser"])[1];
    let tasks; try { tasks = readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const t of tasks) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8");
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        out.set(`${type}:${pid}:${t}:${name}`, Number(f[11]) + Number(f[12]));
      } catch {}
    }
  }
  return out;
}
const before = snapshot();
const t0 = Date.now();
await page.getByTestId("speed-run").click();
await page.getByTestId("speed-table").waitFor({ timeout: 600000 });
const wall = (Date.now() - t0) / 1000;
const after = snapshot();
const rows = [];
for (const [k, v] of after) { const d = (v - (before.get(k) ?? 0)) / 100; if (d > 0.05) rows.push([k, d]); }
rows.sort((a, b) => b[1] - a[1]);
console.log(`wall ${wall.toFixed(1)} s, isolated ${isolated}`);
for (const [k, d] of rows) console.log(`${d.toFixed(2)} s  ${(d / wall * 100).toFixed(0)}%  ${k}`);
const ms = async (op) => Number(await page.locator(`[data-testid=speed-table] tr[data-op=${op}] td`).getAttribute("data-ms"));
console.log({ p16: await ms("prefill-16"), p64: await ms("prefill-64"), decode: await ms("decode"), words: await ms("words") });
console.log(await page.getByTestId("backend-status").innerText());
await browser.close(); served.server.close();
