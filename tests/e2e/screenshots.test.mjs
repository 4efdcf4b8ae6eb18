// The README's pictures: each kind of page as a visitor, a participant and a researcher see it,
// at desktop width (and the game at phone width), taken on every run of the test command into
// test-artifacts/screenshots/. With CLOZELAB_SCREENSHOTS=docs/screenshots they replace the
// committed copies. Every picture the README shows must be one this test takes.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, copyFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { ROOT, ARTIFACTS, serveDist, withPage } from "./harness.mjs";

const TIMEOUT = 240_000;
const OUT = join(ARTIFACTS, "screenshots");
const DESKTOP = { width: 1100, height: 720 };
const PHONE = { width: 390, height: 780 };
const taken = [];

let served;
before(async () => { served = await serveDist(); await mkdir(OUT, { recursive: true }); });
after(() => served?.server.close());

/** A small JPEG of what the viewport shows (from the page's top unless `fromTop` is false). */
async function shoot(page, name, fromTop = true) {
  if (fromTop) await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(OUT, name), type: "jpeg", quality: 55 });
  taken.push(name);
  const keep = process.env.CLOZELAB_SCREENSHOTS;
  if (keep) {
    await mkdir(join(ROOT, keep), { recursive: true });
    await copyFile(join(OUT, name), join(ROOT, keep, name));
  }
}

test("screenshots of each kind of page for the README", { timeout: 4 * TIMEOUT }, async () => {
  await withPage("screenshot-play", { webgpu: true, viewport: DESKTOP }, async (page) => {
    await page.goto(`${served.base}/?model=models/test/&PROLIFIC_PID=screenshot`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await shoot(page, "passages.jpg");
    await page.locator("[data-testid=passage-list] li[data-passage=kitchen] a").click();
    await page.getByTestId("passage-context").waitFor({ timeout: TIMEOUT });
    await page.keyboard.type("sunday");
    await page.keyboard.press("Enter");
    await page.getByTestId("model-bars").waitFor({ timeout: TIMEOUT });
    await shoot(page, "game.jpg");
    await page.setViewportSize(PHONE);
    await shoot(page, "game-phone.jpg");
  });
  await withPage("screenshot-tokens", { webgpu: true, viewport: DESKTOP }, async (page) => {
    await page.goto(`${served.base}/?model=models/test/&PROLIFIC_PID=screenshot`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await page.locator("[data-testid=two-token-passage]").first().click();
    await page.locator("[data-testid=p-button]").first().waitFor({ timeout: TIMEOUT });
    await shoot(page, "two-tokens.jpg");
  });
  await withPage("screenshot-next-token", { webgpu: true, viewport: DESKTOP }, async (page) => {
    await page.goto(`${served.base}/next-token?model=models/test/`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("context").fill("The quick brown fox jumps over");
    await page.locator("[data-testid=token-list]").waitFor({ timeout: TIMEOUT });
    await shoot(page, "next-token.jpg");
  });
  await withPage("screenshot-study", { viewport: DESKTOP }, async (page) => {
    await page.goto(`${served.base}/study`);
    await page.getByRole("heading").first().waitFor({ timeout: TIMEOUT });
    await shoot(page, "study.jpg");
  });
  await withPage("screenshot-analysis", { viewport: DESKTOP }, async (page) => {
    const fixtures = join(ROOT, "tests/fixtures/analysis");
    await page.goto(`${served.base}/analysis`);
    await page.getByTestId("analysis-files").setInputFiles(["norms.jsonl", "samples_small_model.jsonl"].map((f) => join(fixtures, f)));
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=analysis-file-list] li").length === 2, null, { timeout: TIMEOUT });
    await page.getByTestId("analysis-resamples").fill("3");
    await page.getByTestId("analyse").click();
    await page.getByTestId("table1").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("table1").scrollIntoViewIfNeeded();
    await shoot(page, "analysis.jpg", false);
  });
  await withPage("screenshot-model", { webgpu: true, viewport: DESKTOP }, async (page) => {
    await page.goto(`${served.base}/model?model=models/test/`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await shoot(page, "model.jpg");
  });
  const readme = await readFile(join(ROOT, "README.md"), "utf8");
  const shown = [...readme.matchAll(/docs\/screenshots\/([\w.-]+)/g)].map((m) => m[1]);
  assert.ok(shown.length >= 6, `the README shows ${shown.length} pictures`);
  for (const name of shown) assert.ok(taken.includes(name), `README shows ${name}, which this test does not take (${taken})`);
});
