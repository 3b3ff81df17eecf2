// Runs the MCP Apps test host (tests/clients/apps_host/: a page built on the
// TypeScript SDK's Client and ext-apps' AppBridge, bundled here by esbuild)
// in Debian's headless Chromium, driven by playwright-core, against
// `notes serve`. The page's own server serves it and forwards `/mcp` to
// notes with the API key, as a chat host's backend would (the browser never
// holds the key, and notes needs no CORS). In the app's frame it creates a
// note the host's user approves, one the user declines, and searches; it
// checks the frame's sandbox and CSP from inside, takes a screenshot, and
// prints what it observed as one JSON object on stdout. The Rust test
// (tests/tests/notes/app_host.rs) makes the assertions.
//
// usage: node apps_host.mjs HOST_DIR NOTES_MCP_URL API_KEY SCREENSHOT QUERY

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { chromium } from "playwright-core";

const [hostDir, mcpUrl, key, screenshot, query] = process.argv.slice(2);
const WAIT = 30000;
const report = { console: [] };

const bundle = await build({
  entryPoints: [join(hostDir, "host.js")],
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "chrome120",
  write: false,
  logLevel: "silent",
  nodePaths: [join(process.cwd(), "node_modules")],
});
const hostJs = bundle.outputFiles[0].text;
const hostHtml = readFileSync(join(hostDir, "host.html"), "utf8");

// Request headers the backend does not pass on: the browser's own, and
// anything that would make notes treat the call as a cross-site page's.
const DROPPED = new Set(["host", "origin", "referer", "cookie", "connection", "authorization"]);

const upstream = new URL(mcpUrl);
const server = createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (req.method === "GET" && path === "/") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(hostHtml);
  } else if (req.method === "GET" && path === "/host.js") {
    res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(hostJs);
  } else if (path === "/mcp") {
    const headers = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!DROPPED.has(name) && !name.startsWith("sec-")) headers[name] = value;
    }
    headers.authorization = `Bearer ${key}`;
    const forwarded = httpRequest(upstream, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    forwarded.on("error", (error) => res.writeHead(502).end(String(error)));
    req.pipe(forwarded);
  } else {
    res.writeHead(404).end();
  }
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const hostUrl = `http://127.0.0.1:${server.address().port}/`;

const userDataDir = mkdtempSync(join(tmpdir(), "gonk-apps-chromium-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  viewport: { width: 704, height: 900 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

const texts = (locator) => locator.evaluateAll((items) => items.map((item) => item.textContent));

try {
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") report.console.push(message.text());
  });
  page.on("pageerror", (error) => report.console.push(String(error)));
  await page.goto(`${hostUrl}?query=${encodeURIComponent(query)}`);
  await page.waitForFunction(() => window.hostReport && window.hostReport.rendered !== undefined, null, {
    timeout: WAIT,
  });
  const app = page.frameLocator("#app iframe");
  await app.locator('body[data-ready="1"]').waitFor({ timeout: WAIT });
  await page.waitForFunction(() => window.hostReport.appInitialized, null, { timeout: WAIT });
  await app.locator("#results li").first().waitFor({ timeout: WAIT });

  const state = async () => ({
    status: await app.locator("#status").textContent(),
    query: await app.locator("#query").inputValue(),
    resultsSummary: await app.locator("#results-summary").textContent(),
    results: await texts(app.locator("#results li .title")),
    boardSummary: await app.locator("#board-summary").textContent(),
    boardTags: await texts(app.locator("#board-tags span")),
    notes: await texts(app.locator("#notes li .title")),
    error: await app.locator("#error").textContent(),
  });
  report.initial = await state();

  // A note created in the app; the server asks, the user approves.
  await app.locator("#title").fill("Made in the app");
  await app.locator("#body").fill("created through the host bridge");
  await app.locator("#tags").fill("board, app");
  await app.locator("#create").click();
  await page.locator("#approval").waitFor({ state: "visible", timeout: WAIT });
  report.approvalMessage = await page.locator("#approval-message").textContent();
  await page.locator("#approve").click();
  await app.locator("body[data-created]").waitFor({ timeout: WAIT });
  await app.locator("#notes li .title", { hasText: "Made in the app" }).first().waitFor({ timeout: WAIT });
  report.created = await app.locator("body").getAttribute("data-created");
  report.afterCreate = await state();

  // One the user declines: the app shows why.
  await app.locator("#title").fill("Declined in the app");
  await app.locator("#create").click();
  await page.locator("#approval").waitFor({ state: "visible", timeout: WAIT });
  await page.locator("#decline").click();
  await page.waitForFunction(
    () => document.querySelector("#app iframe") && window.hostReport.approvals.length === 2,
    null,
    { timeout: WAIT },
  );
  await app.locator("#error:not(:empty)").waitFor({ timeout: WAIT });
  report.afterDecline = await state();

  // A search from the app.
  await app.locator("#query").fill("app");
  await app.locator("#search").click();
  await app.locator("#results-summary", { hasText: "for “app”" }).waitFor({ timeout: WAIT });
  report.afterSearch = await state();

  // The frame from the inside: its CSP, its origin, what it may reach.
  const frame = page.frames().find((f) => f.parentFrame() === page.mainFrame());
  report.inside = await frame.evaluate(async (url) => {
    const violations = [];
    document.addEventListener("securitypolicyviolation", (e) => violations.push(e.effectiveDirective));
    let fetched;
    try {
      await fetch(url);
      fetched = "loaded";
    } catch {
      fetched = "failed";
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    let parentDocument;
    try {
      parentDocument = typeof window.parent.document.title;
    } catch {
      parentDocument = "denied";
    }
    const meta = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
    return {
      policy: meta ? meta.content : null,
      origin: self.origin,
      fetched,
      violations,
      parentDocument,
    };
  }, hostUrl);
  report.frameHeight = await page.locator("#app iframe").evaluate((f) => f.getBoundingClientRect().height);

  await app.locator("#title").fill("");
  const bottom = await page.evaluate(() => document.querySelector("#app").closest(".turn").getBoundingClientRect().bottom);
  await page.screenshot({ path: screenshot, clip: { x: 0, y: 0, width: 704, height: Math.ceil(bottom) + 12 } });
  report.host = await page.evaluate(() => window.hostReport);
} catch (error) {
  report.failure = String(error && error.stack ? error.stack : error);
  try {
    report.host = await context.pages()[0]?.evaluate(() => window.hostReport);
  } catch {}
} finally {
  await context.close();
  // The SDK's open GET stream is still forwarded to notes: drop it.
  server.closeAllConnections();
  server.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
// esbuild's service and the forwarded streams would keep Node alive.
process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(0));
