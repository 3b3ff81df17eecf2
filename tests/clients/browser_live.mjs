// Opens the notes page (`notes serve`, at /) in Debian's headless Chromium
// (playwright-core), prints `ready` once it is connected and listed, then
// waits until every title given appears in the page's list without a
// reload — notes the test creates on other surfaces (MCP, a background
// job) — and prints what it observed as one JSON object. The Rust test
// (tests/tests/ws/notes_live.rs) makes the assertions.
//
// usage: node browser_live.mjs PAGE_URL API_KEY TITLE...

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [pageUrl, key, ...expected] = process.argv.slice(2);
const WAIT = 30000;
const report = { console: [] };

const userDataDir = mkdtempSync(join(tmpdir(), "gonk-notes-chromium-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

try {
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") report.console.push(message.text());
  });
  page.on("pageerror", (error) => report.console.push(String(error)));
  await page.goto(pageUrl + "#key=" + encodeURIComponent(key));
  await page.waitForSelector('#status[data-state="connected"]', { timeout: WAIT });
  await page.waitForSelector('body[data-ready="1"]', { timeout: WAIT });
  report.initial = await page.$$eval("#notes li .title", (items) => items.map((i) => i.textContent));
  process.stdout.write("ready\n");
  for (const title of expected) {
    await page.locator("#notes li .title", { hasText: title }).first().waitFor({ timeout: WAIT });
  }
  report.titles = await page.$$eval("#notes li .title", (items) => items.map((i) => i.textContent));
} catch (error) {
  report.failure = String(error && error.stack ? error.stack : error);
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
console.log(JSON.stringify(report));
