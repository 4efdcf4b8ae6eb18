// The next-token games in headless Chromium (random test model): the two-token game (buttons,
// feedback, reward, live perplexity, reload resumes exactly, CSV export) and the top-1 game
// (live single-token check, whitespace buttons, feedback against GPT-2's arg-max).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { DIST, answerTwoToken, isFinalKey, serveDist, screenshot, withPage } from "./harness.mjs";

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
    // A second model as a player: the test model again, so its bars must equal GPT-2's.
    await page.getByTestId("opponent-panel").locator("summary").click();
    await page.getByTestId("opponent-folder").fill("/models/test/");
    await page.getByTestId("opponent-load").click();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=perplexity-list] li").length === 5, null, { timeout: TIMEOUT });
    const withOpponent = await page.getByTestId("perplexity-list").locator("li").allInnerTexts();
    const value = (line) => line.split(": ")[1];
    assert.match(withOpponent[3], /^\/models\/test\/: /, withOpponent.join("\n"));
    assert.equal(value(withOpponent[3]), value(withOpponent[1]), withOpponent.join("\n"));
    assert.equal(value(withOpponent[4]), value(withOpponent[2]), withOpponent.join("\n"));
    await page.getByTestId("opponent-folder").fill("/models/none/");
    await page.getByTestId("opponent-load").click();
    await page.waitForFunction(() => /could not be loaded/.test(document.querySelector("[data-testid=opponent-status]")?.innerText ?? ""), null, { timeout: TIMEOUT });
    // The estimator's bias, simulated in the worker on this passage (Figure 2).
    await page.getByTestId("bias-simulation").locator("summary").click();
    await page.getByTestId("bias-run").click();
    await page.getByTestId("bias-list").waitFor({ timeout: TIMEOUT });
    const bias = await page.getByTestId("bias-list").locator("li").allInnerTexts();
    assert.deepEqual(bias.map((b) => Number(b.match(/^n = (\d+)/)[1])), [1, 4, 10, 40], bias.join("\n"));
    // Biased low at n = 1, and less so at n = 40.
    const at = (i) => Number(bias[i].match(/loss ([-+][\d.]+)/)[1]);
    assert.ok(at(0) < 0 && Math.abs(at(3)) < Math.abs(at(0)), bias.join("\n"));
    await page.getByTestId("bias-simulation").scrollIntoViewIfNeeded();
    await screenshot(page, "two-token-bias.png");
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

