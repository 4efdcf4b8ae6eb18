// Which build a study's packages carry. The test command's app is a development build: the
// Study page says so beside the package buttons, with the way to the optimised one, and
// `clozelab jatos-package`/`site-package` refuse it unless told otherwise. The same app with a
// release record (a stand-in for `bash scripts/app.sh --release`, whose build takes longer than
// the test command can spend) is named as the optimised build, without a warning, and its
// packages carry the record and say which build they are.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { DIST, cliBinary, serveDist, screenshot, withPage } from "./harness.mjs";

const TIMEOUT = 120_000;

const inZip = (zip, name) => execFileSync("python3", ["-c", "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())", zip, name]).toString();

test("the Study page and the package commands say which build they would package", { timeout: 4 * TIMEOUT }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "clozelab-build-"));
  const study = join(dir, "study.json");
  await writeFile(study, JSON.stringify({ title: "Build check", passages: ["storm"], answers_in_browser: true }));
  const record = JSON.parse(await readFile(join(DIST, "build.json"), "utf8"));
  assert.equal(record.profile, "debug", "the test command's build records itself as a development build");
  assert.ok(Object.keys(record.wasm).length === 2 && Object.values(record.wasm).every((bytes) => bytes > 1e6), JSON.stringify(record));
  const development = await serveDist();
  try {
    for (const width of [1100, 390]) {
      await withPage(`build-notice-development-${width}`, { viewport: { width, height: 900 } }, async (page) => {
        await page.goto(`${development.base}/study`);
        const warning = page.getByTestId("study-build-warning");
        await warning.waitFor({ timeout: TIMEOUT });
        const text = await warning.innerText();
        assert.match(text, /Not for participants yet/);
        assert.match(text, /a development build \(commit \w+/);
        assert.match(text, /app [\d.]+ MB, worker [\d.]+ MB/);
        assert.match(text, /bash scripts\/app\.sh --release/);
        assert.equal(await page.getByTestId("study-build").count(), 0);
        await warning.scrollIntoViewIfNeeded();
        await screenshot(page, `study-build-development-${width}.png`);
      });
    }
  } finally {
    development.server.close();
  }
  // The command line refuses the development build, and packages it when told to.
  const refused = spawnSync(cliBinary(), ["site-package", "--study", study, "--dist", DIST, "--out", join(dir, "dev.zip")]);
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr.toString(), /development build.*--allow-development-build/s);
  execFileSync(cliBinary(), ["site-package", "--study", study, "--dist", DIST, "--out", join(dir, "dev.zip"), "--allow-development-build"], { stdio: ["ignore", "ignore", "pipe"] });
  assert.match(inZip(join(dir, "dev.zip"), "README-host.txt"), /The app in this ZIP is a development build/);

  // The same files recorded as a release build (links to the built files, a record of its own).
  const optimised = join(dir, "optimised");
  execFileSync("cp", ["-rs", `${DIST}/.`, optimised]);
  await rm(join(optimised, "build.json"));
  await writeFile(join(optimised, "build.json"), JSON.stringify({ ...record, profile: "release" }));
  const served = await serveDist(optimised);
  try {
    await withPage("build-notice-optimised", {}, async (page) => {
      await page.goto(`${served.base}/study`);
      const line = page.getByTestId("study-build");
      await line.waitFor({ timeout: TIMEOUT });
      assert.match(await line.innerText(), /The packages carry the optimised build \(commit \w+/);
      assert.equal(await page.getByTestId("study-build-warning").count(), 0);
    });
  } finally {
    served.server.close();
  }
  for (const [command, out] of [["site-package", "site.zip"], ["jatos-package", "study.jzip"]]) {
    execFileSync(cliBinary(), [command, "--study", study, "--dist", optimised, "--out", join(dir, out)], { stdio: ["ignore", "ignore", "pipe"] });
  }
  assert.match(inZip(join(dir, "site.zip"), "README-host.txt"), /The app in this ZIP is the optimised build \(commit \w+/);
  assert.equal(JSON.parse(inZip(join(dir, "site.zip"), "build.json")).profile, "release");
  assert.equal(JSON.parse(inZip(join(dir, "study.jzip"), "clozelab_build_check/build.json")).profile, "release");
  await rm(dir, { recursive: true, force: true });
});
