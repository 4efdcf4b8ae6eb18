// A stand-in for a JATOS server (https://www.jatos.org), for the browser tests of
// `clozelab jatos-package` and of the app inside JATOS.
//
// No package registry this workplace reaches ships JATOS (a Java program released on GitHub
// and Docker Hub only; npm, PyPI, Debian and crates.io have no JATOS server), so this fake was
// written from JATOS 3.10.4's source, call for call, for what a study run uses:
// - import (ImportExportService, StudyDeserializer, StudyProperties/ComponentProperties
//   .validate): a ZIP with exactly one `.jas` and at most one folder; `version` ≤ 3; a title
//   without HTML, ≤ 255 characters; a valid assets folder name, none of JATOS's own; component
//   inputs that are JSON; `htmlFilePath` matching JATOS's pattern;
// - study links `/publix/<code>?…` of every type (PublixInterceptor.run and the worker types'
//   Publix classes): General Single (a new worker per browser, remembered in the
//   `JATOS_GENERALSINGLE_UUIDS` cookie: a second start in the same browser is 403), General
//   Multiple (a new worker every time), Personal Single (one worker, one run: a second start is
//   403), Personal Multiple (one worker, any number of runs) and the GUI's test run (the
//   researcher's own "Jatos" worker, any number of runs); each start a new study result, the ID
//   cookie `JATOS_ID_<study result id>` (IdCookieSerialiser's key=value&… fields), the link's
//   URL parameters kept, then `/publix/<result uuid>/<component uuid>/start`, which serves the
//   component's HTML there and opens a new component result each time (a reload too:
//   PublixUtils.startComponent), result data going to the newest; a run that has ended
//   answers 403 to `start`, `initData` and `resultData`;
// - Play's CSP filter on every route without `+ nocsp` (publix.routes): study assets (the
//   worker's scripts too, which a worker obeys), `initData`, `resultData`, `end`, `abort` carry
//   `Content-Security-Policy: base-uri 'self'; object-src 'none'; script-src 'nonce-…'
//   'unsafe-inline' 'unsafe-eval' 'strict-dynamic' https: http:` (Play's defaults, base-uri
//   JATOS's); the component's start page and the end page do not;
// - study assets only for a browser holding an ID cookie of this study's assets
//   (StudyAssets.checkProperAssets), while the API calls go by the run's UUID in the address;
// - the end page's redirect with `[NAME]` placeholders filled from the study link's URL
//   parameters (StudyAssets.endPage);
// - `GET …/initData` (JsonUtils.initData: studyProperties, componentProperties with the
//   component input as a string, urlQueryParameters, …), `PUT …/resultData` (replaces; body as
//   text, so text/plain), `POST …/resultData` (appends), `POST /publix/<uuid>/heartbeat`,
//   `GET /publix/<uuid>/end` (finishes the run; `successful=false` answers JATOS's error page,
//   an Ajax call 200, otherwise `final/endPage.html` redirects to the
//   study's end redirect URL), `GET /publix/<uuid>/abort?message=…` (deletes every component
//   result's data, the run ABORTED: PublixUtils.abortStudy), study assets under `/publix/<uuid>/<component uuid>/<file>`;
// - a finished, failed or aborted run takes no more result data (Publix: the study is done → forbidden), nor
//   result data over 5 MB (413, jatos.resultData.maxSize);
// - the batch channel (ChannelInterceptor.openBatch, BatchChannel, BatchDispatcher,
//   BatchActionHandler): a WebSocket at `/publix/<uuid>/batch/open` for a run with its ID cookie,
//   a run's older channel closed with CLOSED, `OPENED` with the batch session and its version,
//   `{"heartbeat":"ping"}` answered with a pong, and `SESSION` patches (JSON Patch) applied only
//   if versioning is off or the version is still the session's, answered with the patch to every
//   channel then `SESSION_ACK` (or `SESSION_FAIL`) to the sender;
// - the results export (ResultStreamer, "JATOS Results Archive": `study_result_<id>/
//   comp-result_<id>/data.txt` per component result that has data — none for one without — and
//   `metadata.json` with each study result's `studyState` (an unfinished run exported is
//   DATA_RETRIEVED) and `urlQueryParameters`); `exportResults({ name: "x.jrzip" })` names it as
//   JATOS 3.8–3.9.1 did, `{ charset: "latin1" }` writes data.txt as a server whose default
//   charset is not UTF-8 does.
import { createServer } from "node:http";
import { mkdir, mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { execFileSync } from "node:child_process";
import { extname, join, normalize } from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm", ".css": "text/css", ".json": "application/json" };
const RESERVED = ["jatos", "publix", "public", "assets", "study_assets_root", "study_assets"];
const RESULT_DATA_MAX_BYTES = 5 * 1024 * 1024;
const HTML_FILE_PATH = /^[\w\d_-][\w\d/_-]*\.[\w\d_-]+$/;
const ENDED = ["FINISHED", "FAIL", "ABORTED"];
/** Play's CSP filter with JATOS's base-uri, a new nonce each response. */
const csp = () => `base-uri 'self'; object-src 'none'; script-src 'nonce-${randomBytes(12).toString("base64")}' 'unsafe-inline' 'unsafe-eval' 'strict-dynamic' https: http:`;
/** The link types, by study code. */
const LINKS = { c0de4b1e: "GeneralSingle", c0de6d01: "GeneralMultiple", c0de5501: "PersonalSingle", c0de5d01: "PersonalMultiple", c0de7e57: "Jatos" };

function validJson(text) {
  if (text == null || text === "") return true;
  try { JSON.parse(text); return true; } catch { return false; }
}

/** JATOS's import of a study archive; throws with JATOS's message where it would refuse. */
async function importArchive(jzip) {
  const dir = await mkdtemp(join(tmpdir(), "jatos-import-"));
  execFileSync("python3", ["-m", "zipfile", "-e", jzip, dir]);
  const entries = await readdir(dir, { withFileTypes: true });
  const jas = entries.filter((e) => e.isFile() && e.name.endsWith(".jas"));
  const folders = entries.filter((e) => e.isDirectory());
  if (jas.length !== 1) throw new Error("File is not a valid JATOS study");
  if (folders.length > 1) throw new Error("There are more than one directory in the ZIP file.");
  const doc = JSON.parse(await readFile(join(dir, jas[0].name), "utf8"));
  const version = Number(doc.version);
  if (version > 3) throw new Error("This study is from a newer version of JATOS");
  if (![0, 2, 3].includes(version)) throw new Error("Unsupported study version");
  const study = doc.data;
  const problems = [];
  const noHtml = (s) => s == null || !/[<>]/.test(s);
  if (!study.title?.trim()) problems.push("missing title");
  if (study.title?.length > 255 || !noHtml(study.title)) problems.push("bad title");
  if (!study.dirName?.trim() || /[\\/:*?"<>|\u0000-\u001f]/.test(study.dirName) || RESERVED.includes(study.dirName)) problems.push("bad dirName");
  if (!noHtml(study.description) || !noHtml(study.comments) || !noHtml(study.endRedirectUrl)) problems.push("HTML in a text field");
  if (!validJson(study.studyInput)) problems.push("study input is not JSON");
  for (const c of study.componentList ?? []) {
    if (!c.title?.trim()) problems.push("component without title");
    if (c.htmlFilePath && !HTML_FILE_PATH.test(c.htmlFilePath)) problems.push(`bad htmlFilePath ${c.htmlFilePath}`);
    if (!validJson(c.componentInput ?? c.jsonData)) problems.push("component input is not JSON");
  }
  if (!study.componentList?.length) problems.push("no component");
  if (problems.length) throw new Error(`Study is invalid: ${problems.join(", ")}`);
  const assets = folders.length ? join(dir, folders[0].name) : null;
  return { study, assets };
}

/** RFC 6902's add, replace and remove on `doc` (throws where JATOS's diffson would fail). */
function applyPatch(doc, patches) {
  for (const { op, path, value } of patches) {
    if (op === "remove" && path === "/") { doc = {}; continue; }
    const tokens = path.split("/").slice(1).map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
    const last = tokens.pop();
    let parent = doc;
    for (const t of tokens) {
      if (parent === null || typeof parent !== "object" || !(t in parent)) throw new Error(`no ${path}`);
      parent = parent[t];
    }
    if (parent === null || typeof parent !== "object") throw new Error(`no parent of ${path}`);
    if (op === "add") parent[last] = value;
    else if (op === "replace" || op === "remove") {
      if (!(last in parent)) throw new Error(`no ${path}`);
      if (op === "replace") parent[last] = value; else delete parent[last];
    } else throw new Error(`unsupported op ${op}`);
  }
  return doc;
}

/**
 * A JATOS server; `await jatos.importStudy(jzip)` imports an archive and serves it as JATOS
 * would, its study link at `jatos.studyLink`. `faults.failWrites` answers the next PUTs or POSTs
 * of result data with 503 without storing them; `faults.lostAcks` stores the next ones but answers 503
 * (the acknowledgement lost on its way back). `/prolific/…` stands in for Prolific's pages.
 */
// `isolated`: every response carries COOP/COEP, as a proxy in front of JATOS can add them
// (nginx's add_header), which makes the study's page cross-origin isolated.
export async function startJatos({ isolated = false } = {}) {
  let study, assets, component;
  const runs = new Map(); // study result uuid → run
  // `batchRaces`: the next session patches find the version moved on (another run wrote first);
  // `noWebSockets`: a proxy in front of JATOS that does not pass WebSockets (502 to upgrades).
  // `failAborts`: the next abort calls answer 503 and change nothing.
  const faults = { failWrites: 0, lostAcks: 0, failAborts: 0, batchRaces: 0, noWebSockets: false };
  // The study's one batch: its session, its version, the open channels by study result id.
  const batch = { data: {}, version: 1, channels: new Map(), opened: 0 };
  const log = [];
  let nextId = 1;
  let nextWorkerId = 100;
  let nextComponentResultId = 1;

  const server = createServer((req, res) => {
    if (isolated) {
      res.setHeader("cross-origin-opener-policy", "same-origin");
      res.setHeader("cross-origin-embedder-policy", "require-corp");
    }
    let body = "";
    req.on("data", (d) => { body += d; });
    req.on("end", () => handle(req, res, body).catch((e) => { res.writeHead(500).end(String(e)); }));
  });

  function cookieFor(req, run) {
    const cookies = req.headers.cookie ?? "";
    return cookies.split(";").map((c) => c.trim()).some((c) => c.startsWith(`JATOS_ID_${run.id}=`) && c.includes(`studyResultUuid=${run.uuid}`));
  }

  async function handle(req, res, body) {
    const url = new URL(req.url, "http://x");
    const parts = url.pathname.split("/").filter(Boolean);
    log.push(`${req.method} ${url.pathname}`);
    if (parts[0] === "prolific") { res.writeHead(200, { "content-type": "text/html" }).end("<p>Prolific: submission complete</p>"); return; }
    if (parts[0] !== "publix" || !study) { res.writeHead(404).end(); return; }
    // A study link: a new run, for a worker as its type says.
    if (parts.length === 2 && LINKS[parts[1]] && req.method === "GET") {
      const workerType = LINKS[parts[1]];
      const cookies = req.headers.cookie ?? "";
      let workerId;
      if (workerType === "GeneralSingle") {
        // GeneralSinglePublix.startStudy: this browser ran the study before → forbidden.
        if (cookies.split(";").some((c) => c.trim().startsWith("JATOS_GENERALSINGLE_UUIDS=") && c.includes(study.uuid))) {
          res.writeHead(403, { "content-type": "text/html" }).end("<p>This study was run in this browser already.</p>");
          return;
        }
        workerId = nextWorkerId++;
      } else if (workerType === "GeneralMultiple") {
        workerId = nextWorkerId++;
      } else {
        // One worker per personal link, and the researcher's own for test runs.
        workerId = { PersonalSingle: 90, PersonalMultiple: 91, Jatos: 1 }[workerType];
        if (workerType === "PersonalSingle" && [...runs.values()].some((r) => r.workerId === workerId)) {
          res.writeHead(403, { "content-type": "text/html" }).end("<p>This study was already done by this worker.</p>");
          return;
        }
      }
      const id = nextId++;
      const run = { id, uuid: randomUUID(), code: parts[1], workerId, workerType, urlQueryParameters: Object.fromEntries(url.searchParams), componentResults: [], puts: 0, posts: 0, heartbeats: 0, state: "STARTED" };
      // Result data goes to the current component result (PublixUtils.retrieveCurrentComponentResult).
      Object.defineProperty(run, "resultData", {
        get: () => run.componentResults.at(-1)?.data ?? null,
        set: (data) => { run.componentResults.at(-1).data = data; },
      });
      runs.set(run.uuid, run);
      const fields = { batchId: 1, componentId: 1, componentPos: 1, componentResultId: id, creationTime: Date.now(), studyAssets: study.dirName, urlBasePath: "/", jatosRun: "", studyId: 1, studyResultId: id, studyResultUuid: run.uuid, workerId, workerType };
      const value = Object.entries(fields).map(([k, v]) => `${k}=${v}`).join("&");
      const setCookies = [`JATOS_ID_${id}=${value}; Path=/; SameSite=Lax`];
      if (workerType === "GeneralSingle") setCookies.push(`JATOS_GENERALSINGLE_UUIDS=${study.uuid}; Path=/; SameSite=Lax`);
      res.writeHead(303, { "set-cookie": setCookies, location: `/publix/${run.uuid}/${component.uuid}/start` });
      res.end();
      return;
    }
    const run = runs.get(parts[1]);
    if (!run) { res.writeHead(400).end(`A study result ${parts[1]} doesn't exist.`); return; }
    const rest = parts.slice(2);
    if (rest.length === 2 && rest[0] === "final" && rest[1] === "endPage.html") {
      if (run.state !== "FINISHED") { res.writeHead(400).end("isn't finished yet"); return; }
      if (study.endRedirectUrl) {
        // StudyAssets.endPage: `[NAME]` filled from the study link's URL parameters.
        const location = study.endRedirectUrl.replace(/\[(.*?)]/g, (m, name) => (name in run.urlQueryParameters ? encodeURIComponent(run.urlQueryParameters[name]) : m));
        res.writeHead(303, { location }).end();
        return;
      }
      res.writeHead(200, { "content-type": "text/html" }).end("<p>JATOS: thank you</p>");
      return;
    }
    if (rest[0] === "abort") {
      // Publix.abortStudy → PublixUtils.abortStudy: every component result's data deleted, the
      // run ABORTED with the message; an HTML page answers (JATOS's abort page, no redirect).
      if (faults.failAborts > 0) { faults.failAborts--; res.writeHead(503).end(); return; }
      if (!ENDED.includes(run.state)) {
        for (const cr of run.componentResults) { cr.data = null; cr.state = "ABORTED"; }
        run.state = "ABORTED";
        run.abortMsg = url.searchParams.get("message");
      }
      res.writeHead(200, { "content-type": "text/html", "content-security-policy": csp() }).end("<p>JATOS: the study was aborted</p>");
      return;
    }
    if (rest[0] === "end" || rest[0] === "heartbeat") {
      if (rest[0] === "heartbeat") { run.heartbeats++; res.writeHead(200).end(); return; }
      if (!ENDED.includes(run.state)) {
        run.successful = url.searchParams.get("successful") !== "false";
        run.state = run.successful ? "FINISHED" : "FAIL";
      }
      // Publix.finishStudy: an Ajax call gets 200; a run ended as not successful gets JATOS's
      // error page (200, no redirect); a successful one is redirected to the end page.
      if (req.headers["x-requested-with"] === "XMLHttpRequest") { res.writeHead(200, { "content-security-policy": csp() }).end(); return; }
      if (url.searchParams.get("successful") === "false") {
        res.writeHead(200, { "content-type": "text/html", "content-security-policy": csp() }).end(`<p>JATOS: ${url.searchParams.get("message") ?? ""}</p>`);
        return;
      }
      res.writeHead(303, { location: `/publix/${run.uuid}/final/endPage.html`, "content-security-policy": csp() }).end();
      return;
    }
    if (rest[0] !== component.uuid) { res.writeHead(404).end(); return; }
    const file = rest.slice(1).join("/");
    if (file === "start") {
      if (ENDED.includes(run.state)) { res.writeHead(403, { "content-type": "text/html" }).end("<p>This study run is finished.</p>"); return; }
      // PublixUtils.startComponent: every start (a reload too) opens a new component result,
      // the last one left as RELOADED; a component that is not reloadable ends the run failed.
      const last = run.componentResults.at(-1);
      if (last && !component.reloadable) { run.state = "FAIL"; res.writeHead(303, { location: `/publix/${run.uuid}/end?successful=false` }).end(); return; }
      if (last) last.state = "RELOADED";
      run.componentResults.push({ id: nextComponentResultId++, data: null, state: "STARTED" });
      // The component's HTML itself, at this address (`+ nocsp`: JATOS adds no CSP header here).
      const html = await readFile(join(assets, component.htmlFilePath));
      res.writeHead(200, { "content-type": "text/html", "cache-control": "no-cache, no-store" }).end(html);
      return;
    }
    if (file === "initData" || file === "resultData") {
      // The API goes by the run's UUID in the address; a run that has ended takes no calls.
      if (ENDED.includes(run.state)) { res.writeHead(403, { "content-security-policy": csp() }).end("This study run is finished"); return; }
      if (file === "initData") {
        const initData = {
          studySessionData: "{}",
          studyProperties: { uuid: study.uuid, title: study.title, description: study.description, studyInput: study.studyInput },
          batchProperties: { title: "Default" },
          componentList: [{ id: 1, uuid: component.uuid, title: component.title, active: true, reloadable: component.reloadable, position: 1 }],
          componentProperties: { id: 1, uuid: component.uuid, title: component.title, htmlFilePath: component.htmlFilePath, reloadable: component.reloadable, componentInput: component.componentInput },
          urlQueryParameters: run.urlQueryParameters,
          studyCode: run.code,
        };
        res.writeHead(200, { "content-type": "application/json", "content-security-policy": csp() }).end(JSON.stringify(initData));
        return;
      }
      if (!(req.headers["content-type"] ?? "").startsWith("text/plain")) { res.writeHead(400).end("result data is text"); return; }
      // jatos.resultData.maxSize, 5 MB by default (Publix.submitOrAppendResultData).
      const size = Buffer.byteLength(body) + (req.method === "POST" ? Buffer.byteLength(run.resultData ?? "") : 0);
      if (size > RESULT_DATA_MAX_BYTES) { res.writeHead(413).end("Result data size exceeds allowed 5.0 MB. Consider using result files instead."); return; }
      if (req.method !== "PUT" && req.method !== "POST") { res.writeHead(405).end(); return; }
      if (req.method === "PUT") run.puts++; else run.posts++;
      if (faults.failWrites > 0) { faults.failWrites--; res.writeHead(503).end(); return; }
      // PUT replaces the current component result's data, POST appends to it.
      run.resultData = req.method === "PUT" ? body : (run.resultData ?? "") + body;
      if (faults.lostAcks > 0) { faults.lostAcks--; res.writeHead(503).end(); return; }
      res.writeHead(200).end();
      return;
    }
    if (!assets) { res.writeHead(404).end(); return; }
    // StudyAssets.checkProperAssets: some ID cookie of this browser must name the study's assets.
    if (!(req.headers.cookie ?? "").split(";").some((c) => c.trim().startsWith("JATOS_ID_") && c.includes(`studyAssets=${study.dirName}&`))) {
      res.writeHead(403).end(`You're not allowed to access this file outside a study run.`);
      return;
    }
    const path = normalize(join(assets, decodeURIComponent(file)));
    if (!path.startsWith(assets)) { res.writeHead(403).end(); return; }
    try {
      const data = await readFile(path);
      res.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream", "cache-control": "private", "content-security-policy": csp() });
      res.end(req.method === "HEAD" ? undefined : data);
    } catch {
      res.writeHead(404).end();
    }
  }

  const sockets = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    const parts = new URL(req.url, "http://x").pathname.split("/").filter(Boolean);
    const run = parts.length === 4 && parts[0] === "publix" && parts[2] === "batch" && parts[3] === "open" ? runs.get(parts[1]) : undefined;
    log.push(`WS ${req.url}`);
    if (faults.noWebSockets) { socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"); return; }
    // StudyAuthorisation.checkWorkerAllowedToDoStudy: a run that has ended opens no channel.
    if (!run || !cookieFor(req, run) || ENDED.includes(run.state)) {
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    sockets.handleUpgrade(req, socket, head, (ws) => openBatchChannel(run, ws));
  });
  function openBatchChannel(run, ws) {
    const older = batch.channels.get(run.id);
    if (older) { older.send(JSON.stringify({ action: "CLOSED" })); older.close(); }
    batch.channels.set(run.id, ws);
    batch.opened++;
    ws.on("close", () => { if (batch.channels.get(run.id) === ws) batch.channels.delete(run.id); });
    ws.send(JSON.stringify({ action: "OPENED", data: batch.data, version: batch.version }));
    ws.on("message", (raw) => {
      let msg;
      try { msg = JSON.parse(String(raw)); } catch { return; }
      if ("heartbeat" in msg) { ws.send(JSON.stringify({ heartbeat: "pong" })); return; }
      if (msg.action !== "SESSION") { ws.send(JSON.stringify({ action: "ERROR", errorMsg: `Unknown action ${msg.action}` })); return; }
      if (faults.batchRaces > 0) { faults.batchRaces--; batch.version++; }
      let patched;
      try { patched = applyPatch(structuredClone(batch.data), msg.patches); } catch { patched = null; }
      if (patched === null || (msg.versioning && msg.version !== batch.version)) {
        ws.send(JSON.stringify({ action: "SESSION_FAIL", id: msg.id, version: batch.version }));
        return;
      }
      batch.data = patched;
      batch.version++;
      for (const channel of batch.channels.values()) channel.send(JSON.stringify({ action: "SESSION", patches: msg.patches, version: batch.version }));
      ws.send(JSON.stringify({ action: "SESSION_ACK", id: msg.id, version: batch.version }));
    });
  }

  // Closing the server ends its batch channels too (open WebSockets would keep it alive).
  const closeServer = server.close.bind(server);
  server.close = (done) => {
    for (const channel of batch.channels.values()) channel.terminate();
    sockets.close();
    return closeServer(done);
  };
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const link = (type) => `${base}/publix/${Object.keys(LINKS).find((c) => LINKS[c] === type)}`;
  // `studyLink` is a General Single link, as in JATOS's default batch.
  const jatos = { server, runs, faults, log, base, batch, studyLink: link("GeneralSingle"), links: { generalSingle: link("GeneralSingle"), generalMultiple: link("GeneralMultiple"), personalSingle: link("PersonalSingle"), personalMultiple: link("PersonalMultiple"), testRun: link("Jatos") } };
  /** JATOS's results archive of every run so far, written to a new temporary file; its path. */
  jatos.exportResults = async ({ name = "jatos_results.zip", charset = "utf8" } = {}) => {
    const dir = await mkdtemp(join(tmpdir(), "jatos-results-"));
    const studyResults = [];
    for (const run of runs.values()) {
      const componentResults = [];
      for (const cr of run.componentResults) {
        const path = `study_result_${run.id}/comp-result_${cr.id}`;
        await mkdir(join(dir, path), { recursive: true });
        // No data.txt for a component result without data (ResultStreamer).
        if (cr.data) await writeFile(join(dir, path, "data.txt"), Buffer.from(cr.data, charset));
        componentResults.push({ id: cr.id, componentId: 1, componentUuid: component.uuid, componentState: cr.state, path: `/${path}`, data: { size: Buffer.byteLength(cr.data ?? "") } });
      }
      // Exporting marks a run still open DATA_RETRIEVED (its data was retrieved).
      if (!ENDED.includes(run.state)) run.state = "DATA_RETRIEVED";
      studyResults.push({ id: run.id, uuid: run.uuid, studyCode: run.code, studyState: run.state, urlQueryParameters: run.urlQueryParameters, workerId: run.workerId, workerType: run.workerType, componentResults });
    }
    await writeFile(join(dir, "metadata.json"), JSON.stringify({ data: [{ studyId: 1, studyUuid: study.uuid, studyTitle: study.title, studyResults }] }));
    const out = join(await mkdtemp(join(tmpdir(), "jatos-export-")), name);
    execFileSync("python3", ["-m", "zipfile", "-c", out, ...(await readdir(dir))], { cwd: dir });
    return out;
  };
  /** Ends `run` as the researcher can in JATOS's GUI (its data kept): it takes no more data. */
  jatos.endRun = (run, state = "FAIL") => { run.state = state; };
  jatos.importStudy = async (jzip) => {
    ({ study, assets } = await importArchive(jzip));
    component = study.componentList[0];
    jatos.study = study;
  };
  return jatos;
}