/** Answers the two-token round on screen (80 %, or nothing when it answered itself). */
test("two-token study: consent, the study's model, positions and rounds, reload resumes, submit, redirect", { timeout: 4 * TIMEOUT }, async () => {
  const study = {
    title: "Token study",
    game: "two_token",
    texts: [{ id: "tok", title: "Tokens", text: "The cat sat on the mat, and then it slept in the sun all afternoon." }],
    passages: ["tok"],
    positions_per_passage: 2,
    rounds_per_position: 2,
    seed: 7,
    model: "models/test/",
    consent: "I agree to take part.",
    instructions: "Say which token is the original.",
    completion_code: "TOK123",
    redirect_url: `${served.base}/done-tokens.html?cc=TOK123`,
    submit_url: "/submit",
    send_each_response: true,
  };
  const file = join(DIST, "study-tokens.json");
  const done = join(DIST, "done-tokens.html");
  await writeFile(file, JSON.stringify(study));
  await writeFile(done, "<!DOCTYPE html><title>done</title><p>Study platform page</p>");
  try {
    await withPage("token-study", {}, async (page) => {
      const url = `${served.base}/?study=study-tokens.json&PROLIFIC_PID=T-1&STUDY_ID=S9`;
      await page.goto(url);
      await page.getByTestId("consent").waitFor({ timeout: TIMEOUT });
      assert.equal(await page.getByTestId("model-badge").count(), 0, "participants see the study only");
      await page.getByTestId("consent-accept").click();
      await answerTwoToken(page, TIMEOUT, 1);
      assert.match(await page.getByTestId("token-progress").innerText(), /^1 of 4 rounds answered/);
      assert.equal(await page.getByTestId("gpt2-top").count(), 0, "no GPT-2 top list for participants");
      assert.equal(await page.getByTestId("perplexity-results").count(), 0);
      await screenshot(page, "token-study.png");
      await answerTwoToken(page, TIMEOUT, 2);
      // A reload resumes at the third round, without the consent screen.
      await page.reload();
      await page.getByTestId("two-token-round").waitFor({ timeout: TIMEOUT });
      assert.equal(await page.getByTestId("consent").count(), 0);
      assert.match(await page.getByTestId("token-progress").innerText(), /^2 of 4/);
      await answerTwoToken(page, TIMEOUT, 3);
      const round = page.getByTestId("two-token-round");
      await round.waitFor({ timeout: TIMEOUT });
      const button = page.locator("[data-testid=p-button][data-percent='80']");
      await Promise.race([button.waitFor({ timeout: TIMEOUT }), page.waitForURL(/done-tokens/, { timeout: TIMEOUT })]);
      if (await button.count()) await button.click();
      await page.waitForURL(/done-tokens\.html\?cc=TOK123/, { timeout: TIMEOUT });
    });
    const mine = served.submissions.filter((b) => b.manifest?.participant === "T-1");
    const sent = mine.filter((b) => isFinalKey(b.key, "T-1"));
    assert.equal(sent.length, 1);
    assert.equal(sent[0].game, "two_token");
    const records = sent[0].records;
    assert.equal(records.length, 4);
    // Each round also went out as it was saved, under its own key, as in the final bundle. The
    // last round's own send can be cut short by the redirect that follows the confirmed final
    // bundle (which holds that round; the outbox keeps its send for a next visit).
    const each = mine.filter((b) => b !== sent[0]).map((b) => b.key);
    const last = records.reduce((a, b) => (b.timestamp > a.timestamp ? b : a)).idempotency_key;
    assert.equal(new Set(each).size, each.length, "no round sent twice");
    assert.deepEqual(each.filter((k) => k !== last).sort(), records.map((r) => r.idempotency_key).filter((k) => k !== last).sort());
    assert.ok(each.every((k) => records.some((r) => r.idempotency_key === k)));
    assert.ok(records.every((r) => r.idempotency_key === `T-1/${sent[0].manifest.run}/tok/${r.position}/${r.round}`));
    assert.equal(new Set(records.map((r) => r.position)).size, 2, "two positions");
    assert.deepEqual(records.map((r) => r.round).sort(), [0, 0, 1, 1]);
    assert.ok(records.every((r) => r.passage === "tok" && !r.practice && r.p_true > 0 && r.p_true < 1));
    assert.equal(sent[0].manifest.url_ids.STUDY_ID, "S9");
    assert.equal(sent[0].manifest.study.seed, 7);
    // The worker's fingerprint (crypto.subtle) is the weights file's SHA-256.
    const weights = await readFile(join(DIST, "models/test/model.safetensors"));
    assert.equal(sent[0].manifest.weight_sha256, createHash("sha256").update(weights).digest("hex"));
    assert.equal(sent[0].manifest.architecture, "GPT-2");
    assert.equal(sent[0].manifest.tokenizer, "vocab.json + merges.txt, 50257 tokens");
  } finally {
    await rm(file, { force: true });
    await rm(done, { force: true });
  }
});

