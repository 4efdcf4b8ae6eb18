// The next-token games in headless Chromium (random test model): the two-token game (buttons,
// feedback, reward, live perplexity, reload resumes exactly, CSV export) and the top-1 game
// (live single-token check, whitespace buttons, feedback against GPT-2's arg-max).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { serveDist, screenshot, withPage } from "./harness.mjs";

const TIMEOUT = 120_000;

let served;
before(async () => { served = await serveDist(); });
after(() => served?.server.close());

async function progress(page) {
  const text = await page.getByTestId("token-progress").innerText();
  return Number(text.match(/(\d+) of/)[1]);
}

test("two-token game: answer, feedback, live perplexity, reload resumes, export", { timeout: 4 * TIMEOUT }, () =>
  withPage("two-token", {}, async (page) => {
    await page.goto(`${served.base}/?model=models/test/&PROLIFIC_PID=e2e-two`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await page.locator('[data-testid=two-token-passage]').first().click();
    for (let i = 0; i < 4; i++) {
      const round = page.getByTestId("two-token-round");
      await round.waitFor({ timeout: TIMEOUT });
      const position = await round.getAttribute("data-position");
      // A round whose two tokens are equal answers itself; otherwise press a button.
      const button = page.locator("[data-testid=p-button][data-percent='80']");
      await Promise.race([
        button.waitFor({ timeout: TIMEOUT }),
        page.waitForFunction((p) => document.querySelector("[data-testid=two-token-round]")?.dataset.position !== p, position, { timeout: TIMEOUT }),
      ]);
      if (await button.count()) {
        if (i === 0) await screenshot(page, "two-token-round.png");
        await button.click();
      }
      // Saved and moved on: the progress line counts it (the feedback of an earlier round may
      // still be on screen, so it is no signal).
      await page.waitForFunction((n) => new RegExp(`^${n} of`).test(document.querySelector("[data-testid=token-progress]")?.innerText ?? ""), i + 1, { timeout: TIMEOUT });
    }
    await page.getByTestId("token-feedback").waitFor({ timeout: TIMEOUT });
    assert.equal(await progress(page), 4);
    assert.match(await page.getByTestId("round-reward").innerText(), /points/);
    // Two practice rounds, then two scored: the estimate is shown.
    await page.getByTestId("perplexity-list").waitFor({ timeout: TIMEOUT });
    const items = await page.getByTestId("perplexity-list").locator("li").allInnerTexts();
    assert.equal(items.length, 3, items.join("\n"));
    assert.match(items[0], /^You: \d/);
    await screenshot(page, "two-token-feedback.png");
    const next = await page.getByTestId("two-token-round").getAttribute("data-position");

    await page.reload();
    await page.getByTestId("two-token-round").waitFor({ timeout: TIMEOUT });
    assert.equal(await page.getByTestId("two-token-round").getAttribute("data-position"), next);
    assert.equal(await progress(page), 4);

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-token-csv").click()]);
    const csv = (await readFile(await download.path(), "utf8")).trim().split(/\r?\n/);
    assert.ok(csv[0].startsWith("participant,passage,position,round,context,true_token,true_token_text,other_token,other_token_text,true_left,button,p_true,reward,g_true,g_other"), csv[0]);
    assert.equal(csv.length, 5, csv.join("\n"));
    assert.ok(csv.slice(1).every((l) => l.startsWith("e2e-two,")), csv.join("\n"));

    // The export, dropped into "Your data" on the first screen, gives the pooled estimate.
    await page.getByRole("link", { name: "Play" }).click();
    await page.locator("details.data-panel summary").click();
    await page.getByTestId("import-data").setInputFiles([
      { name: "two-token.csv", mimeType: "text/csv", buffer: Buffer.from(csv.join("\n") + "\n") },
    ]);
    await page.waitForFunction(() => /two-token.csv: 4 two-token rounds/.test(document.querySelector("[data-testid=import-status]")?.innerText ?? ""), null, { timeout: TIMEOUT });
    const pooled = await page.getByTestId("perplexity-list").locator("li").allInnerTexts();
    assert.match(pooled[0], /^imported participants: \d/);
    await screenshot(page, "imported-token-results.png");
  }));

test("top-1 game: single-token check, whitespace buttons, feedback beside GPT-2", { timeout: 3 * TIMEOUT }, () =>
  withPage("top1", {}, async (page) => {
    await page.goto(`${served.base}/?model=models/test/&PROLIFIC_PID=e2e-top1`);
    await page.locator("[data-ready=true]").waitFor({ timeout: TIMEOUT });
    await page.locator('[data-testid=top1-passage]').first().click();
    const round = page.getByTestId("top1-round");
    await round.waitFor({ timeout: TIMEOUT });
    assert.equal(await round.getAttribute("data-position"), "1");
    assert.equal((await page.getByTestId("token-strip").locator(".token").first().innerText()).trim(), "Every");
    const input = page.getByTestId("token-guess");
    await input.fill("Sunday");
    await page.waitForFunction(() => /with a leading space, is another one/.test(document.querySelector("[data-testid=token-check]")?.innerText ?? ""), null, { timeout: TIMEOUT });
    await page.getByRole("button", { name: "clear" }).click();
    await page.getByRole("button", { name: "· space" }).click();
    await input.press("End");
    await input.type("Sunday");
    await page.waitForFunction(() => /·Sunday” is one GPT-2 token/.test(document.querySelector("[data-testid=token-check]")?.innerText ?? ""), null, { timeout: TIMEOUT });
    await screenshot(page, "top1-round.png");
    await page.getByTestId("token-submit").click();
    const feedback = page.getByTestId("token-feedback");
    await feedback.waitFor({ timeout: TIMEOUT });
    assert.match(await feedback.innerText(), /Right!/);
    assert.equal((await page.getByTestId("true-token").innerText()).trim(), "·Sunday");
    assert.ok((await page.getByTestId("gpt2-top").locator("li").count()) === 10);
    await page.getByTestId("top1-round").waitFor({ timeout: TIMEOUT });
    await page.getByTestId("token-guess").fill("xqzqxqzq");
    await page.waitForFunction(() => /not a single GPT-2 token/.test(document.querySelector("[data-testid=token-check]")?.innerText ?? ""), null, { timeout: TIMEOUT });
    await page.getByTestId("token-guess").press("Enter");
    await page.waitForFunction(() => /Not this time/.test(document.querySelector("[data-testid=token-feedback]")?.innerText ?? ""), null, { timeout: TIMEOUT });
    assert.match(await page.getByTestId("running-score").innerText(), /Top-1 accuracy: you 0\/0/);
    await screenshot(page, "top1-feedback.png");
    await page.reload();
    await page.getByTestId("top1-round").waitFor({ timeout: TIMEOUT });
    assert.equal(await page.getByTestId("top1-round").getAttribute("data-position"), "3");
  }));
