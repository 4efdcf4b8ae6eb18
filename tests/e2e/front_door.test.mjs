// The app as the README serves it and as static hosts serve it: the README's app command
// (scripts/app.sh, trunk serve, which answers every missing path with the page) loads the test
// model from the address its comment gives and plays a word with GPT-2's feedback; a host with
// a single-page fallback (Netlify, Cloudflare Pages, GitHub Pages with a copied 404.html) loads a
// model folder that has only vocab.json + merges.txt, and a folder with nothing in it fails
// naming each file it asked for and what came back; the first screen offers the ways to a model.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, serveDist, screenshot, withPage } from "./harness.mjs";

const TIMEOUT = 240_000;
// trunk serve builds before it listens: the wasm is already built by the test command, so this
// is binding and copying (~1 min on 2 cores), but a cold build takes far longer.
const SERVE_TIMEOUT = 15 * 60_000;

/** A port nothing listens on now. */
async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/** Plays the first word of "kitchen" and checks the verdict and GPT-2's words. */
async function playOneWord(page) {
  await page.locator('[data-testid=passage-list] li[data-passage="kitchen"] a').click({ timeout: TIMEOUT });
  await page.getByTestId("passage-context").waitFor({ timeout: TIMEOUT });
  await page.getByTestId("guess").fill("sunday");
  await page.getByTestId("guess").press("Enter");
  await page.getByTestId("verdict").waitFor({ timeout: TIMEOUT });
  assert.equal(await page.getByTestId("verdict").getAttribute("data-correct"), "true");
  const bars = page.getByTestId("model-bars");
  await bars.waitFor({ timeout: TIMEOUT });
  const probs = await bars.locator("li").evaluateAll((li) => li.map((x) => Number(x.dataset.prob)));
  assert.ok(probs.length > 0 && probs.every((p) => p > 0 && p <= 1), `${probs}`);
}

test("the README's app command: trunk serve, the test model at the address app.sh gives, one word played", { timeout: SERVE_TIMEOUT + 2 * TIMEOUT }, async () => {
  const port = await freePort();
  const dist = await mkdtemp(join(tmpdir(), "clozelab-app-sh-"));
  // The real command, in its own process group (trunk's children go with it); its build goes to
  // a folder of its own so that the other tests' dist/ is left alone.
  const app = spawn("bash", ["scripts/app.sh", "--dist", dist], { cwd: ROOT, env: { ...process.env, PORT: String(port) }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  app.stdout.on("data", (d) => { output += d; });
  app.stderr.on("data", (d) => { output += d; });
  const exited = new Promise((r) => app.on("exit", (code) => r(code)));
  try {
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + SERVE_TIMEOUT;
    for (;;) {
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 1000))]);
      assert.equal(code, undefined, `scripts/app.sh exited (${code}) before serving:\n${output.slice(-3000)}`);
      const ok = await fetch(`${base}/`).then((r) => r.ok, () => false);
      if (ok) break;
      assert.ok(Date.now() < deadline, `scripts/app.sh served nothing in ${SERVE_TIMEOUT / 1000} s:\n${output.slice(-3000)}`);
    }
    // What trunk serve answers for a file it does not have: its page, with status 200.
    const missing = await fetch(`${base}/models/test/tokenizer.json`);
    assert.equal(missing.status, 200);
    assert.match(await missing.text(), /<!DOCTYPE html>/i);
    await withPage("app-command", {}, async (page) => {
      // The address scripts/app.sh's own comment gives.
      await page.goto(`${base}/?model=models/test/`);
      await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
      assert.equal(await page.getByTestId("get-model").count(), 0, "no offer of a model once one is loaded");
      await playOneWord(page);
      await screenshot(page, "app-command.png");
    });
  } finally {
    try { process.kill(-app.pid, "SIGTERM"); } catch { /* already gone */ }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    try { process.kill(-app.pid, "SIGKILL"); } catch { /* already gone */ }
    await rm(dist, { recursive: true, force: true });
  }
});

let spa;
before(async () => { spa = await serveDist(undefined, { pageForMissing: true }); });
after(() => spa?.server.close());

test("a host with a single-page fallback: vocab.json + merges.txt load, an empty folder names what came back, the first screen offers a model", { timeout: 3 * TIMEOUT }, () =>
  withPage("page-fallback", {}, async (page) => {
    // The harness's host answers a missing file with the page, status 200, as such hosts do.
    const missing = await fetch(`${spa.base}/models/test/tokenizer.json`);
    assert.equal(missing.status, 200);
    assert.equal(missing.headers.get("content-type"), "text/html");

    // A folder with nothing in it: the Model page names each file asked for and its answer.
    await page.goto(`${spa.base}/model?model=models/nothing/`);
    const failed = page.getByTestId("model-state").locator(".error");
    await failed.waitFor({ timeout: TIMEOUT });
    assert.match(await failed.innerText(), /has no config\.json: an HTML page \(the host's answer for a file it does not have\)/);

    // The first screen, with no model: the ways to one, the test model among them (this server
    // has it); choosing it loads the folder that has only vocab.json + merges.txt.
    await page.goto(`${spa.base}/`);
    const offer = page.getByTestId("get-model");
    await offer.waitFor({ timeout: TIMEOUT });
    assert.match(await offer.innerText(), /Download GPT-2/);
    assert.match(await offer.innerText(), /Model/);
    await page.getByTestId("get-model-test").click({ timeout: TIMEOUT });
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await offer.waitFor({ state: "detached", timeout: TIMEOUT });
    assert.match(await page.getByTestId("model-badge").innerText(), /models\/test\//);
    await playOneWord(page);
  }));