test("top-1 study in Dutch: every position of a practice passage and one scored, an attention check, questions before and after, completion code", { timeout: 3 * TIMEOUT }, async () => {
  const study = {
    game: "top1",
    texts: [{ id: "warm", title: "Warm-up", text: "One two three" }, { id: "main", title: "Main", text: "Red green blue" }],
    passages: ["main"],
    practice: "warm",
    model: "models/test/",
    completion_code: "TOP1OK",
    language: "nl",
    attention_checks: [{ passage: "main", after: 1, instruction: "Typ het woord paars.", answer: "paars" }],
    questions_before: [{ id: "age", text: "Wat is uw leeftijd?", kind: "number", min: 16, max: 120 }],
    questions_after: [
      { id: "difficulty", text: "Hoe moeilijk was het?", kind: "likert", options: ["makkelijk", "moeilijk"] },
      { id: "devices", text: "Welke apparaten gebruikt u?", kind: "multiple_choice", options: ["telefoon", "laptop"], required: false },
    ],
  };
  const file = join(DIST, "study-top1.json");
  await writeFile(file, JSON.stringify(study));
  try {
    await withPage("top1-study", {}, async (page) => {
      await page.goto(`${served.base}/?study=study-top1.json&PROLIFIC_PID=T-2`);
      let answered = 0;
      const checkedAfter = [];
      for (;;) {
        const state = await Promise.race([
          page.getByTestId("top1-round").waitFor({ timeout: TIMEOUT }).then(() => "round"),
          page.getByTestId("attention-check").waitFor({ timeout: TIMEOUT }).then(() => "check"),
          page.getByTestId("complete").waitFor({ timeout: TIMEOUT }).then(() => "done"),
          page.getByTestId("questions").waitFor({ timeout: TIMEOUT }).then(() => "questions"),
        ]);
        if (state === "done") break;
        if (state === "questions") {
          if (await page.getByTestId("question-age").count()) {
            // A number out of range is refused in the study's language.
            await page.getByTestId("question-age-input").fill("7");
            await page.getByTestId("questions-continue").click();
            assert.equal(await page.getByTestId("question-age-error").innerText(), "Vul alstublieft een getal van 16 tot 120 in.");
            await page.getByTestId("question-age-input").fill("30");
          } else {
            assert.equal(await page.getByTestId("question-difficulty-option").count(), 5, "a five-point scale");
            assert.match(await page.getByTestId("question-devices").innerText(), /\(optioneel\)/);
            await page.locator("[data-testid=question-difficulty-option][value='4']").check();
            await screenshot(page, "top1-study-questions-after.png");
          }
          await page.getByTestId("questions-continue").click();
          await page.getByTestId("questions").waitFor({ state: "detached", timeout: TIMEOUT });
          continue;
        }
        if (state === "check") {
          checkedAfter.push(answered);
          assert.equal(await page.getByTestId("attention-instruction").innerText(), "Typ het woord paars.");
          assert.equal(await page.getByTestId("attention-submit").innerText(), "Doorgaan");
          await page.getByTestId("attention-answer").fill("Paars");
          await page.getByTestId("attention-submit").click();
          await page.getByTestId("attention-check").waitFor({ state: "detached", timeout: TIMEOUT });
          continue;
        }
        assert.equal(await page.getByTestId("token-submit").innerText(), "Gokken", "the study's language");
        await page.getByTestId("token-guess").fill(" two");
        await page.getByTestId("token-guess").press("Enter");
        answered += 1;
        await page.waitForFunction((n) => new RegExp(`^${n} van`).test(document.querySelector("[data-testid=token-progress]")?.innerText ?? ""), answered, { timeout: TIMEOUT });
      }
      const total = Number((await page.getByTestId("token-progress").innerText()).match(/van (\d+)/)[1]);
      assert.equal(answered, total);
      assert.ok(total >= 4, `${total} positions over the two passages`);
      // The warm-up's positions first, then the check after the main passage's first answer.
      assert.equal(checkedAfter.length, 1);
      assert.equal(await page.getByTestId("completion-code").innerText(), "TOP1OK");
      assert.match(await page.getByTestId("complete").innerText(), /Dank u wel — u bent klaar\./);
      await screenshot(page, "top1-study-complete.png");
      const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-token-json").click()]);
      const rows = JSON.parse(await readFile(await download.path(), "utf8"));
      assert.equal(rows.length, total);
      assert.deepEqual([...new Set(rows.map((r) => `${r.passage}:${r.practice}`))], ["warm:true", "main:false"]);
      assert.equal(checkedAfter[0], rows.filter((r) => r.practice).length + 1, "after the main passage's first answer");
      const [bundle] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-token-bundle").click()]);
      const manifest = JSON.parse(await readFile(await bundle.path(), "utf8")).manifest;
      assert.deepEqual(manifest.attention_checks.map((c) => [c.check, c.answer, c.passed]), [["main@1", "Paars", true]]);
      assert.deepEqual(manifest.questions.map((q) => [q.question, q.answer]), [["age", "30"], ["difficulty", "4"], ["devices", ""]]);
      assert.match(manifest.device.user_agent, /Chrome/);
    });
  } finally {
    await rm(file, { force: true });
  }
});

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
    // Still practice: no scored round, no histogram yet; one more guess puts this player in it.
    assert.equal(await page.getByTestId("top1-histogram").count(), 0);
    await page.getByTestId("token-guess").fill("the");
    await page.getByTestId("token-guess").press("Enter");
    await page.getByTestId("top1-histogram").waitFor({ timeout: TIMEOUT });
    assert.match(await page.getByTestId("top1-histogram").innerText(), /e2e-top1 \(you\): 0\.0 % over 1 positions/);
    await screenshot(page, "top1-histogram.png");
    await page.reload();
    await page.getByTestId("top1-round").waitFor({ timeout: TIMEOUT });
    assert.equal(await page.getByTestId("top1-round").getAttribute("data-position"), "4");
  }));
