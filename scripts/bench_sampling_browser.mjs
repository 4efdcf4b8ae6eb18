// Times the Analysis page's "Sample every context" as a researcher runs it: the worker samples
// every context of the analysis fixture's norms (24 contexts) with the GPT-2-small-shaped test
// model on the CPU (headless Chromium, WebGPU off), for each built app given, alternating
// between them, each round in a fresh browser context (nothing cached in IndexedDB).
// Two builds side by side give a before/after measured in one run.
//
//   node scripts/bench_sampling_browser.mjs --dists dist-before,dist-release [--samples 40] [--rounds 2]
//
// Needs: the built apps (`bash scripts/release.sh DIR`), the CLI (CLOZELAB_BIN, else where scripts/cargo_env.sh builds it; writes the 12-layer test
// model into the first app's folder on first use; the others read it through a link).
import { chromium } from "playwright-core";
import { existsSync, symlinkSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { serveDist, ensureGpt2SmallShape, ROOT } from "../tests/e2e/harness.mjs";

const { values: args } = parseArgs({
  options: {
    dists: { type: "string" },
    samples: { type: "string", default: "40" },
    rounds: { type: "string", default: "2" },
  },
});
if (!args.dists) throw new Error("--dists DIR[,DIR…] is required");
const dists = args.dists.split(",").map((d) => resolve(ROOT, d));
const samples = Number(args.samples);
const rounds = Number(args.rounds);
const FILES = ["norms.jsonl", "samples_small_model.jsonl"].map((f) => join(ROOT, "tests/fixtures/analysis", f));
const TIMEOUT = 30 * 60_000;

const modelPath = ensureGpt2SmallShape(dists[0]);
for (const dist of dists.slice(1)) {
  const link = join(dist, modelPath).replace(/\/$/, "");
  if (!existsSync(link)) {
    mkdirSync(join(link, ".."), { recursive: true });
    symlinkSync(join(dists[0], modelPath).replace(/\/$/, ""), link);
  }
}

/** Seconds from the click to "All 24 contexts sampled". */
async function timeSampling(browser, base) {
  const context = await browser.newContext({ serviceWorkers: "block" });
  const page = await context.newPage();
  await page.goto(`${base}/analysis?model=${modelPath}&backend=cpu`);
  await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
  await page.getByTestId("analysis-files").setInputFiles(FILES);
  await page.getByTestId("analyse").click();
  await page.getByTestId("model-samples-run").waitFor({ timeout: TIMEOUT });
  await page.getByTestId("model-samples-n").fill(String(samples));
  const started = Date.now();
  await page.getByTestId("model-samples-run").click();
  await page.waitForFunction(() => /^All \d+ contexts sampled/.test(document.querySelector("[data-testid=model-samples-status]")?.innerText ?? ""), null, { timeout: TIMEOUT });
  const seconds = (Date.now() - started) / 1000;
  await context.close();
  return seconds;
}

const servers = [];
for (const dist of dists) servers.push(await serveDist(dist));
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-webgpu", "--disable-background-networking", "--disable-component-update"] });
try {
  const times = dists.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, server] of servers.entries()) {
      const s = await timeSampling(browser, server.base);
      console.error(`round ${round + 1}, ${dists[i]}: ${s.toFixed(1)} s`);
      times[i].push(s);
    }
  }
  console.log(`"Sample every context", 24 contexts × ${samples} samples, 12-layer test model, browser CPU (seconds per round)`);
  for (const [i, dist] of dists.entries()) console.log(`${dist}: ${times[i].map((t) => t.toFixed(1)).join(", ")}`);
} finally {
  await browser.close();
  for (const s of servers) s.server.close();
}
process.exit(0);
